import { ValidationError } from '../../../core/http/domain-errors';
import type { DataField } from './data-type.events';
import { checkNewValues, checkValueChanges, datetimeIndexForm, normaliseValue } from './field-values';

const field = (fieldType: DataField['fieldType'], extra: Partial<DataField> = {}): DataField => ({
  name: 'F',
  slug: 'f',
  fieldType,
  required: false,
  shouldIndex: false,
  ...extra,
});

describe('field values', () => {
  it.each([
    ['text', 'hello', 'hello'],
    ['email', ' Ann@Example.COM ', 'ann@example.com'],
    ['phone', '+44 20 7946 0958', '+442079460958'],
    ['url', ' https://example.org/x ', 'https://example.org/x'],
    ['date', '2024-02-29', '2024-02-29'],
    ['datetime', '2024-05-01T12:00:00Z', '2024-05-01T12:00:00Z'],
    ['number', 4.5, 4.5],
    ['boolean', false, false],
  ] as const)('accepts and normalises a %s', (type, raw, expected) => {
    expect(normaliseValue(field(type), raw, 'v')).toEqual(expected);
  });

  it.each([
    ['text', 3, /must be a string/],
    ['text', 'x'.repeat(10_001), /at most 10000/],
    ['email', 'ann@', /must be an email address/],
    ['phone', '555-0123', /international form/],
    ['phone', 'call me +14155550100 now', /international form and nothing else/],
    ['phone', '+14155550100 ext. 12', /no extension/],
    ['phone', `+1${'0'.repeat(70)}`, /international form/],
    ['url', 'javascript:alert(1)', /http or https URL/],
    ['date', '2023-02-29', /ISO 8601 date/],
    ['datetime', '1999-12-31', /date-time with an offset/],
    ['number', Infinity, /must be a number/],
    ['number', '3', /must be a number/],
    ['boolean', 'true', /must be a boolean/],
  ] as const)('refuses a bad %s without echoing it', (type, raw, message) => {
    let error: unknown;
    try {
      normaliseValue(field(type), raw, 'fieldValues.f');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toMatch(/^fieldValues\.f: /);
    expect((error as Error).message).toMatch(message);
    if (typeof raw === 'string' && raw.length > 3 && raw.length < 100)
      expect((error as Error).message).not.toContain(raw);
  });

  it('accepts only the options of a select', () => {
    const select = field('select', { options: ['a', 'b'] });
    expect(normaliseValue(select, 'b', 'v')).toBe('b');
    expect(() => normaliseValue(select, 'c', 'v')).toThrow(/must be one of a, b/);
  });

  it('checks a new record: unknown fields, required ones, null as no value', () => {
    const fields = [field('text', { slug: 'name', required: true }), field('number', { slug: 'age' })];
    expect(checkNewValues(fields, { name: 'A', age: null })).toEqual({ name: 'A' });
    expect(() => checkNewValues(fields, { age: 3 })).toThrow(/^fieldValues\.name: is required/);
    expect(() => checkNewValues(fields, { name: 'A', x: 1 })).toThrow(/^fieldValues\.x: unknown field/);
    expect(() => checkNewValues(fields, ['A'])).toThrow(/^fieldValues: must be an object/);
    expect(() => checkValueChanges(fields, { name: null })).toThrow(/is required and cannot be cleared/);
    expect(checkValueChanges(fields, { age: null })).toEqual({ age: null });
  });

  it("requires a field's own value, not a key Object.prototype holds", () => {
    const fields = [field('text', { slug: 'constructor', required: true })];
    expect(() => checkNewValues(fields, {})).toThrow('fieldValues.constructor: is required');
  });

  it.each([
    ['2024-05-01T12:00:00+02:00', '2024-05-01T10:00:00Z'],
    ['2024-05-01T10:00:00.000Z', '2024-05-01T10:00:00Z'],
    ['2024-05-01T10:00:00.1230Z', '2024-05-01T10:00:00.123Z'],
    ['2024-05-01T01:00:00.5-03:30', '2024-05-01T04:30:00.5Z'],
    ['2024-12-31T23:30:00.999999999-01:00', '2025-01-01T00:30:00.999999999Z'],
    ['0050-01-01T00:00:00Z', '0050-01-01T00:00:00Z'],
  ])('indexes the datetime %s as its UTC instant %s', (stored, indexed) => {
    expect(datetimeIndexForm(stored)).toBe(indexed);
  });
});
