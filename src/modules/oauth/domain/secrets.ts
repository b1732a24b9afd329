import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Secrets the authorization server hands out, each with 256 bits of entropy, so a fast
 * hash is enough to store them (no stretching): access tokens `wso_`, refresh tokens
 * `wsr_`, client secrets `wss_`, authorization codes without prefix. Only the SHA-256 is
 * stored; tokens are found by it.
 */
export const ACCESS_TOKEN_PREFIX = 'wso_';
export const REFRESH_TOKEN_PREFIX = 'wsr_';
export const CLIENT_SECRET_PREFIX = 'wss_';

export function newSecret(prefix = ''): { secret: string; hash: string } {
  const secret = `${prefix}${randomBytes(32).toString('base64url')}`;
  return { secret, hash: hashSecret(secret) };
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function secretMatches(given: string, storedHash: string | null): boolean {
  if (!storedHash) return false;
  const a = Buffer.from(hashSecret(given), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Public client identifiers: random, unguessable, not secret. */
export function newClientId(): string {
  return `app_${randomBytes(16).toString('hex')}`;
}

export function looksLikeToken(token: string, prefix: string): boolean {
  return token.startsWith(prefix) && /^[A-Za-z0-9_-]{40,100}$/.test(token);
}
