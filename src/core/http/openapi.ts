import { INestApplication, Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { PUBLIC_ROUTE, REQUIRED_SCOPE, SELF_POLICY } from '../auth/auth.decorators';
import { SKIP_RATE_LIMIT } from '../rate-limit/rate-limiter';
import { IDEMPOTENCY_HEADER } from './idempotency';

/** Generated from the controllers and DTOs, so every endpoint appears with its shapes. */
export function setupOpenApi(app: INestApplication, publicBaseUrl: string): void {
  const doc = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Workspace service')
      .setDescription('Members, chats, data records, automation, OAuth and MCP; interface version 2.')
      .setVersion('2')
      // Paths carry the /api/v2 prefix, so the server is the base URL without it (a proxy's own prefix stays).
      .addServer(publicBaseUrl.replace(/\/api\/v2\/?$/, '').replace(/\/$/, ''))
      .addBearerAuth({
        type: 'http',
        scheme: 'bearer',
        description: 'API key, member token or OAuth access token',
      })
      .build(),
  );
  describeOperations(doc, routeAccess(app));
  SwaggerModule.setup('api/v2/docs', app, doc, {
    jsonDocumentUrl: 'api/v2/openapi.json',
    yamlDocumentUrl: 'api/v2/openapi.yaml',
  });
}

/** What a route's decorators say about who may call it (the guard reads the same metadata). */
export interface RouteAccess {
  handlerName: string;
  isPublic: boolean;
  scope?: string;
  self: boolean;
  rateLimited: boolean;
}

/** Every route handler of the application, by the operationId Swagger gives it (`<Controller>_<method>`). */
function routeAccess(app: INestApplication): Map<string, RouteAccess> {
  const reflector = new Reflector();
  const scanner = new MetadataScanner();
  const out = new Map<string, RouteAccess>();
  const controllers = app
    .get(DiscoveryService)
    .getControllers()
    .map((w) => w.metatype as Type | null)
    .filter((c): c is Type => !!c);
  for (const controller of controllers) {
    for (const name of scanner.getAllMethodNames(controller.prototype)) {
      const handler = (controller.prototype as Record<string, unknown>)[name] as object;
      if (Reflect.getMetadata(METHOD_METADATA, handler) === undefined) continue;
      if (Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
      const targets = [handler as () => void, controller];
      out.set(`${controller.name}_${name}`, {
        handlerName: name,
        isPublic: !!reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets),
        scope: reflector.getAllAndOverride<string | undefined>(REQUIRED_SCOPE, targets),
        self: !!reflector.getAllAndOverride<boolean>(SELF_POLICY, targets),
        rateLimited: !reflector.getAllAndOverride<boolean>(SKIP_RATE_LIMIT, targets),
      });
    }
  }
  return out;
}

type Json = Record<string, unknown>;
interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  parameters?: Json[];
  requestBody?: unknown;
  responses: Record<string, Json>;
  security?: Record<string, string[]>[];
  [extension: `x-${string}`]: unknown;
}

const ERROR_RESPONSE = 'ErrorResponse';
const ERROR_DESCRIPTIONS: Record<string, string> = {
  '400': 'Invalid input; `detail` names the field or parameter',
  '401': 'No credential, or one that is invalid, expired or revoked',
  '403': 'The credential lacks the scope this operation needs; `detail` names it',
  '404': 'Not found, or in a workspace the caller is not a member of',
  '409':
    'Conflict with the current state, a lost race, or a request with this Idempotency-Key still in progress',
  '412': 'The resource changed since the If-Match version',
  '422': 'The Idempotency-Key was already used for a different request',
  '429': 'Rate limited; retry after `Retry-After` seconds',
};
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

/**
 * Completes every operation from its route's metadata, in one place so that new routes
 * need nothing more than their decorators: a summary, the scope it needs (description and
 * `x-required-scope`), one security requirement (none for public routes), the error
 * responses it may give with the `{detail}` schema, and the headers every response
 * carries (X-Request-Id; rate limits where the route is limited).
 */
