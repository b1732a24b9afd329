import { createHmac, randomBytes } from 'node:crypto';

/**
 * The headers that let a receiver trust a delivery (DESIGN.md, "Decisions where the spec
 * is silent"): Stripe-style `X-Webhook-Signature: t=<unix seconds>,v1=<hex>` over
 * "<t>.<body>" keyed with the secret's UTF-8 bytes, and the Standard Webhooks
 * `webhook-signature: v1,<base64>` over "<id>.<t>.<body>" keyed with the bytes after
 * `whsec_` (base64-decoded) or else the secret's UTF-8 bytes. During a rotation's overlap
 * both secrets sign: two `v1=` in the first header, two space-separated `v1,` in the second.
 */
export function signatureHeaders(
  secrets: readonly string[],
  webhookId: string,
  timestamp: number,
  body: string,
): Record<string, string> {
  if (!secrets.length) return {};
  // The body is fed after its prefix, not concatenated to it: no copy of it per signature.
  const stripe = secrets.map(
    (s) => `v1=${createHmac('sha256', keysOf(s).stripe).update(`${timestamp}.`).update(body).digest('hex')}`,
  );
  const standard = secrets.map(
    (s) =>
      `v1,${createHmac('sha256', keysOf(s).standard).update(`${webhookId}.${timestamp}.`).update(body).digest('base64')}`,
  );
  return {
    'x-webhook-signature': [`t=${timestamp}`, ...stripe].join(','),
    'webhook-signature': standard.join(' '),
  };
}

/** Both keys of a secret, decoded once per secret (bounded: a process holds few). */
const keyCache = new Map<string, { stripe: Buffer; standard: Buffer }>();
function keysOf(secret: string): { stripe: Buffer; standard: Buffer } {
  let keys = keyCache.get(secret);
  if (!keys) {
    keys = { stripe: Buffer.from(secret, 'utf8'), standard: standardWebhooksKey(secret) };
    if (keyCache.size >= 1000) keyCache.clear();
    keyCache.set(secret, keys);
  }
  return keys;
}

/** Standard base64 (the alphabet the Standard Webhooks libraries decode), padded or not. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;

/**
 * Why a secret cannot key Standard Webhooks signatures, or null. A `whsec_` secret is keyed
 * by the base64 after the prefix; Node's decoder skips what is not base64, so a secret of
 * other characters would sign with a key of a few bytes, or none (an HMAC anyone can
 * compute), while the `standardwebhooks` library refuses to load it.
 */
export function signingSecretProblem(secret: string): string | null {
  if (!secret.startsWith('whsec_')) return null;
  const encoded = secret.slice('whsec_'.length);
  if (!encoded || !BASE64.test(encoded))
    return 'a whsec_ secret must be base64 (A-Z, a-z, 0-9, +, /) after the prefix';
  return null;
}

export function standardWebhooksKey(secret: string): Buffer {
  return secret.startsWith('whsec_')
    ? Buffer.from(secret.slice('whsec_'.length), 'base64')
    : Buffer.from(secret, 'utf8');
}

/** A new signing secret in the Standard Webhooks form (`whsec_` + base64 of 24 random bytes). */
export function generateSigningSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** The associated data binding a sealed signing secret to its rule (core/crypto/secret-box.ts). */
export const ruleSecretContext = (ruleId: number): string => `eventrule:${ruleId}`;
