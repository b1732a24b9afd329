import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { ValidationError } from '../http/domain-errors';

/** Longer text is no phone number (and is not handed to the parser). */
const MAX_PHONE_TEXT = 64;

/** What a phone number field takes, for a 400's detail after the field's name. */
export const PHONE_NUMBER_RULE =
  'must be a phone number in international form and nothing else (no extension), e.g. +14155550123';

/**
 * A phone number given in international form, as E.164 (libphonenumber-js); undefined when
 * the text is not one. The whole text must be the number: libphonenumber's default finds a
 * number inside any text ("call me +14155550100 now", "+14155550100abc") and drops an
 * extension ("+14155550100 ext. 12"), which would store another number than the one given,
 * or one no SMS or call can reach as written. Formatting (spaces, dots, dashes, brackets) is
 * fine. International form is required: the service has no default country to read a
 * national number in. `isPossible` (length rules) rather than `isValid` (number-range
 * tables), so fictional 555 numbers used in testing pass while garbage does not. The one
 * parser of every phone number the service takes (messaging's numbers, identity's member
 * phone, records' `phone` fields), so one number written two ways is one value everywhere.
 */
export function e164Of(raw: string): string | undefined {
  if (raw.length > MAX_PHONE_TEXT) return undefined;
  const parsed = parsePhoneNumberFromString(raw.trim(), { extract: false });
  if (!parsed || parsed.ext !== undefined || !parsed.isPossible()) return undefined;
  return parsed.number;
}

/** e164Of, or a 400 naming `field` (never echoing the text given). */
export function phoneNumberOf(raw: string, field: string): string {
  const number = e164Of(raw);
  if (number === undefined) throw new ValidationError(`${field}: ${PHONE_NUMBER_RULE}`);
  return number;
}
