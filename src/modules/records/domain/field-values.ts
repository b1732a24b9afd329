import { ValidationError } from '../../../core/http/domain-errors';
import { parseDateTime } from '../../../core/http/pagination';
import { e164Of, PHONE_NUMBER_RULE } from '../../../core/text/phone-number';
import type { DataField } from './data-type.events';

/** A stored value: JSON scalars only, normalised per field type. */
export type FieldValue = string | number | boolean;
export type FieldValues = Record<string, FieldValue>;

export const TEXT_MAX = 10_000;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const EMAIL_MAX = 254;
const URL_MAX = 2048;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * Field values are PHI: a refusal names the field and the rule, never the value (details
 * reach logs and clients' error trackers).
 */
function invalid(path: string, rule: string): ValidationError {
  return new ValidationError(`${path}: ${rule}`);
}

function isRealDate(value: string): boolean {
  const m = DATE.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/**
 * The letter case `search` and `field.<slug>` filters ignore, folded alike in JavaScript
 * (a new record's index columns, the query's value) and in SQL (`foldCaseSql`: the columns
 * recomputed when a record or its type changes). PostgreSQL's lower() maps each character
 * alone (İ → i, Σ → σ) where toLowerCase applies Unicode's special casing (İ → i̇, a final
 * Σ → ς): the two differed, and a record found before its first change was not after it.
 * ς is folded to σ on both sides, so a word typed with its final sigma finds it too.
 */
export const foldCase = (text: string): string =>
  text
    .replace(/\u0130/g, 'i')
    .toLowerCase()
    .replace(/\u03c2/g, '\u03c3');
export const foldCaseSql = (expr: string): string => `translate(lower(${expr}), 'ς', 'σ')`;

const STORED_DATE_TIME = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/**
 * A datetime value as the index holds it (and a `field.<slug>=` filter compares it): its
 * instant in UTC, `YYYY-MM-DDTHH:MM:SS[.fraction]Z`, the fraction as sent less its trailing
 * zeros, so `2024-05-01T12:00:00+02:00` and `2024-05-01T10:00:00.000Z` are one value. The
 * record keeps the value as sent. `datetimeIndexFormSql` computes the same in SQL; a string
 * not in the stored form (none is) stays as it is on both sides.
 */
export function datetimeIndexForm(value: string): string {
  const m = STORED_DATE_TIME.exec(value);
  if (!m) return value;
  const [, wholeSeconds, fraction = '', zone] = m;
  const ms = Date.parse(`${wholeSeconds}${zone}`);
  if (Number.isNaN(ms)) return value;
  const digits = fraction.replace(/0+$/, '');
  return `${new Date(ms).toISOString().slice(0, 19)}${digits ? `.${digits}` : ''}Z`;
}
export const datetimeIndexFormSql = (expr: string): string => `(CASE
  WHEN ${expr} ~ '${STORED_DATE_TIME.source}'
  THEN to_char(regexp_replace(${expr}, '\\.\\d+', '')::timestamptz AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS')
       || COALESCE(rtrim(rtrim(substring(${expr} from '\\.\\d+'), '0'), '.'), '') || 'Z'
  ELSE ${expr} END)`;

/** One value checked and normalised for its field (phone numbers to E.164, emails lower-cased). */
export function normaliseValue(field: DataField, raw: unknown, path: string): FieldValue {
  switch (field.fieldType) {
    case 'text': {
      if (typeof raw !== 'string') throw invalid(path, 'must be a string');
      if (raw.length > TEXT_MAX) throw invalid(path, `must be at most ${TEXT_MAX} characters`);
      return raw;
    }
    case 'email': {
      if (typeof raw !== 'string') throw invalid(path, 'must be a string');
      const email = raw.trim().toLowerCase();
      if (email.length > EMAIL_MAX || !EMAIL.test(email)) throw invalid(path, 'must be an email address');
      return email;
    }
    case 'phone': {
      if (typeof raw !== 'string') throw invalid(path, 'must be a string');
      // Core's one phone parser, as member phones and messaging's numbers: the whole text the number.
      const number = e164Of(raw);
      if (number === undefined) throw invalid(path, PHONE_NUMBER_RULE);
      return number;
    }
    case 'url': {
      if (typeof raw !== 'string') throw invalid(path, 'must be a string');
      const value = raw.trim();
      let ok = value.length <= URL_MAX;
      try {
        ok &&= ['http:', 'https:'].includes(new URL(value).protocol);
      } catch {
        ok = false;
      }
      if (!ok) throw invalid(path, `must be an http or https URL of at most ${URL_MAX} characters`);
      return value;
    }
    case 'date': {
      if (typeof raw !== 'string' || !isRealDate(raw))
        throw invalid(path, 'must be an ISO 8601 date, YYYY-MM-DD');
      return raw;
    }
    case 'datetime': {
      const parsed = parseDateTime(raw);
      if (!parsed)
        throw invalid(path, 'must be an ISO 8601 date-time with an offset, e.g. 2024-05-01T12:00:00Z');
      return parsed.iso;
    }
    case 'number': {
      if (typeof raw !== 'number' || !Number.isFinite(raw)) throw invalid(path, 'must be a number');
      return raw;
    }
    case 'boolean': {
      if (typeof raw !== 'boolean') throw invalid(path, 'must be a boolean');
      return raw;
    }
    case 'select': {
      if (typeof raw !== 'string' || !(field.options ?? []).includes(raw))
        throw invalid(path, `must be one of ${(field.options ?? []).join(', ')}`);
      return raw;
    }
  }
}

/** A required field's value must say something: a text of only white space is none. */
const blank = (value: FieldValue): boolean => typeof value === 'string' && value.trim() === '';

function asObject(input: unknown, path: string): Record<string, unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new ValidationError(`${path}: must be an object`);
  return input as Record<string, unknown>;
}

/**
 * The values of a new record: every key a field of the type, every value valid for it,
 * every required field present. `null` is "no value".
 */
export function checkNewValues(
  fields: readonly DataField[],
  input: unknown,
  path = 'fieldValues',
): FieldValues {
  const raw = asObject(input ?? {}, path);
  const bySlug = new Map(fields.map((f) => [f.slug, f]));
  const out: FieldValues = {};
  for (const [key, value] of Object.entries(raw)) {
    const field = bySlug.get(key);
    if (!field) throw new ValidationError(`${path}.${key}: unknown field`);
    if (value === null || value === undefined) continue;
    const normalised = normaliseValue(field, value, `${path}.${key}`);
    if (field.required && blank(normalised)) throw new ValidationError(`${path}.${key}: is required`);
    out[key] = normalised;
  }
  for (const f of fields)
    // Own keys only: `out.constructor` is Object's, not a value of a field called so.
    if (f.required && !Object.prototype.hasOwnProperty.call(out, f.slug))
      throw new ValidationError(`${path}.${f.slug}: is required`);
  return out;
}

/**
 * A partial change: given keys only; `null` clears a field (refused for a required one).
 * Returns the normalised changes, `null` kept for clearing.
 */
export function checkValueChanges(
  fields: readonly DataField[],
  input: unknown,
  path = 'fieldValues',
): Record<string, FieldValue | null> {
  const raw = asObject(input ?? {}, path);
  const bySlug = new Map(fields.map((f) => [f.slug, f]));
  const out: Record<string, FieldValue | null> = {};
  for (const [key, value] of Object.entries(raw)) {
    const field = bySlug.get(key);
    if (!field) throw new ValidationError(`${path}.${key}: unknown field`);
    if (value === null || value === undefined) {
      if (field.required) throw new ValidationError(`${path}.${key}: is required and cannot be cleared`);
      out[key] = null;
    } else {
      const normalised = normaliseValue(field, value, `${path}.${key}`);
      if (field.required && blank(normalised))
        throw new ValidationError(`${path}.${key}: is required and cannot be cleared`);
      out[key] = normalised;
    }
  }
  return out;
}
