import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Signing secrets at rest: AES-256-GCM under SECRETS_ENCRYPTION_KEY, bound to the rule
 * (the rule id is the associated data), so a sealed secret copied onto another rule does
 * not open. Format `v1.<base64 iv|tag|ciphertext>`; the version leaves room for a key
 * rotation scheme.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key');
  }

  seal(plain: string, ruleId: number): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(`eventrule:${ruleId}`));
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `v1.${Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64')}`;
  }

  open(sealed: string, ruleId: number): string {
    if (!sealed.startsWith('v1.')) throw new Error('Unknown sealed secret format');
    const raw = Buffer.from(sealed.slice(3), 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(`eventrule:${ruleId}`));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}

/** A new signing secret in the Standard Webhooks form (`whsec_` + base64 of 24 random bytes). */
export function generateSigningSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}
