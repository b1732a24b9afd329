import { isIPv4, isIPv6 } from 'node:net';
import Ajv, { ErrorObject, Format, Options, ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import { ValidationError } from '../../../core/http/domain-errors';
import { parseDateTime } from '../../../core/http/pagination';
import type { JsonSchemaObject } from './toolkit.events';
import { boundedRegExp, unsafePatternReason } from './safe-pattern';

/**
 * A tool's `inputSchema`: a JSON Schema whose root is `type: "object"` (MCP tool input
 * schemas are), compiled with Ajv in strict mode, so that a keyword Ajv does not know is
 * an error rather than silently ignored. Every refusal is a ValidationError naming the
 * place in the schema (`inputSchema.properties.count.type: ...`).
 *
 * Schemas come from workspaces and are run by the service on every tool call, so they are
 * bounded (size, depth, references only within the schema, regular expressions that cannot
 * backtrack exponentially), and each is compiled in an Ajv instance of its own: an `$id`
 * of one workspace's schema can never be registered where another's `$ref` would find it.
 */

export const INPUT_SCHEMA_MAX_LENGTH = 32_768;
export const INPUT_SCHEMA_MAX_DEPTH = 32;

const FIELD = 'inputSchema';

/** JSON Schema 2020-12 (MCP's default dialect) unless the schema names draft-07. */
type Dialect = '2020-12' | 'draft-07';

const DIALECTS: Record<string, Dialect> = {
  'https://json-schema.org/draft/2020-12/schema': '2020-12',
  'http://json-schema.org/draft-07/schema': 'draft-07',
  'https://json-schema.org/draft-07/schema': 'draft-07',
};

/**
 * Formats the schemas may use (`format: "email"`). Ajv knows none by itself; strict mode
 * refuses any other name instead of ignoring it.
 */
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const FORMATS: Record<string, Format> = {
  'date-time': { type: 'string', validate: (v: string) => parseDateTime(v) !== null },
  date: {
    type: 'string',
    validate: (v: string) => {
      const m = DATE.exec(v);
      if (!m) return false;
      const d = new Date(0);
      d.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
      return d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
    },
  },
  time: {
    type: 'string',
    validate: (v: string) =>
      /^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)?$/i.test(v),
  },
  email: {
    type: 'string',
    validate: (v: string) => {
      const at = v.lastIndexOf('@');
      return v.length <= 254 && at > 0 && at < v.length - 1 && !/\s/.test(v) && v.slice(at + 1).includes('.');
    },
  },
  uri: {
    type: 'string',
    validate: (v: string) => {
      try {
        return /^[a-z][a-z0-9+.-]*:/i.test(v) && !!new URL(v);
      } catch {
        return false;
      }
    },
  },
  uuid: {
    type: 'string',
    validate: (v: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v),
  },
  ipv4: { type: 'string', validate: (v: string) => isIPv4(v) },
  ipv6: { type: 'string', validate: (v: string) => isIPv6(v) },
  hostname: {
    type: 'string',
    validate: (v: string) =>
      v.length <= 253 && v.split('.').every((l) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i.test(l)),
  },
};
export const INPUT_SCHEMA_FORMATS = Object.keys(FORMATS);

const AJV_OPTIONS: Options = {
  // Unknown and ignored keywords are errors.
  strict: true,
  // `required` naming undeclared properties is refused by walk() below, with its path, and
  // unlike Ajv's own check it lets a branch (`oneOf: [{required: [...]}]`) name the
  // properties of the object it describes.
  strictRequired: false,
  // Type-less keywords (`{minimum: 1}`) and loose tuples are ordinary in tool schemas.
  strictTypes: false,
  strictTuples: false,
  allowUnionTypes: true,
  // The first error is enough to name the argument, and stops early on hostile input.
  allErrors: false,
  formats: FORMATS,
  code: { regExp: boundedRegExp },
  logger: false,
};

