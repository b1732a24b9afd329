import { ValidationError } from '../../../core/http/domain-errors';

export const REDIRECT_URI_MAX = 2000;
export const REDIRECT_URIS_MAX_COUNT = 10;

/**
 * Loopback hosts a native client may listen on with plain `http` (RFC 8252 §7.3): the IPv4
 * and IPv6 literals, and `localhost`. RFC 8252 §8.3 calls `localhost` NOT RECOMMENDED (the
 * name might not resolve to the loopback interface, or a firewall might treat it apart),
 * but allows it, and it is what MCP clients register (Claude Desktop, MCP Inspector:
 * `http://localhost:<port>/callback`); those risks are the client's own machine's, and the
 * authorization server only ever sends the browser there. Exactly these host names: not
 * `foo.localhost`, not `localhost.` (the URL parser lowercases `LOCALHOST`).
 */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * Redirect URIs an app may register (`POST /me/apps`, `PUT /me/apps/{id}` and
 * `POST /oauth/register` alike, through the app's decider): absolute `https` URLs, or
 * `http` to a loopback host for native apps (above). No fragment (RFC 6749 §3.1.2), no
 * credentials in the URL. Returns the reason a URI is refused, or undefined when it is
 * acceptable.
 */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri.length > REDIRECT_URI_MAX) return `must be at most ${REDIRECT_URI_MAX} characters`;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URL';
  }
  if (uri.includes('#')) return 'must not contain a fragment';
  // The parser forgives `https:/host` and `https:///host` (it reads a host out of the path);
  // what is registered is matched as text, so it must name its host as written.
  if (/^https?:/i.test(uri) && !/^https?:\/\/[^/\\]/i.test(uri))
    return 'must name its host right after the scheme (https://host/...)';
  if (url.username || url.password) return 'must not contain credentials';
  if (url.protocol === 'https:') return url.hostname ? undefined : 'must name a host';
  if (url.protocol === 'http:') {
    if (LOOPBACK_HOSTS.has(url.hostname)) return undefined;
    return 'http is allowed only for the loopback hosts 127.0.0.1, [::1] and localhost';
  }
  return 'must use https (or http to a loopback address)';
}

/** Checks a list of redirect URIs (field `field`), deduplicated, in order. */
export function checkRedirectUris(uris: readonly string[], field = 'redirectUris'): string[] {
  if (!Array.isArray(uris) || !uris.length) throw new ValidationError(`${field}: must list at least one URI`);
  if (uris.length > REDIRECT_URIS_MAX_COUNT)
    throw new ValidationError(`${field}: must list at most ${REDIRECT_URIS_MAX_COUNT} URIs`);
  uris.forEach((u, i) => {
    const problem = typeof u === 'string' ? redirectUriProblem(u) : 'must be a string';
    if (problem) throw new ValidationError(`${field}.${i}: ${problem}`);
  });
  return [...new Set(uris)];
}

/**
 * A loopback URI written as `http://<loopback host>[:port][path][?query]`, with its port
 * taken out: the text two loopback URIs must share to match. Textual, like the exact match
 * (RFC 9700 §4.1.3): no normalization (case, dot segments, default port) makes two
 * different strings equal; `user@` or another host after the loopback one does not fit.
 */
const LOOPBACK_URI = /^(http:\/\/(?:127\.0\.0\.1|\[::1\]|localhost))(?::(\d{1,5}))?([/?][^#]*)?$/i;

function portless(uri: string): string | undefined {
  const m = LOOPBACK_URI.exec(uri);
  return m ? `${m[1]}${m[3] ?? ''}` : undefined;
}

/**
 * Whether `given` matches a registered URI: exactly (RFC 9700 §4.1.3), except that a
 * loopback URI matches on any port (RFC 8252 §7.3: native apps take an ephemeral port).
 * Only the port varies: the host stays the one registered (`localhost` does not stand for
 * `127.0.0.1`, nor the reverse), as do the path and the query, character for character.
 */
export function matchesRegisteredUri(given: string, registered: readonly string[]): boolean {
  if (registered.includes(given)) return true;
  const key = portless(given);
  if (key === undefined || redirectUriProblem(given) !== undefined) return false;
  return registered.some((r) => portless(r) === key);
}
