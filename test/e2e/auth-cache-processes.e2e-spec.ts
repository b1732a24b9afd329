import { createTestDatabase, TestDatabase } from '../support/database';
import {
  bootstrapWithCli,
  eventually,
  reportErrorsAndKillAll,
  serviceEnv,
  ServiceProcess,
  startAllAndApi,
} from '../support/processes';
import { clearRedisPrefix, testRedisPrefix } from '../support/redis';

/**
 * Each API process caches resolved credentials and memberships (core AuthCache). Two
 * processes on one database: A (ROLE=all, runs the projections) takes the writes, B
 * (ROLE=api) only serves requests. Both keep cache entries for up to 60 s here, so a
 * change B sees within a second comes from the invalidation its events cause (the
 * checkpoint notice of the projection that applied them), not from entries ageing out.
 */
describe('credential and membership cache across processes (e2e)', () => {
  let db: TestDatabase;
  const prefix = testRedisPrefix();
  let urlA: string;
  let urlB: string;
  let apiKey: string;
  let workspaceId: string;
  let memberId: number;
  let processes: ServiceProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    const env = serviceEnv(db.url, prefix, {
      AUTH_CACHE_TTL_MS: '60000',
    });
    const { all: a, api: b } = await startAllAndApi(env, ['api-a', 'api-b']);
    urlA = a.url;
    urlB = b.url;
    processes = [a.proc, b.proc];
    ({ apiKey, workspaceId, memberId } = await bootstrapWithCli(env, 'Cache', 'cache@example.com'));
  }, 180_000);

  afterAll(async () => {
    await reportErrorsAndKillAll(processes);
    await clearRedisPrefix(prefix);
    await db?.drop();
  });

  async function call(
    base: string,
    method: string,
    path: string,
    token: string,
    body?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }

  /** Polls B until `status` comes back, for at most one second. */
  const withinOneSecond = (what: string, fn: () => Promise<number>, status: number) =>
    eventually(async () => (await fn()) === status, what, 1000, 20);

  it('a key revoked through process A is refused by process B within one second', async () => {
    const created = await call(urlA, 'POST', '/me/api-keys', apiKey, {
      name: 'revoked elsewhere',
      scopes: ['workspace:read'],
    });
    expect(created.status).toBe(201);
    const secret = created.body.secret as string;
    // B resolves the key and caches it.
    expect((await call(urlB, 'GET', `/w/${workspaceId}`, secret)).status).toBe(200);
    expect((await call(urlB, 'GET', `/w/${workspaceId}`, secret)).status).toBe(200);

    expect((await call(urlA, 'DELETE', `/me/api-keys/${created.body.id as string}`, apiKey)).status).toBe(
      204,
    );

    await withinOneSecond(
      'process B to refuse the revoked key',
      async () => (await call(urlB, 'GET', `/w/${workspaceId}`, secret)).status,
      401,
    );
    const refused = await call(urlB, 'GET', `/w/${workspaceId}`, secret);
    expect(refused).toEqual({
      status: 401,
      body: { detail: 'The credential is invalid, expired or revoked' },
    });
  });

  it('a role change and narrowed role scopes through A apply to the next requests in B', async () => {
    const role = await call(urlA, 'POST', `/w/${workspaceId}/member-roles`, apiKey, {
      name: 'Narrowing',
      permissions: ['workspace:read', 'members:write', 'member_roles:write'],
    });
    expect(role.status).toBe(201);
    const roleId = role.body.id as number;
    // B caches the membership as Manager, which holds workspace:admin.
    expect((await call(urlB, 'GET', `/w/${workspaceId}/events`, apiKey)).status).toBe(200);

    const moved = await call(urlA, 'PUT', `/w/${workspaceId}/members/${memberId}`, apiKey, {
      memberRoleId: roleId,
    });
    expect(moved.status).toBe(200);
    await withinOneSecond(
      'process B to apply the new role',
      async () => (await call(urlB, 'GET', `/w/${workspaceId}/events`, apiKey)).status,
      403,
    );
    expect((await call(urlB, 'GET', `/w/${workspaceId}/member-roles`, apiKey)).status).toBe(200);

    const narrowed = await call(urlA, 'PUT', `/w/${workspaceId}/member-roles/${roleId}`, apiKey, {
      // Without member_roles (write implied read).
      permissions: ['workspace:read', 'members:write'],
    });
    expect(narrowed.status).toBe(200);
    await withinOneSecond(
      'process B to apply the narrower scopes',
      async () => (await call(urlB, 'GET', `/w/${workspaceId}/member-roles`, apiKey)).status,
      403,
    );
    const refused = await call(urlB, 'GET', `/w/${workspaceId}/member-roles`, apiKey);
    expect(refused).toEqual({
      status: 403,
      body: { detail: 'This credential lacks the scope member_roles:read' },
    });
    // What the role still grants still works in B.
    expect((await call(urlB, 'GET', `/w/${workspaceId}/members`, apiKey)).status).toBe(200);
  });
});
