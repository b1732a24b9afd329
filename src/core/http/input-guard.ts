import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LONE_SURROGATE } from '../text/storable-text';
import { markRouteConfig, routeConfigValue } from './route-auth';

/** How deeply a JSON body may nest objects and arrays (the top-level value is level 1). */
export const MAX_BODY_DEPTH = 64;

/** Why `s` cannot be stored, or null. PostgreSQL text and jsonb hold neither NUL nor half a surrogate pair. */
function stringProblem(s: string): string | null {
  if (s.includes('\u0000')) return 'must not contain NUL characters';
  if (LONE_SURROGATE.test(s)) return 'must not contain unpaired UTF-16 surrogates';
  return null;
}

/**
 * A record of parsed input: JSON objects, and the query and params objects Fastify builds
 * (whose prototype is a bare `Object.create(null)`), but not Buffers, streams or class instances.
 */
function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v) as object | null;
  return proto === null || Object.getPrototypeOf(proto) === null;
}

function join(path: string, key: string | number): string {
  return path ? `${path}.${key}` : String(key);
}

/**
 * The first problem in a parsed value, as `"<field path>: <reason>"` (the path in the
 * validation pipe's dotted form, e.g. `contacts.3.email`), or null. Walks iteratively with an
 * explicit depth, so a hostile nesting cannot overflow the stack here either.
 */
export function findInputProblem(root: unknown, label: (path: string) => string): string | null {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value: root, path: '', depth: 1 }];
  while (stack.length) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === 'string') {
      const problem = stringProblem(value);
      if (problem) return `${label(path)}: ${problem}`;
      continue;
    }
    const isArray = Array.isArray(value);
    if (!isArray && !isPlainObject(value)) continue;
    if (depth > MAX_BODY_DEPTH)
      return `${label('')}: nested deeper than ${MAX_BODY_DEPTH} levels of objects and arrays`;
    if (isArray) {
      for (let i = value.length - 1; i >= 0; i--)
        stack.push({ value: value[i], path: join(path, i), depth: depth + 1 });
      continue;
    }
    const entries = Object.entries(value as Record<string, unknown>);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i];
      const keyProblem = stringProblem(key);
      if (keyProblem) return `${label(path)}: field names ${keyProblem}`;
      stack.push({ value: child, path: join(path, key), depth: depth + 1 });
    }
  }
  return null;
}

const BODY_CLEANED_BY_ROUTE = 'bodyCleanedByRoute';

/**
 * The route reads its (form) body itself and makes the fields it keeps storable, so the
 * guard does not refuse it: a provider's webhook whose sender does not retry a 4xx (an
 * inbound text answered 400 is lost) and whose signature covers the fields as sent (so they
 * cannot be cleaned before the route checks it). Path parameters and query are still checked.
 */
export const BodyCleanedByRoute = (): MethodDecorator => markRouteConfig(BODY_CLEANED_BY_ROUTE, true);

const TAKES_NO_BODY = 'takesNoBody';

/**
 * The operation takes no body (an action on a resource: rotate a secret, send a test,
 * redeliver): none, an empty one or `{}` is fine, but fields are 400 naming them, as unknown
 * fields of any DTO are, so a client never believes it set something that was ignored
 * (`{"signingSecret": "mine"}` on a rotation).
 */
export const TakesNoBody = (): MethodDecorator => markRouteConfig(TAKES_NO_BODY, true);

/** Whether the request's route was marked @TakesNoBody. */
export function takesNoBody(req: { routeOptions?: { config?: unknown } }): boolean {
  return routeConfigValue(req, TAKES_NO_BODY) === true;
}

/** Why a body is refused on a route that takes none, or null (none, null or `{}`). */
export function noBodyProblem(body: unknown): string | null {
  if (body === undefined || body === null) return null;
  if (!isPlainObject(body) || Array.isArray(body))
    return 'body: this operation takes no body; send none or {}';
  const keys = Object.keys(body);
  if (!keys.length) return null;
  return `${keys.map((k) => `${k}: unknown field`).join('; ')} (this operation takes no body)`;
}

/** The first problem in a request's path parameters, query and body, or null. */
export function requestInputProblem(
  req: Pick<FastifyRequest, 'params' | 'query' | 'body'>,
  checkBody = true,
): string | null {
  return (
    findInputProblem(req.params, (p) => (p ? `path parameter ${p}` : 'path parameters')) ??
    findInputProblem(req.query, (p) => (p ? `query ${p}` : 'query')) ??
    (checkBody ? findInputProblem(req.body, (p) => p || 'body') : null)
  );
}

/**
 * Every route, present and future, passes here after its body is parsed and before the
 * validation pipe and the handler see it: NUL characters and unpaired surrogates (which
 * PostgreSQL cannot store, so they used to surface as 500s) and bodies nested deeper than
 * MAX_BODY_DEPTH (which overflowed class-transformer's recursion) are 400 naming the field;
 * a route marked @BodyCleanedByRoute cleans its own body instead. A route marked
 * @TakesNoBody refuses any field.
 */
export function registerInputGuard(fastify: FastifyInstance): void {
  // A callback hook: the requests it lets through (all but a few) pass without a promise.
  fastify.addHook('preValidation', (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const problem =
      requestInputProblem(req, routeConfigValue(req, BODY_CLEANED_BY_ROUTE) !== true) ??
      (takesNoBody(req) ? noBodyProblem(req.body) : null);
    if (problem)
      void reply.code(400).send({ detail: problem }); // answered: the chain stops here
    else done();
  });
}
