import { Body, Controller, Get, Module, Param, Post } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { IsString } from 'class-validator';
import { Public, RequireScope } from '../../src/core/auth/auth.decorators';
import { startTestApp, TestApp } from '../support/app';

/** Routes added with nothing but their access decorators, as a future feature would. */
class FutureThingDto {
  @ApiProperty() @IsString() name!: string;
}
@Controller()
class FutureController {
  @Get('future-things')
  @Public()
  list(): string[] {
    return [];
  }

  @Post('w/:wid/future-things')
  @RequireScope('records:write')
  create(@Param('wid') wid: string, @Body() body: FutureThingDto): FutureThingDto {
    return { name: `${wid}:${body.name}` };
  }
}
@Module({ controllers: [FutureController] })
class FutureModule {}

interface Response {
  description?: string;
  content?: Record<string, { schema?: { $ref?: string } }>;
  headers?: Record<string, { $ref?: string }>;
}
interface Operation {
  operationId: string;
  summary?: string;
  description?: string;
  parameters?: { name: string; in: string }[];
  responses: Record<string, Response>;
  security?: Record<string, string[]>[];
  'x-required-scope'?: string;
}
interface Doc {
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; headers: Record<string, unknown> };
}

const PUBLIC = new Set([
  'GET /api/v2/health',
  'GET /api/v2/resources/registry',
  'GET /api/v2/resources/{slug}',
  'GET /api/v2/event-types',
  'GET /api/v2/future-things',
  'GET /api/v2/oauth/authorize',
  'POST /api/v2/oauth/token',
  'POST /api/v2/oauth/revoke',
  'POST /api/v2/oauth/introspect',
  'POST /api/v2/oauth/register',
  'GET /api/v2/.well-known/oauth-authorization-server',
]);

/** The OpenAPI document SDKs are generated from (README, "OpenAPI"). */
describe('OpenAPI document (e2e)', () => {
  let t: TestApp;
  let doc: Doc;
  let operations: { name: string; method: string; path: string; op: Operation }[];
  beforeAll(async () => {
    t = await startTestApp({ extraModules: [FutureModule] });
    doc = (await t.request('GET', '/openapi.json')).body as Doc;
    operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({
        name: `${method.toUpperCase()} ${path}`,
        method,
        path,
        op,
      })),
    );
  });
  afterAll(() => t.close());

  it('describes at least the known operations', () => {
    expect(operations.length).toBeGreaterThan(25);
    expect(operations.map((o) => o.name)).toEqual(expect.arrayContaining([...PUBLIC]));
  });

  it('gives every operation a summary and a statement of the access it needs', () => {
    for (const { name, op } of operations) {
      expect({ name, summary: op.summary }).toEqual({ name, summary: expect.stringMatching(/^[A-Z].{2,}/) });
      expect({ name, description: op.description }).toEqual({
        name,
        description: expect.stringMatching(/\*\*Access:\*\* /),
      });
      const scope = op['x-required-scope'];
      if (PUBLIC.has(name)) expect({ name, scope }).toEqual({ name, scope: 'public' });
      else
        expect({ name, scope }).toEqual({
          name,
          scope: expect.stringMatching(/^(self|[a-z_]+:(read|write|admin))$/),
        });
      if (scope && scope.includes(':')) expect(op.description).toContain(`\`${scope}\``);
    }
    const byName = Object.fromEntries(operations.map((o) => [o.name, o.op]));
    expect(byName['POST /api/v2/w/{wid}/member-roles']['x-required-scope']).toBe('member_roles:write');
    expect(byName['POST /api/v2/w/{wid}/member-roles'].summary).toBe('Create member role');
    expect(byName['GET /api/v2/w/{wid}/members'].summary).toBe('List members');
    expect(byName['GET /api/v2/me/api-keys/{keyId}'].summary).toBe('Get API key');
    expect(byName['POST /api/v2/w/{wid}/member-roles/{roleId}/merge'].summary).toBe('Merge member role');
    expect(byName['GET /api/v2/me']['x-required-scope']).toBe('self');
  });

  it('describes a new route from its decorators alone', () => {
    const byName = Object.fromEntries(operations.map((o) => [o.name, o.op]));
    const list = byName['GET /api/v2/future-things'];
    expect(list).toMatchObject({ summary: 'List future things', security: [], 'x-required-scope': 'public' });
    expect(list.description).toMatch(/public/);
    const create = byName['POST /api/v2/w/{wid}/future-things'];
    expect(create).toMatchObject({
      summary: 'Create future thing',
      security: [{ bearer: [] }],
      'x-required-scope': 'records:write',
    });
    expect(Object.keys(create.responses).sort()).toEqual(
      ['201', '400', '401', '403', '404', '409', '422', '429'].sort(),
    );
  });

  it('has exactly one security requirement per operation, none on public ones', () => {
    for (const { name, op } of operations) {
      expect({ name, security: op.security }).toEqual({
        name,
        security: PUBLIC.has(name) ? [] : [{ bearer: [] }],
      });
    }
  });

  it('lists the error responses each operation can give, with the {detail} schema', () => {
    expect(doc.components.schemas.ErrorResponse).toMatchObject({
      required: ['detail'],
      properties: { detail: { type: 'string' } },
    });
    for (const { name, method, path, op } of operations) {
      const expected: string[] = [];
      if (op.parameters?.length || (op as { requestBody?: unknown }).requestBody) expected.push('400');
      if (!PUBLIC.has(name)) expected.push('401', '403');
      if (path.includes('{')) expected.push('404');
      if (name !== 'GET /api/v2/health') expected.push('429');
      expect({ name, statuses: Object.keys(op.responses) }).toEqual({
        name,
        statuses: expect.arrayContaining(expected),
      });
      if (method !== 'get' && method !== 'delete') expect(expected).toContain('400');
      if (PUBLIC.has(name)) expect(Object.keys(op.responses)).not.toEqual(expect.arrayContaining(['401']));
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400 || Number(status) >= 500) continue;
        expect({ name, status, schema: response.content?.['application/json']?.schema }).toEqual({
          name,
          status,
          schema: { $ref: '#/components/schemas/ErrorResponse' },
        });
      }
    }
  });

  it('documents the request-id and rate-limit headers on responses, Retry-After on 429', () => {
    for (const { name, op } of operations) {
      for (const [status, response] of Object.entries(op.responses)) {
        const headers = Object.keys(response.headers ?? {});
        expect({ name, status, headers }).toEqual({
          name,
          status,
          headers: expect.arrayContaining(
            name === 'GET /api/v2/health'
              ? ['X-Request-Id']
              : ['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'],
          ),
        });
        if (status === '429') expect(headers).toContain('Retry-After');
      }
    }
    for (const name of ['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'])
      expect(doc.components.headers[name]).toMatchObject({ schema: expect.any(Object) });
  });

  it('documents Idempotency-Key, 409 and 422 on authenticated POSTs', () => {
    const posts = operations.filter((o) => o.method === 'post' && !PUBLIC.has(o.name));
    expect(posts.length).toBeGreaterThan(3);
    for (const { name, op } of posts) {
      expect({
        name,
        header: op.parameters?.some((p) => p.name === 'Idempotency-Key' && p.in === 'header'),
      }).toEqual({
        name,
        header: true,
      });
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['409', '422']));
    }
  });

  it('names the configured base URL as its server, so "Try it out" reaches it', () => {
    expect(t.config.publicBaseUrl).toMatch(/\/api\/v2$/);
    expect(doc.servers).toEqual([{ url: t.config.publicBaseUrl.replace(/\/api\/v2$/, '') }]);
  });
});
