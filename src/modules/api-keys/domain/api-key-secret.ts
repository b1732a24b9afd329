import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Secrets look like `wsk_<prefix>_<secret>`: the prefix (public, 12 hex chars) finds
 * the key; only a SHA-256 of the whole secret is stored. The secret has 256 bits of
 * entropy, so a fast hash is enough (no password stretching needed).
 */
export function newApiKeySecret(): { prefix: string; secret: string; hash: string } {
  const prefix = randomBytes(6).toString('hex');
  const secret = `wsk_${prefix}_${randomBytes(32).toString('base64url')}`;
  return { prefix, secret, hash: hashSecret(secret) };
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function prefixOf(token: string): string | undefined {
  return /^wsk_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$/.exec(token)?.[1];
}

export function secretMatches(token: string, storedHash: string): boolean {
  const a = Buffer.from(hashSecret(token), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
