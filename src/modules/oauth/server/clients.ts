import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { ClientType } from '../domain/oauth.events';
import { secretMatches } from '../domain/secrets';
import { invalidClient, OAuthError, param } from './oauth-error';

export interface ClientRow {
  id: string;
  client_id: string;
  account_uuid: string | null;
  name: string;
  redirect_uris: string[];
  scopes: string[];
  client_type: ClientType;
  secret_hash: string | null;
}

/** Apps as the authorization server sees them: by client id, deleted ones absent. */
@Injectable()
export class ClientDirectory {
  constructor(private readonly db: DataSource) {}

  async find(clientId: string | undefined): Promise<ClientRow | undefined> {
    if (!clientId || clientId.length > 100) return undefined;
    const rows = (await this.db.query(
      `SELECT id, client_id, account_uuid, name, redirect_uris, scopes, client_type, secret_hash
         FROM oauth_apps WHERE client_id = $1 AND deleted_at IS NULL`,
      [clientId],
    )) as ClientRow[];
    return rows[0];
  }

  /**
   * Client authentication at the token, revocation and introspection endpoints (RFC 6749
   * §2.3.1): HTTP Basic or `client_id` + `client_secret` in the body, never both; a public
   * client names itself with `client_id` and has no secret. Any failure is invalid_client.
   */
  async authenticate(body: Record<string, unknown>, authorization: string | undefined): Promise<ClientRow> {
    const basic = parseBasic(authorization);
    const bodySecret = param(body, 'client_secret');
    const bodyId = param(body, 'client_id');
    if (basic && bodySecret !== undefined)
      throw new OAuthError(
        'invalid_request',
        'Use one client authentication method, not HTTP Basic and client_secret',
      );
    if (basic && bodyId !== undefined && bodyId !== basic.id)
      throw new OAuthError('invalid_request', 'client_id: differs from the HTTP Basic client');
    const clientId = basic?.id ?? bodyId;
    const client = await this.find(clientId);
    if (!client) throw invalidClient();
    const secret = basic ? basic.secret : bodySecret;
    if (client.client_type === 'public') {
      if (secret) throw invalidClient('A public client has no secret');
      return client;
    }
    if (!secret || !secretMatches(secret, client.secret_hash)) throw invalidClient();
    return client;
  }
}

/** `Basic base64(urlencode(id) ":" urlencode(secret))`; undefined when absent or not Basic. */
export function parseBasic(header: string | undefined): { id: string; secret: string } | undefined {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!m) {
    if (header && /^Basic\b/i.test(header)) throw invalidClient('Malformed HTTP Basic credentials');
    return undefined;
  }
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw invalidClient('Malformed HTTP Basic credentials');
  try {
    const unescape = (s: string): string => decodeURIComponent(s.replace(/\+/g, ' '));
    return { id: unescape(decoded.slice(0, colon)), secret: unescape(decoded.slice(colon + 1)) };
  } catch {
    throw invalidClient('Malformed HTTP Basic credentials');
  }
}
