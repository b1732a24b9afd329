import { ArgumentMetadata, BadRequestException, Type, ValidationError, ValidationPipe } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { keepValidationMetadata } from './validation-metadata';

/**
 * The largest id a client may send for an integer (PostgreSQL `integer`) column. Beyond it a
 * body or query value is 400 naming the field; a path id beyond it is 404, like any other id
 * that names nothing (see caller.ts and member-roles.controller.ts).
 */
export const MAX_ID = 2_147_483_647;

/**
 * A free-form JSON object field (record values keyed by the caller's own names) kept as
 * sent. class-transformer copies such an object key by key and skips every key the copy
 * inherits from Object.prototype: `constructor` (a valid field slug), `toString`,
 * `valueOf` ... vanished before the handler could store or refuse them.
 */
export const KeepAsSent = (): PropertyDecorator =>
  Transform(({ obj, key }: { obj: Record<string, unknown>; key: string }) => obj[key]);

function describe(errors: ValidationError[], parent = ''): string[] {
  const out: string[] = [];
  for (const e of errors) {
    const path = parent ? `${parent}.${e.property}` : e.property;
    if (e.constraints) {
      for (const [key, msg] of Object.entries(e.constraints)) {
        out.push(
          key === 'whitelistValidation'
            ? `${path}: unknown field`
            : `${path}: ${msg.replace(new RegExp(`^${e.property} `), '')}`,
        );
      }
    }
    if (e.children?.length) out.push(...describe(e.children, path));
  }
  return out;
}

// Where @nestjs/swagger keeps what @ApiProperty declared (names listed as ":name").
const API_MODEL_PROPERTIES = 'swagger/apiModelProperties';
const API_MODEL_PROPERTIES_ARRAY = 'swagger/apiModelPropertiesArray';

interface DocumentedProperty {
  nullable?: boolean;
  isArray?: boolean;
  type?: unknown;
  additionalProperties?: unknown;
}

const NONE = new Map<string, DocumentedProperty>();
/** Per class: decorators run once, when the class is defined, so its documentation never changes after. */
const documented = new WeakMap<object, Map<string, DocumentedProperty>>();

function documentedProperties(cls: unknown): Map<string, DocumentedProperty> {
  if (typeof cls !== 'function') return NONE;
  let out = documented.get(cls);
  if (!out) documented.set(cls, (out = readDocumentedProperties(cls)));
  return out;
}

function readDocumentedProperties(cls: unknown): Map<string, DocumentedProperty> {
  const out = new Map<string, DocumentedProperty>();
  const proto = typeof cls === 'function' ? (cls as { prototype?: object }).prototype : undefined;
  if (!proto) return out;
  const names = (Reflect.getMetadata(API_MODEL_PROPERTIES_ARRAY, proto) as string[] | undefined) ?? [];
  for (const entry of names) {
    const name = entry.replace(/^:/, '');
    out.set(name, (Reflect.getMetadata(API_MODEL_PROPERTIES, proto, name) as DocumentedProperty) ?? {});
  }
  return out;
}

/**
 * What class-validator lets through although the DTO's own documentation says otherwise:
 * `@IsOptional()` accepts null for every field, and `@ValidateNested()` accepts an array
 * where one object is declared. Both reached handlers as values they never expected (500s).
 * So null is accepted only where the OpenAPI document says `nullable`, and a nested DTO
 * must be an object unless it is documented as an array.
 */
function shapeProblem(
  cls: unknown,
  value: Record<string, unknown>,
  parent: string,
  depth: number,
): string | null {
  if (depth > 16) return null;
  for (const [name, meta] of documentedProperties(cls)) {
    if (!Object.prototype.hasOwnProperty.call(value, name)) continue;
    const v = value[name];
    const path = parent ? `${parent}.${name}` : name;
    if (v === null) {
      if (!meta.nullable) return `${path}: must not be null`;
      continue;
    }
    if (!documentedProperties(meta.type).size) continue;
    const items = meta.isArray ? (Array.isArray(v) ? v : []) : [v];
    if (!meta.isArray && Array.isArray(v)) return `${path}: must be an object`;
    for (let i = 0; i < items.length; i++) {
      const item: unknown = items[i];
      if (typeof item !== 'object' || item === null) continue; // class-validator names it
      const problem = shapeProblem(
        meta.type,
        item as Record<string, unknown>,
        meta.isArray ? `${path}.${i}` : path,
        depth + 1,
      );
      if (problem) return problem;
    }
  }
  return null;
}

