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
 * Attack, fifth pass, across two processes: W (ROLE=all) takes the writes, A (ROLE=api)
 * serves the reads that follow at once, both keeping cached credentials, memberships and
 * kept pages for 60 s, so what A shows right after W answered comes from the shared read
 * models and the invalidations, not from entries ageing out.
 */
describe('Attack: identity and access, fifth pass, two processes (e2e)', () => {
  let db: TestDatabase;
  const prefix = testRedisPrefix();
  let urlA: string;
  let urlW: string;
  let apiKey: string;
  let workspaceId: string;
  let memberId: number;
  let processes: ServiceProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    const env = serviceEnv(db.url, prefix, { AUTH_CACHE_TTL_MS: '60000' });
    const { all: w, api: a } = await startAllAndApi(env, ['all-w', 'api-a']);
    urlW = w.url;
    urlA = a.url;
    processes = [w.proc, a.proc];
    ({ apiKey, workspaceId, memberId } = await bootstrapWithCli(env, 'Fifth', 'fifth@example.com'));
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
  ): Promise<{ status: number; body: Record<string, any>; etag: string | null }> {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return {
      status: res.status,
      body: text ? (JSON.parse(text) as Record<string, any>) : {},
      etag: res.headers.get('etag'),
    };
  }
  const w = (path: string) => `/w/${workspaceId}${path}`;

  it('each PUT answered by W is in A’s very next GET (workspace, list of workspaces, member, role, profile)', async () => {
    // A reads everything first, so whatever it keeps is warm.
    const role = await call(urlW, 'POST', w('/member-roles'), apiKey, {
      name: 'Seen elsewhere',
      permissions: ['workspace:read'],
    });
    expect(role.status).toBe(201);
    const roleId = role.body.id as number;
    const signup = await call(urlW, 'POST', w('/create-signup'), apiKey, {
      member: { email: 'ryw@example.com' },
    });
    const other = signup.body.member.id as number;
    for (let round = 1; round <= 5; round++) {
      for (const path of ['', '/members', `/members/${other}`, `/member-roles/${roleId}`])
        expect((await call(urlA, 'GET', w(path), apiKey)).status).toBe(200);
      expect((await call(urlA, 'GET', '/w', apiKey)).status).toBe(200);
      expect((await call(urlA, 'GET', '/me', apiKey)).status).toBe(200);

      const ws = await call(urlW, 'PUT', w(''), apiKey, { name: `Fifth ${round}` });
      expect(ws.status).toBe(200);
      const seen = await call(urlA, 'GET', w(''), apiKey);
      expect([seen.body.name, seen.etag]).toEqual([`Fifth ${round}`, ws.etag]);
      const listed = await call(urlA, 'GET', '/w', apiKey);
      expect(listed.body.items.find((i: { id: string }) => i.id === workspaceId).name).toBe(`Fifth ${round}`);

      const member = await call(urlW, 'PUT', w(`/members/${other}`), apiKey, { name: `Member ${round}` });
      expect(member.status).toBe(200);
      const m = await call(urlA, 'GET', w(`/members/${other}`), apiKey);
      expect([m.body.name, m.etag]).toEqual([`Member ${round}`, member.etag]);
      const inList = await call(urlA, 'GET', w('/members?search=ryw'), apiKey);
      expect(inList.body.items.map((i: { name: string }) => i.name)).toEqual([`Member ${round}`]);

      const renamed = await call(urlW, 'PUT', w(`/member-roles/${roleId}`), apiKey, {
        name: `Seen ${round}`,
      });
      expect(renamed.status).toBe(200);
      const r = await call(urlA, 'GET', w(`/member-roles/${roleId}`), apiKey);
      expect([r.body.name, r.etag]).toEqual([`Seen ${round}`, renamed.etag]);

      const me = await call(urlW, 'PUT', '/me', apiKey, { name: `Owner ${round}` });
      expect(me.status).toBe(200);
      expect((await call(urlA, 'GET', '/me', apiKey)).body.name).toBe(`Owner ${round}`);
      expect((await call(urlA, 'GET', w(`/members/${memberId}`), apiKey)).status).toBe(200);
    }
  });

  it('a member’s role change through W is in A’s next read by the member’s own token; its archive ends the token in A within a second', async () => {
    const narrow = await call(urlW, 'POST', w('/member-roles'), apiKey, {
      name: 'Narrow reader',
      permissions: ['workspace:read'],
    });
    const person = await call(urlW, 'POST', w('/create-signup'), apiKey, {
      member: { email: 'moved@example.com' },
    });
    const id = person.body.member.id as number;
    const token = person.body.token as string;
    // A caches the member token's membership (self access to its own member).
    expect((await call(urlA, 'GET', w(`/members/${id}`), token)).status).toBe(200);
    const moved = await call(urlW, 'PUT', w(`/members/${id}`), apiKey, { memberRoleId: narrow.body.id });
    expect(moved.status).toBe(200);
    const seen = await call(urlA, 'GET', w(`/members/${id}`), token);
    expect(seen.body.memberRoleId).toBe(narrow.body.id);
    // Archived through W: A refuses its token within a second, whatever it cached.
    expect((await call(urlW, 'DELETE', w(`/members/${id}`), apiKey)).status).toBe(200);
    await eventually(
      async () => (await call(urlA, 'GET', '/me', token)).status === 401,
      'A to refuse the archived member’s token',
      1000,
      20,
    );
  });
});
