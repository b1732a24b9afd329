import { parsePhoneNumberFromString } from 'libphonenumber-js';

/**
 * A phone number given in international form, as E.164 (libphonenumber-js); undefined when
 * the text is not one. The whole text must be the number: libphonenumber's default finds a
 * number inside any text ("call me +14155550100 now", "+14155550100abc") and drops an
 * extension ("+14155550100 ext. 12"), which would store another number than the one given,
 * or one no SMS or call can reach as written. Formatting (spaces, dots, dashes, brackets) is
 * fine.
 */
export function e164Of(raw: string): string | undefined {
  const parsed = parsePhoneNumberFromString(raw.trim(), { extract: false });
  if (!parsed || parsed.ext !== undefined || !parsed.isPossible()) return undefined;
  return parsed.number;
}
