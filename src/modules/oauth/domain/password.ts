import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { ValidationError } from '../../../core/http/domain-errors';

export const PASSWORD_MIN_LENGTH = 12;
/** Bounded so that a huge "password" cannot make scrypt's input costly. */
export const PASSWORD_MAX_LENGTH = 256;

/**
 * scrypt (memory-hard) at N=2^15, r=8, p=1: 32 MiB and tens of milliseconds per hash,
 * above OWASP's minimum. The parameters travel in the hash, so they can be raised later
 * without invalidating stored ones.
 */
const PARAMS = { N: 32768, r: 8, p: 1 };
const KEY_LENGTH = 32;
const MAXMEM = 64 * 1024 * 1024;

/** Length counted in code points, so a password of emoji is measured as typed. */
export function checkPassword(password: unknown, field = 'newPassword'): string {
  if (typeof password !== 'string') throw new ValidationError(`${field}: must be a string`);
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH)
    throw new ValidationError(`${field}: must be at least ${PASSWORD_MIN_LENGTH} characters`);
  if (length > PASSWORD_MAX_LENGTH)
    throw new ValidationError(`${field}: must be at most ${PASSWORD_MAX_LENGTH} characters`);
  if (!password.trim()) throw new ValidationError(`${field}: must not be blank`);
  return password;
}

function derive(password: string, salt: Buffer, N: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { N, r, p, maxmem: MAXMEM }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

/** `scrypt$N$r$p$<salt>$<key>`, base64url. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS.N, PARAMS.r, PARAMS.p);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join(
    '$',
  );
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  const expected = Buffer.from(parts[5], 'base64url');
  const key = await derive(password, Buffer.from(parts[4], 'base64url'), N, r, p);
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A hash of nothing anyone knows: unknown accounts cost the same time as known ones. */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(24).toString('base64url'));
  return decoy;
}
