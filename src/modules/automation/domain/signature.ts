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
  const stripe = secrets.map(
    (s) => `v1=${createHmac('sha256', Buffer.from(s, 'utf8')).update(`${timestamp}.${body}`).digest('hex')}`,
  );
  const standard = secrets.map(
    (s) =>
      `v1,${createHmac('sha256', standardWebhooksKey(s)).update(`${webhookId}.${timestamp}.${body}`).digest('base64')}`,
  );
  return {
    'x-webhook-signature': [`t=${timestamp}`, ...stripe].join(','),
    'webhook-signature': standard.join(' '),
  };
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
