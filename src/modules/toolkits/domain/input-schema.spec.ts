import { ValidationError } from '../../../core/http/domain-errors';
import { checkInputSchema, INPUT_SCHEMA_MAX_DEPTH, INPUT_SCHEMA_MAX_LENGTH } from './input-schema';
import {
  PATTERN_SUBJECT_MAX,
  PATTERN_SUBJECT_MAX_THREE_REPEATS,
  patternSubjectMax,
  unsafePatternReason,
} from './safe-pattern';

function problemOf(schema: unknown): string {
  try {
    checkInputSchema(schema);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as Error).message;
  }
  throw new Error('the schema was accepted');
}

const obj = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties,
  ...extra,
});

describe('a tool input schema', () => {
  it('accepts ordinary tool schemas, in 2020-12 and draft-07', () => {
    const good: unknown[] = [
      { type: 'object' },
      obj(
        { orderId: { type: 'string', description: 'the number', minLength: 3 } },
        { required: ['orderId'] },
      ),
      obj(
        {
          count: { type: 'integer', minimum: 1, maximum: 10 },
          when: { type: 'string', format: 'date-time' },
          email: { type: ['string', 'null'], format: 'email' },
          tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, maxItems: 5 },
          address: obj({ city: { type: 'string' } }, { required: ['city'], additionalProperties: false }),
          code: { type: 'string', pattern: '^[A-Z]{2}-\\d{4}$' },
          kind: { $ref: '#/$defs/kind' },
        },
        { $defs: { kind: { enum: ['x', 'y'] } }, additionalProperties: false, title: 'Args' },
      ),
      {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        properties: { a: { type: 'string' }, b: { $ref: '#/definitions/b' } },
        definitions: { b: { type: 'number' } },
        required: ['a'],
      },
      // `required` in a branch may name the properties of the object it describes.
      obj(
        { a: { type: 'string' }, b: { type: 'string' } },
        { oneOf: [{ required: ['a'] }, { required: ['b'] }] },
      ),
    ];
    for (const schema of good) expect(() => checkInputSchema(schema)).not.toThrow();
  });

  it('must be an object schema at its root', () => {
    expect(problemOf([])).toBe('inputSchema: must be a JSON Schema object');
    expect(problemOf({ type: 'string' })).toBe(
      'inputSchema.type: must be "object": a tool takes its arguments as an object',
    );
    expect(problemOf({ properties: {} })).toMatch(/^inputSchema\.type: must be "object"/);
    expect(problemOf({ type: ['object', 'null'] })).toMatch(/^inputSchema\.type: must be "object"/);
  });

  it('names the schema path of what the meta-schema refuses', () => {
    expect(problemOf(obj({ count: { type: 'integr' } }))).toBe(
      'inputSchema.properties.count.type: must be equal to one of the allowed values',
    );
    expect(problemOf(obj({ count: { type: 'integer', minimum: 'one' } }))).toBe(
      'inputSchema.properties.count.minimum: must be number',
    );
    expect(problemOf(obj({}, { required: 'a' }))).toBe('inputSchema.required: must be array');
    expect(problemOf(obj({ a: { items: [{ type: 'x' }] } }))).toMatch(/^inputSchema\.properties\.a\.items/);
  });

  it('refuses unknown keywords (strict mode), naming where they are', () => {
    expect(problemOf(obj({ a: { type: 'string', maxLenght: 3 } }))).toBe(
      'inputSchema.properties.a.maxLenght: unknown keyword "maxLenght"',
    );
    expect(problemOf(obj({ a: { type: 'array', items: { type: 'string', foo: 1 } } }))).toBe(
      'inputSchema.properties.a.items.foo: unknown keyword "foo"',
    );
    expect(problemOf({ type: 'object', 'x-vendor': true })).toBe(
      'inputSchema.x-vendor: unknown keyword "x-vendor"',
    );
    // A draft-07 schema does not know 2020-12's keywords.
    expect(
      problemOf({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', prefixItems: [] }),
    ).toBe('inputSchema.prefixItems: unknown keyword "prefixItems"');
    // Ajv's own strict rules that no walk foresees still fail, in Ajv's words.
    expect(problemOf(obj({ a: { type: 'string', if: { minLength: 2 } } }))).toMatch(
      /^inputSchema: .*"if" without "then" and "else"/,
    );
  });

  it('lets `required` name only declared properties', () => {
    expect(problemOf(obj({ a: { type: 'string' } }, { required: ['a', 'b'] }))).toBe(
      'inputSchema.required: "b" is not a declared property',
    );
    expect(problemOf(obj({ a: obj({ x: {} }, { required: ['y'] }) }))).toBe(
      'inputSchema.properties.a.required: "y" is not a declared property',
    );
  });

  it('allows references only within the schema, and only known formats', () => {
    expect(problemOf(obj({ a: { $ref: 'https://example.com/schema.json' } }))).toBe(
      'inputSchema.properties.a.$ref: only references within the schema ("#/$defs/...") are allowed',
    );
    expect(problemOf(obj({ a: { $ref: '#/$defs/missing' } }))).toMatch(
      /^inputSchema: can't resolve reference #\/\$defs\/missing/,
    );
    expect(problemOf(obj({ a: { type: 'string', format: 'phone' } }))).toMatch(
      /^inputSchema\.properties\.a\.format: unknown format "phone"; known formats: date-time, date, time, email, uri/,
    );
    expect(problemOf({ $schema: 'https://json-schema.org/draft/2019-09/schema', type: 'object' })).toMatch(
      /^inputSchema\.\$schema: must be/,
    );
    expect(problemOf({ type: 'object', $async: true })).toMatch(/^inputSchema\.\$async: /);
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty'])
      expect(problemOf({ $schema: name, type: 'object' })).toMatch(/^inputSchema\.\$schema: must be/);
    // A format named after Object.prototype's members is as unknown as "phone", at its path.
    for (const name of ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__', 'isPrototypeOf'])
      expect(problemOf(obj({ a: { type: 'string', format: name } }))).toBe(
        problemOf(obj({ a: { type: 'string', format: 'phone' } })).replace('"phone"', `"${name}"`),
      );
  });

  it('refuses patterns that can backtrack exponentially, naming them', () => {
    expect(problemOf(obj({ a: { type: 'string', pattern: '^(a+)+$' } }))).toMatch(
      /^inputSchema\.properties\.a\.pattern: must not repeat a group that itself repeats/,
    );
    expect(problemOf(obj({ a: { type: 'string', pattern: '(x)\\1' } }))).toBe(
      'inputSchema.properties.a.pattern: must not use backreferences',
    );
    expect(problemOf(obj({ a: { type: 'string', pattern: '(' } }))).toBe(
      'inputSchema.properties.a.pattern: must be a valid regular expression',
    );
    expect(problemOf(obj({}, { patternProperties: { '^(\\w*)*$': { type: 'string' } } }))).toMatch(
      /^inputSchema\.patternProperties\.\^\(\\w\*\)\*\$: the pattern must not repeat/,
    );
  });

  it('is bounded in size and depth', () => {
    const big = obj({ a: { type: 'string', description: 'x'.repeat(INPUT_SCHEMA_MAX_LENGTH) } });
    expect(problemOf(big)).toBe(`inputSchema: must be at most ${INPUT_SCHEMA_MAX_LENGTH} characters as JSON`);
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < INPUT_SCHEMA_MAX_DEPTH; i++) deep = obj({ a: deep });
    expect(problemOf(deep)).toBe(
      `inputSchema: must not be nested deeper than ${INPUT_SCHEMA_MAX_DEPTH} levels`,
    );
  });
});

describe('schema patterns', () => {
  it.each([
    '^[A-Z]{2}-\\d{4}$',
    '^\\+?[1-9]\\d{1,14}$',
    '^(foo|bar)+$',
    '^([a-z]+)?-x$',
    '^(?:ab){2}$',
    '[(+*)]+',
    '^(?<year>\\d{4})-(\\d{2})$',
  ])('accepts %s', (p) => expect(unsafePatternReason(p)).toBeUndefined());

  it.each(['(a+)+', '(a*)*b', '((ab)*)+', '(?:\\d+){2,}', '(a{2,})*', '([a-z]+\\s?)*$', '(a|b\\w+)+'])(
    'refuses %s',
    (p) => expect(unsafePatternReason(p)).toMatch(/must not repeat a group/),
  );

  it.each(['^(foo|bar)+$', '^(a|b|c)*$', '^(\\.|,)+$', '^(?:x|y){2,}$', '^(a|a)?$', '^a|a$', '(ab|cd)*'])(
    'accepts the repeated choice %s, whose alternatives begin apart',
    (p) => expect(unsafePatternReason(p)).toBeUndefined(),
  );

  it.each([
    '^[^@\\s]+@[^@\\s]+$',
    '^\\d*\\d*x$',
    '^\\+?\\d{1,3}[- ]?\\d{1,4}[- ]?\\d{1,4}[- ]?\\d{1,9}$',
    '^\\d*\\d*\\d*x$',
    '^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$',
    '^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}$',
  ])('accepts %s: at most three long repetitions', (p) => expect(unsafePatternReason(p)).toBeUndefined());

  it.each(['^\\d*\\d*\\d*\\d*x$', '^a*a*a*a*a*b$', '^(a{0,999})b+\\d{32,}c*$', '^.+.+.+.+$'])(
    'refuses %s: four long repetitions or more',
    (p) => expect(unsafePatternReason(p)).toMatch(/must not have more than 3 unbounded repetitions/),
  );

  it('tries a pattern with three long repetitions on shorter strings only', () => {
    expect(patternSubjectMax('^\\d*\\d*x$')).toBe(PATTERN_SUBJECT_MAX);
    expect(patternSubjectMax('^\\S+@\\S+\\.\\S+$')).toBe(PATTERN_SUBJECT_MAX_THREE_REPEATS);
  });

  it.each([
    '^(a|a)*$',
    '^(\\w|\\d)+$',
    '^(a|aa)+$',
    '^(?:ab|ac)*$',
    '^([a-z]|x)+$',
    '^((a|a)b)*$',
    '^(a?b|b)*$',
    '^(a||b)*$',
    '^(.|\\n){2,}$',
  ])('refuses the repeated choice %s, whose alternatives can begin alike', (p) =>
    expect(unsafePatternReason(p)).toMatch(/must not repeat a group whose alternatives can begin alike/),
  );
});