/** A property the OpenAPI document declares as a free-form map (`type: 'object'` with `additionalProperties`). */
const isFreeForm = (meta: DocumentedProperty): boolean =>
  meta.type === 'object' && meta.additionalProperties !== undefined && meta.additionalProperties !== false;

/**
 * Puts back, into the validated instance, every free-form map as the client sent it
 * (what @KeepAsSent does for one property, here for every property documented as a map,
 * in nested DTOs too). class-transformer's copy of such a map skips each key that
 * Object.prototype holds (`toString`, `valueOf`, `hasOwnProperty`, ...): a feature flag or
 * a tool schema's property of that name vanished, with a 200.
 */
function restoreFreeForm(cls: unknown, entity: unknown, sent: unknown, depth: number): void {
  if (depth > 16 || !isPlainRecord(entity) || !isPlainRecord(sent)) return;
  for (const [name, meta] of documentedProperties(cls)) {
    if (!Object.prototype.hasOwnProperty.call(sent, name)) continue;
    const raw = sent[name];
    if (isFreeForm(meta)) {
      if (isPlainRecord(raw) && isPlainRecord(entity[name])) entity[name] = raw;
      continue;
    }
    if (!documentedProperties(meta.type).size) continue;
    if (Array.isArray(raw) && Array.isArray(entity[name])) {
      const items = entity[name] as unknown[];
      raw.forEach((item, i) => restoreFreeForm(meta.type, items[i], item, depth + 1));
    } else restoreFreeForm(meta.type, entity[name], raw, depth + 1);
  }
}

const isPlainRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keys Nest's ValidationPipe deletes from every object of a body or query before validating it. */
const RESERVED_KEYS = ['__proto__', 'constructor', 'prototype'];

class DocumentedValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && metadata.metatype && typeof value === 'object' && value !== null) {
      const problem = shapeProblem(metadata.metatype as Type, value as Record<string, unknown>, '', 0);
      if (problem) throw new BadRequestException({ detail: problem });
    }
    const out: unknown = await super.transform(value, metadata);
    if (metadata.metatype && out !== value) restoreFreeForm(metadata.metatype, out, value, 0);
    return out;
  }

  /**
   * Nest deletes `constructor` and `prototype` (and `__proto__`) keys wherever they are in
   * the value, silently: a record value, a feature flag or a tool schema's property so named
   * was dropped and the write answered 2xx without it. Here such a key is refused, 400
   * naming its path, so nothing is lost unsaid. (The JSON parser already refuses
   * `__proto__` and `constructor.prototype`, body-parsing.ts.) Iterative: a deep body
   * cannot overflow the stack.
   */
  protected override stripProtoKeys(value: unknown): void {
    const stack: [unknown, string][] = [[value, '']];
    while (stack.length) {
      const [node, path] = stack.pop()!;
      if (node === null || typeof node !== 'object' || ArrayBuffer.isView(node)) continue;
      if (node instanceof Date || node instanceof RegExp || node instanceof Map || node instanceof Set)
        continue;
      for (const key of Object.keys(node)) {
        const at = path ? `${path}.${key}` : key;
        if (RESERVED_KEYS.includes(key))
          throw new BadRequestException({
            detail: `${at}: the key "${key}" is not accepted (JavaScript objects reserve it); use another name`,
          });
        stack.push([(node as Record<string, unknown>)[key], at]);
      }
    }
  }
}

/**
 * Whitelisting with unknown fields refused; the detail names every failing field,
 * e.g. "name: must be a string; colour: unknown field".
 */
export function createValidationPipe(): ValidationPipe {
  keepValidationMetadata();
  return new DocumentedValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: (errors) =>
      new BadRequestException({ detail: describe(errors).join('; ') || 'Invalid request' }),
  });
}
