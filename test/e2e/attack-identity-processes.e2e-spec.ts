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
 * Attack: a member's effective role is kept in the auth cache (emptied once a role's merge
 * is projected), so a process decides on the role a member held before a merge for as
 * long as the projection lags. W (ROLE=all) projects while the fixtures are made, then
 * stops: A (ROLE=api) serves the rest with no notice of the merge arriving, the longest
 * such lag. Moving a member off its role must still be checked against the role it holds
 * now, read from the store, never the cached one.
 */
describe('Attack: member writes across two processes (aggregate cache, cached effective roles) (e2e)', () => {
  let db: TestDatabase;
  const prefix = testRedisPrefix();
  let urlA: string;
  let urlW: string;
  let apiKey: string;
  let workspaceId: string;
  let processes: ServiceProcess[] = [];
  let worker: ServiceProcess;
  let env: Record<string, string>;

  beforeAll(async () => {
    db = await createTestDatabase();
    env = serviceEnv(db.url, prefix, {
      AUTH_CACHE_TTL_MS: '60000',
    });
    const { all: w, api: a } = await startAllAndApi(env, ['all-w', 'api-a']);
    urlW = w.url;
    urlA = a.url;
    worker = w.proc;
    processes = [w.proc, a.proc];
    ({ apiKey, workspaceId } = await bootstrapWithCli(env, 'Stale', 'stale@example.com'));
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
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: Record<string, unknown>; etag: string | null }> {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return {
      status: res.status,
      body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
      etag: res.headers.get('etag'),
    };
  }
  const w = (path: string) => `/w/${workspaceId}${path}`;

  it('decides a PUT in A on the member as B left it: no lost update, If-Match against the stored revision, no write after B archived it', async () => {
    await eventually(async () => (await call(urlW, 'GET', w(''), apiKey)).status === 200, 'the key to work');
    const created = await call(urlW, 'POST', w('/create-signup'), apiKey, {
      member: { name: 'Twice', email: 'twice@example.com' },
    });
    expect(created.status).toBe(201);
    const id = (created.body.member as { id: number }).id;
    // A keeps the member (its cache), then B changes it.
    const a1 = await call(urlA, 'PUT', w(`/members/${id}`), apiKey, { name: 'From A' });
    expect(a1.status).toBe(200);
    const b1 = await call(urlW, 'PUT', w(`/members/${id}`), apiKey, { name: 'From B', notifyEmail: true });
    expect(b1.status).toBe(200);
    // A stale If-Match (A's own last answer) is a 412 in A, though A's cache holds that revision.
    const stale = await call(
      urlA,
      'PUT',
      w(`/members/${id}`),
      apiKey,
      { phone: '+14155550999' },
      {
        'if-match': a1.etag!,
      },
    );
    expect(stale.status).toBe(412);
    // B's ETag is current: A accepts it, and keeps B's changes (no lost update).
    const fresh = await call(
      urlA,
      'PUT',
      w(`/members/${id}`),
      apiKey,
      { phone: '+14155550999' },
      {
        'if-match': b1.etag!,
      },
    );
    expect(fresh.status).toBe(200);
    const after = await eventually(async () => {
      const r = await call(urlW, 'GET', w(`/members/${id}`), apiKey);
      return r.body.phone === '+14155550999' ? r : undefined;
    }, 'the phone to be projected');
    expect(after.body).toMatchObject({ name: 'From B', notifyEmail: true, phone: '+14155550999' });
    // B archives it; A, whose cache holds it active, must not write to it.
    const archived = await call(urlW, 'DELETE', w(`/members/${id}`), apiKey);
    expect(archived.status).toBe(200);
    const late = await call(urlA, 'PUT', w(`/members/${id}`), apiKey, { name: 'After archive' });
    expect(late.status).not.toBe(200);
    expect(late.status).toBeLessThan(500);
    const final = await eventually(async () => {
      const r = await call(urlW, 'GET', w(`/members/${id}`), apiKey);
      return r.body.status === 'archived' ? r : undefined;
    }, 'the archive to be projected');
    expect(final.body).toMatchObject({ name: 'From B', status: 'archived' });
  });

  it('refuses moving a member off a role merged into one the caller could not take away, while the merge is unprojected', async () => {
    const role = async (name: string, permissions: string[]) => {
      const res = await call(urlW, 'POST', w('/member-roles'), apiKey, { name, permissions });
      expect(res).toMatchObject({ status: 201 });
      return res.body.id as number;
    };
    // The bootstrap key works once W has projected it.
    await eventually(async () => (await call(urlW, 'GET', w(''), apiKey)).status === 200, 'the key to work');
    const desk3 = ['members:read', 'members:write', 'members:admin'];
    const narrow = await role('Front desk', desk3);
    const other = await role('Front desk 2', desk3);
    const roles = await call(urlW, 'GET', w('/member-roles?pageSize=100'), apiKey);
    const manager = (roles.body.items as { id: number; name: string }[]).find(
      (r) => r.name === 'Manager',
    )!.id;
    const key = await call(urlW, 'POST', '/me/api-keys', apiKey, {
      name: 'front desk key',
      scopes: ['members:read', 'members:write', 'members:admin'],
    });
    expect(key.status).toBe(201);
    const desk = key.body.secret as string;
    // A person with an Account (a merge onto Manager needs one) holding the narrow role.
    const held = await bootstrapWithCli(env, 'Elsewhere', 'held@example.com');
    const invited = await call(urlW, 'POST', w('/invitations'), apiKey, {
      email: 'held@example.com',
      memberRoleId: narrow,
    });
    expect(invited.status).toBe(201);
    const accepted = await eventually(async () => {
      const r = await call(urlW, 'POST', `/me/invitations/${invited.body.id as string}/accept`, held.apiKey);
      return r.status === 200 ? r : undefined;
    }, 'the invitation to be accepted');
    const memberId = (accepted.body.member as { id: number }).id;
    // A resolves the desk key and the member's role (both now in its auth cache).
    await eventually(
      async () => (await call(urlA, 'GET', w(`/members/${memberId}`), desk)).status === 200,
      'A to see the member',
    );
    expect((await call(urlA, 'PUT', w(`/members/${memberId}`), desk, { name: 'Held Again' })).status).toBe(
      200,
    );

    // The projections stop: no notice of what follows reaches A's cache.
    await worker.kill('SIGKILL');
    const merged = await call(urlA, 'POST', w(`/member-roles/${narrow}/merge`), apiKey, {
      targetRoleId: manager,
    });
    expect(merged.status).toBe(200);

    // The member now holds Manager: a front-desk key may not take Manager's scopes away from it.
    const moved = await call(urlA, 'PUT', w(`/members/${memberId}`), desk, { memberRoleId: other });
    expect(moved.status).toBe(403);
    expect(moved.body.detail).toMatch(/^memberRoleId: /);
    const archived = await call(urlA, 'DELETE', w(`/members/${memberId}`), desk);
    expect(archived.status).toBe(403);
  });
});
