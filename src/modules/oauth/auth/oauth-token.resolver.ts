import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ResolvesCredentialsWithPrefix } from '../../../core/auth/credential-resolvers';
import { Credential, CredentialResolver } from '../../../core/auth/principal';
import { intersectScopes } from '../../../core/auth/scopes';
import { CheckpointFeed } from '../../../core/projections/checkpoint-feed';
import { expandOAuthScopes } from '../domain/oauth-scopes';
import { ACCESS_TOKEN_PREFIX, hashSecret, looksLikeToken } from '../domain/secrets';

/**
 * Events after which a token may have stopped or narrowed: its grant revoked, its app
 * deleted, or its app's scopes changed (a token carries at most the app's current scopes).
 */
const TOKEN_CHANGING_EVENTS = new Set(['OAuthGrantRevoked', 'OAuthAppDeleted', 'OAuthAppUpdated']);

/**
 * OAuth access tokens (`wso_`) as bearer credentials, beside API keys and member tokens:
 * bound to the workspace chosen at consent (another workspace is 404, as for any
 * non-member), with the granted scopes expanded (`data:X` is datatypes:X and records:X,
 * `task:X` is assignments:X) and intersected with the app's current scopes. The guard intersects them with the member's role scopes on
 * every request, so demoting the member narrows every token at once. Any route, /mcp
 * included, that authenticates through core's bearer principal accepts them.
 */
@Injectable()
@ResolvesCredentialsWithPrefix(ACCESS_TOKEN_PREFIX)
export class OAuthTokenCredentialResolver implements CredentialResolver {
  constructor(
    private readonly db: DataSource,
    feed: CheckpointFeed,
  ) {
    feed.invalidateAuthOn((e) => TOKEN_CHANGING_EVENTS.has(e.type));
  }

  async resolve(token: string): Promise<Credential | undefined> {
    if (!looksLikeToken(token, ACCESS_TOKEN_PREFIX)) return undefined;
    const rows = (await this.db.query(
      `SELECT t.id, t.scopes, t.expires_at, g.account_uuid, g.workspace_id::text AS workspace_id, a.client_id,
              a.scopes AS app_scopes
         FROM oauth_tokens t
         JOIN oauth_grants g ON g.id = t.grant_id
         JOIN oauth_apps a ON a.id = t.app_id
        WHERE t.token_hash = $1 AND t.kind = 'access' AND t.revoked_at IS NULL
          AND g.revoked_at IS NULL AND a.deleted_at IS NULL AND t.expires_at > now()`,
      [hashSecret(token)],
    )) as {
      id: string;
      scopes: string[];
      expires_at: Date;
      account_uuid: string;
      workspace_id: string;
      client_id: string;
      app_scopes: string[];
    }[];
    const t = rows[0];
    if (!t) return undefined;
    return {
      kind: 'oauth',
      credentialId: t.id,
      accountUuid: t.account_uuid,
      // The app's current scopes bound every token it issued: narrowing the app narrows them.
      scopes: intersectScopes(expandOAuthScopes(t.scopes), expandOAuthScopes(t.app_scopes)),
      workspaceId: t.workspace_id,
      clientId: t.client_id,
      expiresAt: t.expires_at.getTime(),
    };
  }
}
