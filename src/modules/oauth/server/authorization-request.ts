import { parseScopeParameter } from '../domain/oauth-scopes';
import { isValidCodeChallenge } from '../domain/pkce';
import { resourceProblem } from '../domain/resource-indicator';
import { matchesRegisteredUri } from '../domain/redirect-uri';
import type { ClientRow } from './clients';

/** The parameters of GET /oauth/authorize that the pages carry along as hidden fields. */
export const AUTHORIZE_PARAMS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
  'resource',
] as const;

export interface AuthorizationRequest {
  client: ClientRow;
  redirectUri: string;
  scopes: string[];
  state: string | undefined;
  codeChallenge: string | null;
  /** Hidden fields for the next form. */
  params: Record<string, string>;
}

/**
 * The outcome of checking an authorization request (RFC 6749 §4.1.1, §4.1.2.1): a request
 * naming an unknown client or a redirect URI that is not registered is shown as an error
 * page and never redirected to (`page`); any other problem is sent back to the client at
 * its redirect URI (`redirect`).
 */
export type Checked =
  | { ok: true; request: AuthorizationRequest }
  | { ok: false; page: string }
  | { ok: false; redirect: { uri: string; state: string | undefined; error: string; description: string } };

function single(raw: Record<string, unknown>, name: string): string | undefined | null {
  const v = raw[name];
  if (v === undefined || v === '') return undefined;
  return typeof v === 'string' && v.length <= 4096 ? v : null;
}

export function checkAuthorizationRequest(
  raw: Record<string, unknown>,
  client: ClientRow | undefined,
  issuer: string,
): Checked {
  const clientId = single(raw, 'client_id');
  if (!clientId || !client) return { ok: false, page: 'The application (client_id) is unknown.' };
  const redirectUri = single(raw, 'redirect_uri');
  if (!redirectUri) return { ok: false, page: 'The request has no redirect_uri.' };
  if (!matchesRegisteredUri(redirectUri, client.redirect_uris))
    return { ok: false, page: 'The redirect_uri is not registered for this application.' };
  const state = single(raw, 'state');
  const fail = (error: string, description: string): Checked => ({
    ok: false,
    redirect: { uri: redirectUri, state: state ?? undefined, error, description },
  });
  if (state === null) return fail('invalid_request', 'state: must be given once');
  for (const name of AUTHORIZE_PARAMS)
    if (single(raw, name) === null) return fail('invalid_request', `${name}: must be given once`);
  if (single(raw, 'response_type') !== 'code')
    return fail('unsupported_response_type', 'response_type: only code is supported');
  const resource = single(raw, 'resource');
  const wrongTarget = resource ? resourceProblem(resource, issuer) : undefined;
  if (wrongTarget) return fail('invalid_target', wrongTarget);
  const scopeParam = single(raw, 'scope');
  const scopes = scopeParam ? parseScopeParameter(scopeParam) : client.scopes;
  if (!scopes) return fail('invalid_scope', 'scope: unknown or malformed scope');
  const outside = scopes.filter((s) => !client.scopes.includes(s));
  if (outside.length)
    return fail('invalid_scope', `scope: the app is not registered for ${outside.join(', ')}`);
  const challenge = single(raw, 'code_challenge');
  const method = single(raw, 'code_challenge_method');
  if (challenge) {
    if (method !== 'S256')
      return fail('invalid_request', 'code_challenge_method: only S256 is supported (plain is refused)');
    if (!isValidCodeChallenge(challenge)) return fail('invalid_request', 'code_challenge: malformed');
  } else {
    if (method) return fail('invalid_request', 'code_challenge: required with code_challenge_method');
    if (client.client_type === 'public')
      return fail('invalid_request', 'code_challenge: required for public clients (PKCE, S256)');
  }
  const params: Record<string, string> = {};
  for (const name of AUTHORIZE_PARAMS) {
    const v = single(raw, name);
    if (typeof v === 'string') params[name] = v;
  }
  return {
    ok: true,
    request: {
      client,
      redirectUri,
      scopes,
      state: state ?? undefined,
      codeChallenge: challenge ?? null,
      params,
    },
  };
}

/** The redirect URI with the response parameters added to its query (RFC 6749 §4.1.2; RFC 9207 iss). */
export function redirectWith(uri: string, params: Record<string, string | undefined>): string {
  const url = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.append(k, v);
  return url.toString();
}
