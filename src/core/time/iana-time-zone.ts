/**
 * IANA time zones: those the runtime lists (its ICU data), `UTC` (which
 * Intl.supportedValuesOf leaves out although every runtime accepts it), and other names
 * of the tz database the runtime resolves (links such as `Asia/Kolkata` beside ICU's
 * `Asia/Calcutta`, `Etc/GMT+5`). Something like `Mars/Olympus` is refused; so are UTC
 * offsets (`+05:00`), which newer runtimes accept as a time zone but are not IANA names.
 */
const KNOWN = new Set<string>([...Intl.supportedValuesOf('timeZone'), 'UTC']);
const NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;

export function isIanaTimeZone(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > 64) return false;
  if (KNOWN.has(value)) return true;
  if (!NAME.test(value)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

export const TIMEZONE_RULE = 'must be an IANA time zone such as Europe/Paris or UTC';