/** One instance per dialect only checks schemas against the meta-schema (never registers one). */
const metaValidators: Record<Dialect, Ajv> = {
  '2020-12': new Ajv2020({ ...AJV_OPTIONS, allErrors: true }),
  'draft-07': new Ajv({ ...AJV_OPTIONS, allErrors: true }),
};

function fail(path: string, message: string): never {
  throw new ValidationError(`${path}: ${message}`);
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** JSON pointer (`/properties/a~1b`) to the dotted path the API names fields with. */
export function pointerToPath(pointer: string): string {
  if (!pointer) return '';
  return pointer
    .split('/')
    .slice(1)
    .map((p) => `.${p.replace(/~1/g, '/').replace(/~0/g, '~')}`)
    .join('');
}

function depthOf(value: unknown, limit: number, depth = 0): number {
  if (typeof value !== 'object' || value === null) return depth;
  if (depth >= limit) return depth + 1;
  let max = depth + 1;
  for (const v of Object.values(value)) max = Math.max(max, depthOf(v, limit, depth + 1));
  return max;
}

function dialectOf(schema: Record<string, unknown>): Dialect {
  const declared = schema.$schema;
  if (declared === undefined) return '2020-12';
  const name = typeof declared === 'string' ? declared.replace(/#$/, '') : undefined;
  // Own keys only: `constructor` or `toString` would otherwise name Object's prototype's.
  const dialect = name !== undefined && Object.hasOwn(DIALECTS, name) ? DIALECTS[name] : undefined;
  if (!dialect)
    fail(
      `${FIELD}.$schema`,
      'must be https://json-schema.org/draft/2020-12/schema (the default) or http://json-schema.org/draft-07/schema#',
    );
  return dialect;
}

/** Keywords whose value is one subschema, a map of subschemas, or an array of them. */
const ONE = [
  'additionalProperties',
  'additionalItems',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
];
const MAP = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const MANY = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
/** Subschemas that describe the same instance (their `required` may name the parent's properties). */
const SAME_INSTANCE = new Set([
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
  'dependentSchemas',
  'dependencies',
]);

/**
 * Walks every subschema with its path: what Ajv would refuse without saying where (unknown
 * keywords, `required` naming undeclared properties), plus what we refuse ourselves
 * (references outside the schema, unknown formats, patterns that can backtrack badly).
 */
function walk(node: unknown, path: string, known: Set<string>, declared: ReadonlySet<string>): void {
  if (!isObject(node)) return; // `true` / `false` schemas; the meta-schema refused anything else
  const own = isObject(node.properties) ? Object.keys(node.properties) : [];
  const inScope = new Set([...declared, ...own]);
  for (const [key, value] of Object.entries(node)) {
    const at = `${path}.${key}`;
    if (!known.has(key)) fail(at, `unknown keyword "${key}"`);
    if (key === '$async') fail(at, 'asynchronous schemas are not supported');
    if (
      (key === '$ref' || key === '$dynamicRef' || key === '$recursiveRef') &&
      !String(value).startsWith('#')
    )
      fail(at, 'only references within the schema ("#/$defs/...") are allowed');
    // Own keys only: `in` is true for `constructor`, `toString`... (Object's prototype's).
    if (key === 'format' && typeof value === 'string' && !Object.hasOwn(FORMATS, value))
      fail(at, `unknown format "${value}"; known formats: ${INPUT_SCHEMA_FORMATS.join(', ')}`);
    if (key === 'pattern' && typeof value === 'string') {
      const reason = unsafePatternReason(value);
      if (reason) fail(at, reason);
    }
    if (key === 'required' && Array.isArray(value))
      for (const name of value)
        if (!inScope.has(String(name))) fail(at, `"${String(name)}" is not a declared property`);
  }
  const carry = (keyword: string) => (SAME_INSTANCE.has(keyword) ? inScope : new Set<string>());
  for (const keyword of ONE)
    if (keyword in node) walk(node[keyword], `${path}.${keyword}`, known, carry(keyword));
  for (const keyword of MAP) {
    const map = node[keyword];
    if (!isObject(map)) continue;
    for (const [name, sub] of Object.entries(map)) {
      if (keyword === 'patternProperties') {
        const reason = unsafePatternReason(name);
        if (reason) fail(`${path}.${keyword}.${name}`, `the pattern ${reason}`);
      }
      walk(sub, `${path}.${keyword}.${name}`, known, carry(keyword));
    }
  }
  for (const keyword of MANY) {
    const list = node[keyword];
    if (Array.isArray(list))
      list.forEach((sub, i) => walk(sub, `${path}.${keyword}.${i}`, known, carry(keyword)));
  }
  // `items` is one schema, or (draft-07) an array of them; draft-07 `dependencies` maps to
  // a schema or to a list of property names.
  if (Array.isArray(node.items))
    node.items.forEach((sub, i) => walk(sub, `${path}.items.${i}`, known, new Set()));
  else if ('items' in node) walk(node.items, `${path}.items`, known, new Set());
  if (isObject(node.dependencies))
    for (const [name, sub] of Object.entries(node.dependencies))
      if (!Array.isArray(sub)) walk(sub, `${path}.dependencies.${name}`, known, inScope);
}

function newAjv(dialect: Dialect): Ajv {
  // Already checked against the meta-schema; a fresh instance per schema (see above).
  const options = { ...AJV_OPTIONS, validateSchema: false };
  return dialect === '2020-12' ? new Ajv2020(options) : new Ajv(options);
}

/**
 * Checks a tool's input schema, throwing a ValidationError naming the schema path that is
 * wrong; returns the compiled validator of the tool's arguments.
 */
export function compileInputSchema(schema: unknown): ValidateFunction {
  if (!isObject(schema)) fail(FIELD, 'must be a JSON Schema object');
  if (JSON.stringify(schema).length > INPUT_SCHEMA_MAX_LENGTH)
    fail(FIELD, `must be at most ${INPUT_SCHEMA_MAX_LENGTH} characters as JSON`);
  if (depthOf(schema, INPUT_SCHEMA_MAX_DEPTH) > INPUT_SCHEMA_MAX_DEPTH)
    fail(FIELD, `must not be nested deeper than ${INPUT_SCHEMA_MAX_DEPTH} levels`);
  const dialect = dialectOf(schema);
  const meta = metaValidators[dialect];
  if (!meta.validateSchema(schema)) {
    const error = (meta.errors ?? [])[0];
    fail(
      `${FIELD}${pointerToPath(error?.instancePath ?? '')}`,
      error?.message ?? 'is not a valid JSON Schema',
    );
  }
  if (schema.type !== 'object')
    fail(`${FIELD}.type`, 'must be "object": a tool takes its arguments as an object');
  walk(schema, FIELD, new Set(Object.keys(meta.RULES.keywords)), new Set());
  try {
    return newAjv(dialect).compile(schema);
  } catch (error) {
    // What the walk does not foresee (an `if` without `then` or `else`, a `$ref` to a
    // missing definition): Ajv's own words, which name the keyword or reference.
    fail(FIELD, (error as Error).message.replace(/^strict mode: /, ''));
  }
}

/** Checks a tool's input schema (see compileInputSchema); throws a ValidationError. */
export function checkInputSchema(schema: unknown): JsonSchemaObject {
  compileInputSchema(schema);
  return schema as JsonSchemaObject;
}

/** One argument error as `arguments.<path>: <problem>`, naming the argument. */
export function describeArgumentError(error: ErrorObject): string {
  const at = `arguments${pointerToPath(error.instancePath)}`;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${at}.${String(params.missingProperty)}: is required`;
    case 'dependentRequired':
    case 'dependencies':
      return `${at}.${String(params.missingProperty)}: is required when ${String(params.property)} is given`;
    case 'additionalProperties':
      return `${at}.${String(params.additionalProperty)}: is not an argument of this tool`;
    case 'unevaluatedProperties':
      return `${at}.${String(params.unevaluatedProperty)}: is not an argument of this tool`;
    default:
      return `${at}: ${error.message ?? 'is not valid'}`;
  }
}
