import { ValidationError } from '../../../core/http/domain-errors';

export const REDIRECT_URI_MAX = 2000;
export const REDIRECT_URIS_MAX_COUNT = 10;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]']);

/**
 * Redirect URIs an app may register: absolute `https` URLs, or `http` to the loopback
 * address literals for native apps (RFC 8252 §7.3; `localhost` is not accepted, §8.3).
 * No fragment (RFC 6749 §3.1.2), no credentials in the URL. Returns the reason a URI is
 * refused, or undefined when it is acceptable.
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
  if (url.username || url.password) return 'must not contain credentials';
  if (url.protocol === 'https:') return url.hostname ? undefined : 'must name a host';
  if (url.protocol === 'http:') {
    if (LOOPBACK_HOSTS.has(url.hostname)) return undefined;
    return 'http is allowed only for the loopback addresses 127.0.0.1 and [::1]';
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

function isLoopback(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

/**
 * Whether `given` matches a registered URI: exactly (RFC 9700 §4.1.3), except that a
 * loopback URI matches on any port (RFC 8252 §7.3: native apps take an ephemeral port).
 */
export function matchesRegisteredUri(given: string, registered: readonly string[]): boolean {
  if (registered.includes(given)) return true;
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    return false;
  }
  // Credentials are refused at registration; a given URI must not add them either (the
  // port-free comparison below would otherwise ignore them).
  if (!isLoopback(url) || given.includes('#') || url.username || url.password) return false;
  const withoutPort = (u: URL): string => `${u.protocol}//${u.hostname}${u.pathname}${u.search}`;
  return registered.some((r) => {
    const reg = new URL(r);
    return isLoopback(reg) && withoutPort(reg) === withoutPort(url);
  });
}
