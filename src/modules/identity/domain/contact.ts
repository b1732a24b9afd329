import { ValidationError } from '../../../core/http/domain-errors';
import { phoneNumberOf } from '../../../core/text/phone-number';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const MAX_EMAIL = 254;
const MAX_NAME = 200;
const MAX_EXTERNAL_ID = 255;

/** Control and format characters (zero-width spaces, joiners, bidi marks): invisible in an address. */
const INVISIBLE = /[\p{Cc}\p{Cf}]/u;

/**
 * Contact values are normalised before anything compares them, so that uniqueness
 * per workspace means what a person would expect: `Ann@X.com` and `ann@x.com` are one
 * email, `+1 (415) 555-0123` and `+14155550123` one phone. An email is also put in
 * Unicode NFC (RFC 6532 §3.1), so `é` typed as one code point or as `e` + U+0301 is one
 * address, and an address holding an invisible character (U+200B, U+FEFF, a bidi mark)
 * is refused rather than kept as a second, look-alike member.
 */
export function normalizeEmail(raw: string, field: string): string {
  const email = raw.trim().toLowerCase().normalize('NFC');
  if (!email || email.length > MAX_EMAIL || !EMAIL.test(email) || INVISIBLE.test(email))
    throw new ValidationError(`${field}: must be an email address`);
  return email;
}

/**
 * E.164 through core's one phone parser (phoneNumberOf): international form, the whole
 * text the number (words around it or an extension are a 400 naming the field), so a
 * member phone is the number an inbound text comes from, written any way.
 */
export function normalizePhone(raw: string, field: string): string {
  return phoneNumberOf(raw, field);
}

export function normalizeName(raw: string, field: string): string | null {
  const name = raw.trim();
  if (name.length > MAX_NAME) throw new ValidationError(`${field}: must be at most ${MAX_NAME} characters`);
  return name || null;
}

export function normalizeExternalId(raw: string, field: string): string | null {
  const id = raw.trim();
  if (id.length > MAX_EXTERNAL_ID)
    throw new ValidationError(`${field}: must be at most ${MAX_EXTERNAL_ID} characters`);
  return id || null;
}

/** `undefined` stays "not given", `null` means "clear it", a string is normalised. */
export function optional<T>(
  value: string | null | undefined,
  normalise: (v: string) => T | null,
): T | null | undefined {
  if (value === undefined) return undefined;
  if (value === null) return null;
  return normalise(value);
}
