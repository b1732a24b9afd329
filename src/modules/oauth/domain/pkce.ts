import { createHash, timingSafeEqual } from 'node:crypto';

/** RFC 7636 §4.1: 43-128 unreserved characters (a challenge of S256 is 43). */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

export function isValidCodeChallenge(challenge: string): boolean {
  return VERIFIER.test(challenge);
}

export function isValidCodeVerifier(verifier: string): boolean {
  return VERIFIER.test(verifier);
}

/** S256: BASE64URL(SHA256(ASCII(code_verifier))) == code_challenge (RFC 7636 §4.6). */
export function verifierMatches(verifier: string, challenge: string): boolean {
  if (!isValidCodeVerifier(verifier)) return false;
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}
