import { ValidationError } from '../../../core/http/domain-errors';
import { PATTERN_SUBJECT_MAX, PATTERN_SUBJECT_MAX_THREE_REPEATS } from './safe-pattern';
import { ToolArgumentValidators, validateToolArguments } from './tool-arguments';

const inputSchema = {
  type: 'object',
  properties: {
    orderId: { type: 'string', minLength: 3 },
    count: { type: 'integer', minimum: 1 },
    when: { type: 'string', format: 'date-time' },
    address: {
      type: 'object',
      properties: { city: { type: 'string' }, lines: { type: 'array', items: { type: 'string' } } },
      required: ['city'],
    },
  },
  required: ['orderId'],
  additionalProperties: false,
};
const tool = { toolId: 7, version: 1, inputSchema };

function problemOf(args: unknown, validators = new ToolArgumentValidators()): string {
  try {
    validators.validate(tool, args);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as Error).message;
  }
  throw new Error('the arguments were accepted');
}

describe('validating tool-call arguments', () => {
  it('accepts arguments that satisfy the schema, and returns them', () => {
    const args = { orderId: 'A-17', count: 2, when: '2026-11-23T10:00:00+01:00', address: { city: 'Oslo' } };
    expect(validateToolArguments(tool, args)).toBe(args);
    expect(validateToolArguments(tool, { orderId: 'abc' })).toEqual({ orderId: 'abc' });
  });

  it('names the argument that is wrong', () => {
    expect(problemOf({ orderId: 'A-17', count: 1.5 })).toBe('arguments.count: must be integer');
    expect(problemOf({ orderId: 'A-17', count: 0 })).toBe('arguments.count: must be >= 1');
    expect(problemOf({})).toBe('arguments.orderId: is required');
    expect(problemOf({ orderId: 'x' })).toBe('arguments.orderId: must NOT have fewer than 3 characters');
    expect(problemOf({ orderId: 'A-17', colour: 'red' })).toBe(
      'arguments.colour: is not an argument of this tool',
    );
    expect(problemOf({ orderId: 'A-17', address: {} })).toBe('arguments.address.city: is required');
    expect(problemOf({ orderId: 'A-17', address: { city: 'Oslo', lines: ['a', 2] } })).toBe(
      'arguments.address.lines.1: must be string',
    );
    expect(problemOf({ orderId: 'A-17', when: 'tomorrow' })).toBe(
      'arguments.when: must match format "date-time"',
    );
    expect(problemOf('A-17')).toBe('arguments: must be object');
    expect(problemOf(null)).toBe('arguments: must be object');
  });

  it('tries patterns only on strings of bounded length', () => {
    const coded = {
      toolId: 8,
      version: 1,
      inputSchema: { type: 'object', properties: { note: { type: 'string', pattern: '^\\d*\\d*x$' } } },
    };
    expect(validateToolArguments(coded, { note: `${'1'.repeat(PATTERN_SUBJECT_MAX - 1)}x` })).toBeDefined();
    const started = Date.now();
    expect(() => validateToolArguments(coded, { note: '1'.repeat(100_000) })).toThrow(
      'arguments.note: must match pattern "^\\d*\\d*x$"',
    );
    expect(Date.now() - started).toBeLessThan(100);
  });

  it('tries a pattern with three long repetitions (an email pattern) only on strings of an address length', () => {
    const email = {
      toolId: 9,
      version: 1,
      inputSchema: { type: 'object', properties: { to: { type: 'string', pattern: '^\\S+@\\S+\\.\\S+$' } } },
    };
    expect(validateToolArguments(email, { to: 'ann@example.com' })).toBeDefined();
    expect(() =>
      validateToolArguments(email, { to: `ann@${'a'.repeat(PATTERN_SUBJECT_MAX_THREE_REPEATS)}.com` }),
    ).toThrow('arguments.to: must match pattern');
  });

  it('compiles a schema once per tool version, and again for a new version', () => {
    const validators = new ToolArgumentValidators();
    validators.validate(tool, { orderId: 'abc' });
    problemOf({}, validators);
    validators.validate(tool, { orderId: 'abcd' });
    expect(validators.compiled).toBe(1);
    // Version 2 of the tool no longer requires orderId.
    const v2 = {
      toolId: 7,
      version: 2,
      inputSchema: { type: 'object', properties: { orderId: { type: 'string' } } },
    };
    expect(validators.validate(v2, {})).toEqual({});
    expect(validators.compiled).toBe(2);
    expect(problemOf({}, validators)).toBe('arguments.orderId: is required');
    expect(validators.compiled).toBe(2);
  });

  it('keeps at most its capacity of validators, dropping the least recently used', () => {
    const validators = new ToolArgumentValidators(2);
    const of = (toolId: number) => ({ toolId, version: 1, inputSchema: { type: 'object' } });
    validators.validate(of(1), {});
    validators.validate(of(2), {});
    validators.validate(of(1), {});
    validators.validate(of(3), {}); // drops 2, the least recently used
    expect(validators.size).toBe(2);
    validators.validate(of(1), {});
    expect(validators.compiled).toBe(3);
    validators.validate(of(2), {});
    expect(validators.compiled).toBe(4);
  });
});

describe('a schema stored before its pattern was refused', () => {
  it('is refused at call time by the same schema check, before its pattern ever runs', () => {
    const legacy = {
      toolId: 8,
      version: 1,
      inputSchema: { type: 'object', properties: { code: { type: 'string', pattern: '^(\\w|\\d)+$' } } },
    };
    const started = Date.now();
    expect(() => new ToolArgumentValidators().validate(legacy, { code: `${'1'.repeat(40)}!` })).toThrow(
      /^inputSchema\.properties\.code\.pattern: must not repeat a group whose alternatives can begin alike/,
    );
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
