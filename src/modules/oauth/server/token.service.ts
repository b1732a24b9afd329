import { Inject, Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { v7 as uuidv7 } from 'uuid';
import { DataSource, EntityManager } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { RevokeOAuthGrantCommand } from '../commands/oauth-grant.commands';
import type { GrantRevocationReason } from '../domain/oauth.events';
import { narrowToApp, parseScopeParameter } from '../domain/oauth-scopes';
import { verifierMatches } from '../domain/pkce';
import { matchesRegisteredUri } from '../domain/redirect-uri';
import { ACCESS_TOKEN_PREFIX, hashSecret, newSecret, REFRESH_TOKEN_PREFIX } from '../domain/secrets';
import type { ClientRow } from './clients';
import { OAuthError } from './oauth-error';

export const ACCESS_TOKEN_TTL_S = 3600;
export const REFRESH_TOKEN_TTL_S = 30 * 24 * 3600;
/** RFC 6749 §4.1.2: "A maximum authorization code lifetime of 10 minutes is RECOMMENDED." */
export const CODE_TTL_S = 600;
/** Expired codes, tokens and sessions are deleted a day after they expire, at most this often per process. */
export const PRUNE_INTERVAL_MS = 10 * 60_000;

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

export interface Introspection {
  active: boolean;
  [claim: string]: unknown;
}

interface TokenRow {
  id: string;
  kind: 'access' | 'refresh';
  grant_id: string;
  app_id: string;
  scopes: string[];
  created_at: Date;
  expires_at: Date;
  used_at: Date | null;
  revoked_at: Date | null;
}

const invalidGrant = (why: string): OAuthError => new OAuthError('invalid_grant', why);
const NOTHING_LEFT = 'The app no longer allows any of the granted scopes';

/**
 * Codes and tokens: issued into tables holding their SHA-256 only, used once by one
 * conditional write under a row lock. A second use of a code or of a rotated refresh
 * token revokes the grant (RFC 6749 §4.1.2 and §10.4, RFC 9700 §4.14.2): the tokens of
 * the first use stop, and so does the whole refresh family.
 */
@Injectable()
export class TokenService {
  constructor(
    private readonly db: DataSource,
    private readonly commands: CommandBus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async issueCode(
    grantId: string,
    appId: string,
    redirectUri: string,
    challenge: string | null,
  ): Promise<string> {
    const { secret, hash } = newSecret();
    await this.db.query(
      `INSERT INTO oauth_codes (code_hash, grant_id, app_id, redirect_uri, code_challenge, expires_at)
       VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`,
      [hash, grantId, appId, redirectUri, challenge, CODE_TTL_S],
    );
    return secret;
  }

  async exchangeCode(
    client: ClientRow,
    code: string,
    redirectUri: string | undefined,
    verifier: string | undefined,
  ): Promise<TokenResponse> {
    let reused: string | undefined;
    try {
      return await this.db.transaction(async (em) => {
        const rows = (await em.query(
          `SELECT c.grant_id, c.app_id, c.redirect_uri, c.code_challenge, c.used_at, c.expires_at <= now() AS expired,
                  g.scopes, g.revoked_at
             FROM oauth_codes c JOIN oauth_grants g ON g.id = c.grant_id
            WHERE c.code_hash = $1 FOR UPDATE OF c`,
          [hashSecret(code)],
        )) as {
          grant_id: string;
          app_id: string;
          redirect_uri: string;
          code_challenge: string | null;
          used_at: Date | null;
          expired: boolean;
          scopes: string[];
          revoked_at: Date | null;
        }[];
        const c = rows[0];
        if (!c || c.app_id !== client.id) throw invalidGrant('The authorization code is invalid');
        if (c.used_at) {
          reused = c.grant_id;
          throw invalidGrant('The authorization code was already used; the tokens issued for it are revoked');
        }
        if (c.expired) throw invalidGrant('The authorization code has expired');
        if (c.revoked_at) throw invalidGrant('The grant was revoked');
        if (redirectUri !== c.redirect_uri)
          throw invalidGrant('redirect_uri: must be the one sent in the authorization request');
        // The app may have dropped that URI since (a leaked or retired callback): a code
        // still pending for it is dead, as a code for scopes the app no longer holds is.
        if (!matchesRegisteredUri(c.redirect_uri, client.redirect_uris))
          throw invalidGrant('redirect_uri: no longer registered for this application');
        if (c.code_challenge) {
          if (!verifier) throw invalidGrant('code_verifier: required (PKCE)');
          if (!verifierMatches(verifier, c.code_challenge))
            throw invalidGrant('code_verifier: does not match');
        } else if (verifier !== undefined) {
          // RFC 9700 §2.1.1: a verifier without a challenge could be a downgrade attack.
          throw invalidGrant('code_verifier: the authorization request had no code_challenge');
        }
        const scopes = narrowToApp(c.scopes, client.scopes);
        if (!scopes.length) throw invalidGrant(NOTHING_LEFT);
        await em.query(`UPDATE oauth_codes SET used_at = now() WHERE code_hash = $1`, [hashSecret(code)]);
        return this.issueTokens(em, c.grant_id, client.id, scopes);
      });
    } finally {
      if (reused) await this.revokeGrant(reused, 'code_reused');
    }
  }

  async refresh(client: ClientRow, refreshToken: string, scope: string | undefined): Promise<TokenResponse> {
    let reused: string | undefined;
    try {
      return await this.db.transaction(async (em) => {
        const t = await this.lockedToken(em, refreshToken, 'refresh');
        if (!t || t.app_id !== client.id) throw invalidGrant('The refresh token is invalid');
        if (t.used_at) {
          reused = t.grant_id;
          throw invalidGrant('The refresh token was already used; every token of its grant is revoked');
        }
        if (t.revoked_at || t.grant_revoked) throw invalidGrant('The refresh token was revoked');
        if (t.expires_at.getTime() <= Date.now()) throw invalidGrant('The refresh token has expired');
        // The app may have been narrowed since this token was issued: never more than it allows now.
        const held = narrowToApp(t.scopes, client.scopes);
        if (!held.length) throw invalidGrant(NOTHING_LEFT);
        let scopes = held;
        if (scope !== undefined) {
          const asked = parseScopeParameter(scope);
          if (!asked) throw new OAuthError('invalid_scope', 'scope: unknown or malformed scope');
          const wider = asked.filter((s) => !held.includes(s));
          if (wider.length)
            throw new OAuthError(
              'invalid_scope',
              `scope: may only narrow the grant; not granted: ${wider.join(', ')}`,
            );
          scopes = asked;
        }
        await em.query(`UPDATE oauth_tokens SET used_at = now() WHERE id = $1`, [t.id]);
        return this.issueTokens(em, t.grant_id, client.id, scopes);
      });
    } finally {
      if (reused) await this.revokeGrant(reused, 'refresh_token_reused');
    }
  }

  /**
   * RFC 7009: revoking either token of a grant ends the grant (the access tokens of a
   * refresh token, §2.1, and, as allowed, the refresh token of an access token). A token
   * that is unknown, already dead or another client's is answered the same and left alone.
   */
  async revoke(client: ClientRow, token: string): Promise<void> {
    const t = await this.findToken(token);
    if (!t || t.app_id !== client.id || t.grant_revoked) return;
    await this.revokeGrant(t.grant_id, 'revoked');
  }

  /** RFC 7662: only the asking client's own live tokens are active; anything else is `{active: false}`. */
  async introspect(client: ClientRow, token: string): Promise<Introspection> {
    const t = await this.findToken(token);
    const scopes = t ? narrowToApp(t.scopes, client.scopes) : [];
    if (
      !t ||
      t.app_id !== client.id ||
      t.grant_revoked ||
      t.revoked_at ||
      t.used_at ||
      t.expires_at.getTime() <= Date.now() ||
      !scopes.length
    )
      return { active: false };
    return {
      active: true,
      scope: scopes.join(' '),
      client_id: client.client_id,
      token_type: t.kind === 'access' ? 'Bearer' : 'refresh_token',
      exp: Math.floor(t.expires_at.getTime() / 1000),
      iat: Math.floor(t.created_at.getTime() / 1000),
      sub: t.account_uuid,
      iss: this.config.publicBaseUrl,
      workspace_id: t.workspace_id,
    };
  }

  /**
   * Deletes what can no longer be used or told apart: codes, tokens and browser sessions a
   * day past their expiry. A used refresh token is kept until then, so its reuse is still
   * detected for as long as it could have been valid.
   */
  async prune(): Promise<number> {
    let deleted = 0;
    for (const table of ['oauth_codes', 'oauth_tokens', 'oauth_sessions']) {
      const [, count] = (await this.db.query(
        `DELETE FROM ${table} WHERE expires_at < now() - interval '1 day'`,
      )) as [unknown, number];
      deleted += count;
    }
    return deleted;
  }

  private async revokeGrant(grantId: string, reason: GrantRevocationReason): Promise<void> {
    await this.commands.execute(new RevokeOAuthGrantCommand(grantId, reason));
  }

  private async issueTokens(
    em: EntityManager,
    grantId: string,
    appId: string,
    scopes: string[],
  ): Promise<TokenResponse> {
    const access = newSecret(ACCESS_TOKEN_PREFIX);
    const refresh = newSecret(REFRESH_TOKEN_PREFIX);
    await em.query(
      `INSERT INTO oauth_tokens (id, token_hash, kind, grant_id, app_id, scopes, created_at, expires_at) VALUES
         ($1, $2, 'access', $5, $6, $7, now(), now() + make_interval(secs => $8)),
         ($3, $4, 'refresh', $5, $6, $7, now(), now() + make_interval(secs => $9))`,
      [
        uuidv7(),
        access.hash,
        uuidv7(),
        refresh.hash,
        grantId,
        appId,
        scopes,
        ACCESS_TOKEN_TTL_S,
        REFRESH_TOKEN_TTL_S,
      ],
    );
    return {
      access_token: access.secret,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_TTL_S,
      refresh_token: refresh.secret,
      scope: scopes.join(' '),
    };
  }

  private async lockedToken(
    em: EntityManager,
    token: string,
    kind: 'refresh',
  ): Promise<(TokenRow & { grant_revoked: boolean }) | undefined> {
    const rows = (await em.query(
      `SELECT t.*, g.revoked_at IS NOT NULL AS grant_revoked
         FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id
        WHERE t.token_hash = $1 AND t.kind = $2 FOR UPDATE OF t`,
      [hashSecret(token), kind],
    )) as (TokenRow & { grant_revoked: boolean })[];
    return rows[0];
  }

  private async findToken(
    token: string,
  ): Promise<
    (TokenRow & { grant_revoked: boolean; account_uuid: string; workspace_id: string }) | undefined
  > {
    if (token.length > 200) return undefined;
    const rows = (await this.db.query(
      `SELECT t.*, g.revoked_at IS NOT NULL AS grant_revoked, g.account_uuid, g.workspace_id
         FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id
        WHERE t.token_hash = $1`,
      [hashSecret(token)],
    )) as (TokenRow & { grant_revoked: boolean; account_uuid: string; workspace_id: string })[];
    return rows[0];
  }
}
