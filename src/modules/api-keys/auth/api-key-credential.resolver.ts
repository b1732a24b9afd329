import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ResolvesCredentialsWithPrefix } from '../../../core/auth/credential-resolvers';
import { Credential, CredentialResolver } from '../../../core/auth/principal';
import { JsonLogger } from '../../../core/logging/json-logger';
import { CheckpointFeed } from '../../../core/projections/checkpoint-feed';
import { prefixOf, secretMatches } from '../domain/api-key-secret';

/** A key's last use is written at most this often per process: cheap, and precise enough for "last used". */
export const LAST_USED_RESOLUTION_MS = 60_000;
const MAX_TRACKED_KEYS = 10_000;

/**
 * Resolves API keys by their public prefix, then checks the hash, expiry and revocation.
 * The result is cached in core's AuthCache until the key expires or an ApiKeyRevoked is
 * projected (in any process), so revocation and expiry still apply at once. Workspace scopes are not
 * decided here: the guard intersects the key's scopes with the role's, per request.
 */
@Injectable()
@ResolvesCredentialsWithPrefix('wsk_')
export class ApiKeyCredentialResolver implements CredentialResolver {
  private readonly lastRecorded = new Map<string, number>();

  constructor(
    private readonly db: DataSource,
    private readonly logger: JsonLogger,
    feed: CheckpointFeed,
  ) {
    // Resolved keys are cached (core AuthCache): a revocation must empty the cache.
    feed.invalidateAuthOn((e) => e.type === 'ApiKeyRevoked');
  }

  async resolve(token: string): Promise<Credential | undefined> {
    const prefix = prefixOf(token);
    if (!prefix) return undefined;
    const rows = (await this.db.query(
      `SELECT id, account_uuid, secret_hash, scopes, expires_at, revoked_at FROM api_keys WHERE prefix = $1`,
      [prefix],
    )) as {
      id: string;
      account_uuid: string;
      secret_hash: string;
      scopes: string[];
      expires_at: Date;
      revoked_at: Date | null;
    }[];
    const key = rows[0];
    if (!key || key.revoked_at || key.expires_at.getTime() <= Date.now()) return undefined;
    if (!secretMatches(token, key.secret_hash)) return undefined;
    this.recordUse(key.id);
    return {
      kind: 'api_key',
      credentialId: key.id,
      accountUuid: key.account_uuid,
      scopes: key.scopes,
      expiresAt: key.expires_at.getTime(),
    };
  }

  /** Fire and forget: a failed write costs a stale "last used", never the request. */
  private recordUse(keyId: string): void {
    const now = Date.now();
    const last = this.lastRecorded.get(keyId);
    if (last !== undefined && now - last < LAST_USED_RESOLUTION_MS) return;
    if (this.lastRecorded.size >= MAX_TRACKED_KEYS) this.lastRecorded.clear();
    this.lastRecorded.set(keyId, now);
    this.db
      .query(
        `INSERT INTO api_key_usage (key_id, last_used_at) VALUES ($1, now())
         ON CONFLICT (key_id) DO UPDATE SET last_used_at = excluded.last_used_at`,
        [keyId],
      )
      .catch((err: unknown) => {
        this.lastRecorded.delete(keyId);
        this.logger.event('warn', {
          msg: 'could not record API key use',
          keyId,
          err: err instanceof Error ? err.message : String(err),
        });
      });
  }
}