export function describeOperations(doc: OpenAPIObject, routes: Map<string, RouteAccess>): void {
  const components = (doc.components ??= {});
  const schemas = (components.schemas ??= {});
  schemas[ERROR_RESPONSE] = {
    type: 'object',
    required: ['detail'],
    properties: {
      detail: { type: 'string', description: 'What went wrong, naming the field or rule' },
    },
  };
  components.headers = { ...components.headers, ...RESPONSE_HEADERS };

  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of HTTP_METHODS) {
      const op = (item as Record<string, Operation | undefined>)[method];
      if (!op) continue;
      const access = op.operationId ? routes.get(op.operationId) : undefined;
      if (!access) throw new Error(`OpenAPI: no route metadata for ${method.toUpperCase()} ${path}`);
      describeOperation(op, method, path, access);
    }
  }
}

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });
const RESPONSE_HEADERS: Record<string, Json> = {
  'X-Request-Id': {
    description:
      'The request id (yours if you sent a valid X-Request-Id), also the correlation id of its events',
    schema: { type: 'string' },
  },
  'X-RateLimit-Limit': { description: 'Requests allowed per minute', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the current minute',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Reset': {
    description: 'When the window frees up (Unix epoch seconds)',
    schema: { type: 'integer' },
  },
  'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } },
  'WWW-Authenticate': { description: '`Bearer`', schema: { type: 'string' } },
  'Idempotent-Replayed': {
    description: '`true` when this is the stored answer to an earlier request with the same Idempotency-Key',
    schema: { type: 'string', enum: ['true'] },
  },
};

function describeOperation(op: Operation, method: string, path: string, access: RouteAccess): void {
  op.summary ||= summaryOf(access.handlerName, method, path);
  const statement = accessStatement(access);
  op.description = op.description ? `${op.description}\n\n${statement}` : statement;
  op['x-required-scope'] = access.isPublic ? 'public' : (access.scope ?? 'self');
  op.security = access.isPublic ? [] : [{ bearer: [] }];

  const takesInput = !!op.requestBody || (op.parameters?.length ?? 0) > 0;
  const statuses = new Set<string>();
  if (takesInput || (method === 'post' && !access.isPublic)) statuses.add('400');
  if (!access.isPublic) ['401', '403'].forEach((s) => statuses.add(s));
  if (path.includes('{')) statuses.add('404');
  if (access.rateLimited) statuses.add('429');
  if (method === 'post' && !access.isPublic) {
    ['409', '422'].forEach((s) => statuses.add(s));
    op.parameters = [
      ...(op.parameters ?? []).filter((p) => p.name !== IDEMPOTENCY_HEADER),
      {
        name: IDEMPOTENCY_HEADER,
        in: 'header',
        required: false,
        description:
          'Any 1-255 printable ASCII characters, new per logical request: a retry with the same key and body replays the first answer for 24 h instead of executing again',
        schema: { type: 'string', minLength: 1, maxLength: 255 },
      },
    ];
  }
  for (const status of statuses) op.responses[status] ??= { description: ERROR_DESCRIPTIONS[status] };

  for (const [status, response] of Object.entries(op.responses)) {
    const code = Number(status);
    if (code >= 400 && code < 500) {
      response.content = {
        'application/json': { schema: { $ref: `#/components/schemas/${ERROR_RESPONSE}` } },
      };
    }
    const headers: Record<string, unknown> = { ...(response.headers as Json | undefined) };
    headers['X-Request-Id'] = headerRef('X-Request-Id');
    if (access.rateLimited && !(access.isPublic && code === 401)) {
      for (const h of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'])
        headers[h] = headerRef(h);
    }
    if (code === 429) headers['Retry-After'] = headerRef('Retry-After');
    if (code === 401) headers['WWW-Authenticate'] = headerRef('WWW-Authenticate');
    // Answers refused before the route runs (credential, scope, rate) are never kept for replay.
    if (method === 'post' && !access.isPublic && code < 500 && ![401, 403, 429].includes(code))
      headers['Idempotent-Replayed'] = headerRef('Idempotent-Replayed');
    response.headers = headers;
  }
}

function accessStatement(access: RouteAccess): string {
  if (access.isPublic) return '**Access:** public; no credential needed.';
  if (access.scope && access.self)
    return `**Access:** scope \`${access.scope}\` in the workspace, or the caller acting on itself.`;
  if (access.scope) return `**Access:** scope \`${access.scope}\` in the workspace.`;
  return "**Access:** any valid credential; acts on the caller's own account or member.";
}

const SINGLE_VERBS: Record<string, 'one' | 'many'> = {
  list: 'many',
  get: 'one',
  create: 'one',
  update: 'one',
  remove: 'one',
  delete: 'one',
  archive: 'one',
  revoke: 'one',
  merge: 'one',
  accept: 'one',
  decline: 'one',
  import: 'many',
};
const SEGMENT_NAMES: Record<string, string> = { w: 'workspaces', me: 'profile' };

/**
 * A summary from the handler's name and path, for operations without
 * @ApiOperation({ summary }): `list` on /w/{wid}/members is "List members", `get` on
 * /me/api-keys/{keyId} "Get API key", `revokeTokens` "Revoke tokens", `stream` on
 * .../streams/{streamName} "Get stream".
 */
export function summaryOf(handlerName: string, method: string, path: string): string {
  const words = handlerName
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/\s+/);
  const statics = path
    .replace(/^\/api\/v2/, '')
    .split('/')
    .filter((s) => s && !s.startsWith('{'));
  const last = statics[statics.length - 1] ?? '';
  const verbOf = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
  const kind = words.length === 1 ? SINGLE_VERBS[words[0]] : undefined;
  if (words.length > 1) return verbOf(words.join(' ')); // revokeTokens says what it does
  if (!kind) {
    // A noun (stream, health) or a verb the table lacks: say it from the method and path.
    if (method === 'get')
      return `${path.endsWith('}') || !last.endsWith('s') ? 'Get' : 'List'} ${noun(last, path.endsWith('}') ? 'one' : 'many')}`;
    if (/^[a-z]+-[a-z-]+$/.test(last)) return verbOf(last.replace(/-/g, ' ')); // POST .../create-signup
    return `${verbOf(words[0])} ${noun(last, 'one')}`;
  }
  // `merge` on .../member-roles/{roleId}/merge: the object is the segment before the verb.
  const objectSegment = last === words[0] && statics.length > 1 ? statics[statics.length - 2] : last;
  const many = kind === 'many' && !(method === 'get' && path.endsWith('}'));
  return `${verbOf(words[0])} ${noun(objectSegment, many ? 'many' : 'one')}`;
}

function noun(segment: string, count: 'one' | 'many'): string {
  const plural = (SEGMENT_NAMES[segment] ?? segment).replace(/-/g, ' ').replace(/\bapi\b/g, 'API');
  if (count === 'many' || plural === 'profile') return plural;
  return plural.replace(/ies$/, 'y').replace(/s$/, '');
}
