import type { FastifyInstance, FastifyRequest } from 'fastify';
import { UnsupportedMediaTypeError, ValidationError } from './domain-errors';
import { parseFormBody } from './form-body';
import { takesNoBody } from './input-guard';
import { markRouteConfig, routeConfigValue } from './route-auth';

const ACCEPTED_BODIES = 'acceptedBodies';
const FORM = 'application/x-www-form-urlencoded';

/**
 * A route that must take a body other than JSON (a provider's webhook posting a form, a
 * mail gateway posting raw MIME) says so, and only those media types open up on that
 * route; every other route stays JSON-only. A form body arrives as an object of its
 * fields (string values; a repeated field becomes an array, so protocols that forbid
 * repeats can refuse it), anything else as the raw Buffer. Merged into the route's
 * Fastify config (markRouteConfig, so @Public and the other route marks stay), which the
 * parser below reads.
 */
export const AcceptBody = (...mediaTypes: string[]): MethodDecorator =>
  markRouteConfig(
    ACCEPTED_BODIES,
    mediaTypes.map((t) => t.toLowerCase()),
  );

function acceptedBy(req: FastifyRequest): readonly string[] {
  const accepted = routeConfigValue(req, ACCEPTED_BODIES);
  return Array.isArray(accepted) ? (accepted as string[]) : [];
}

/** The media type of a request's Content-Type, lower case, without parameters; '' when none. */
export function mediaTypeOf(req: Pick<FastifyRequest, 'headers'>): string {
  const given = req.headers['content-type'];
  return given ? String(given).split(';')[0].trim().toLowerCase() : '';
}

/** The payload of a route-accepted body, refused with 413 past the limit. */
function readBody(payload: NodeJS.ReadableStream, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    payload.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        const err = Object.assign(new Error('Request body is too large'), { statusCode: 413 });
        payload.removeAllListeners('data');
        reject(err);
        return;
      }
      chunks.push(chunk);
    });
    payload.on('end', () => resolve(Buffer.concat(chunks)));
    payload.on('error', reject);
  });
}

/**
 * Cheap pre-check before walking a parsed body: only text that could spell one of the
 * poisoning keys (directly or through \u escapes) is walked at all.
 */
const SUSPECT = /__proto__|constructor|\\u/;

/**
 * The path of the first key that could poison prototypes where a body is merged into
 * an object: `__proto__`, or `constructor` holding `prototype`. JSON.parse makes them
 * harmless own properties, but a later spread or Object.assign would not keep them so.
 * Iterative, so a deeply nested body cannot overflow the stack here.
 */
export function forbiddenKeyPath(value: unknown): string | undefined {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length) {
    const [node, path] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    for (const key of Object.keys(node)) {
      const child = (node as Record<string, unknown>)[key];
      const at = path ? `${path}.${key}` : key;
      if (key === '__proto__') return at;
      if (
        key === 'constructor' &&
        child !== null &&
        typeof child === 'object' &&
        Object.hasOwn(child, 'prototype')
      )
        return `${at}.prototype`;
      stack.push([child, at]);
    }
  }
  return undefined;
}

export function parseJsonBody(text: string): unknown {
  if (text.length === 0) throw new ValidationError('The request body is empty; send a JSON document');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ValidationError('The request body is not valid JSON');
  }
  const forbidden = SUSPECT.test(text) ? forbiddenKeyPath(value) : undefined;
  if (forbidden !== undefined) {
    const key = forbidden.endsWith('.prototype') ? '"constructor" with a "prototype"' : '"__proto__"';
    throw new ValidationError(`${forbidden}: the key ${key} is not allowed`);
  }
  return value;
}

/**
 * Every route reads JSON and nothing else, except routes that declare @AcceptBody (forms,
 * raw MIME) and the upload routes that declare @MultipartBody (multipart.ts, streamed). A form-encoded or text body is refused with 415 naming
 * the type to send, rather than read as something else and then refused field by field.
 * Nest's own parsers are off (bootstrap.ts: bodyParser: false) and Fastify's defaults are
 * replaced, so this is the only place a JSON body is parsed.
 */
export function registerBodyParsers(fastify: FastifyInstance, bodyLimit: number): void {
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit },
    (req: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      // No DELETE takes a body, nor does a route marked @TakesNoBody, and many clients send
      // Content-Type: application/json on every request: an empty one is no body, not a 400.
      if ((req.method === 'DELETE' || takesNoBody(req)) && text.length === 0) return done(null, undefined);
      try {
        done(null, parseJsonBody(text));
      } catch (err) {
        done(err as Error);
      }
    },
  );
  // Anything else, and a body without a Content-Type: refused unless the route accepts it.
  fastify.addContentTypeParser('*', (req: FastifyRequest, payload, done) => {
    const mediaType = mediaTypeOf(req);
    if (mediaType && acceptedBy(req).includes(mediaType)) {
      readBody(payload, bodyLimit).then(
        (raw) => {
          let body: unknown = raw;
          try {
            if (mediaType === FORM) body = parseFormBody(raw.toString('utf8'));
          } catch (err) {
            return done(err as Error);
          }
          done(null, body);
        },
        (err: Error) => done(err),
      );
      return;
    }
    done(
      new UnsupportedMediaTypeError(
        mediaType
          ? `Content-Type ${mediaType} is not supported; send application/json`
          : 'The request has a body but no Content-Type; send application/json',
      ),
    );
  });
}
