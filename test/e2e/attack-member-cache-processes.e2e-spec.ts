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

interface Member {
  id: number;
  name: string | null;
  email: string | null;
  externalId: string | null;
  memberRoleId: number;
  status: string;
}
interface Page {
  items: Member[];
  total: number;
  page: number;
  pageSize: number;
}
interface Res<T = Record<string, unknown>> {
  status: number;
  body: T;
}

/**
 * Attack on the caches of the member list and of the callers' rights, as a hostile client
 * with two processes on one database: W (ROLE=all) takes the writes and projects, A
 * (ROLE=api) only reads. The auth cache's TTL is a minute, so only the invalidation by
 * events can make A see a demotion or a revocation: each must take effect in A within one
 * second of W's answer, and every change a list shows must be in A's very next list.
 */
describe('Attack: member list and auth caches across two processes (e2e)', () => {
  let db: TestDatabase;
  const prefix = testRedisPrefix();
  let urlW: string;
  let urlA: string;
  let apiKey: string;
  let workspaceId: string;
  let ownerId: number;
  let otherKey: string;
  let otherWorkspaceId: string;
  let roles: Record<string, number>;
  let processes: ServiceProcess[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    db = await createTestDatabase();
    env = serviceEnv(db.url, prefix, {
      AUTH_CACHE_TTL_MS: '60000',
    });
    const { all, api } = await startAllAndApi(env, ['all-w', 'api-a']);
    urlW = all.url;
    urlA = api.url;
    processes = [all.proc, api.proc];
    ({
      apiKey,
      workspaceId,
      memberId: ownerId,
    } = await bootstrapWithCli(env, 'Attacked', 'attacked@example.com'));
    ({ apiKey: otherKey, workspaceId: otherWorkspaceId } = await bootstrapWithCli(
      env,
      'Other',
      'other@example.com',
    ));
    const listed = await call<{ items: { id: number; name: string }[] }>(
      urlW,
      'GET',
      w('/member-roles?pageSize=100'),
      apiKey,
    );
    expect(listed.status).toBe(200);
    roles = Object.fromEntries(listed.body.items.map((r) => [r.name, r.id]));
  }, 240_000);

  afterAll(async () => {
    await reportErrorsAndKillAll(processes);
    await clearRedisPrefix(prefix);
    await db?.drop();
  });

  async function call<T = Record<string, unknown>>(
    base: string,
    method: string,
    path: string,
    token: string,
    body?: unknown,
  ): Promise<Res<T>> {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
  }
  const w = (path: string, wid = workspaceId) => `/w/${wid}${path}`;

  const list = async (base: string, query = '', token = apiKey): Promise<Page> => {
    const res = await call<Page>(base, 'GET', w(`/members${query}`), token);
    if (res.status !== 200) throw new Error(JSON.stringify(res));
    return res.body;
  };

  /** `check` true within one second (the bound a demotion or revocation must meet everywhere). */
  async function withinOneSecond(check: () => Promise<boolean>, what: string): Promise<void> {
    const deadline = Date.now() + 1000;
    for (;;) {
      if (await check()) return;
      if (Date.now() > deadline) throw new Error(`not within one second: ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  const signup = async (member: Record<string, unknown>) => {
    const res = await call<{ token: string; member: { id: number; memberRoleId: number } }>(
      urlW,
      'POST',
      w('/create-signup'),
      apiKey,
      { member },
    );
    expect([200, 201]).toContain(res.status);
    return res.body;
  };

  const newKey = async (scopes: string[]) => {
    const res = await call<{ id: string; secret: string }>(urlW, 'POST', '/me/api-keys', apiKey, {
      name: `attack ${scopes.join(' ')}`,
      scopes,
    });
    expect(res.status).toBe(201);
    return res.body;
  };

  it('never serves a page kept for a wider caller to a narrower one, nor one workspace’s page to another', async () => {
    const imported = await call(urlW, 'POST', w('/members/import'), apiKey, {
      members: [{ externalId: 'hidden-1' }, { name: 'Shown', email: 'shown@example.com' }],
    });
    expect(imported.status).toBe(200);
    const admin = await list(urlA);
    expect(admin.items.map((m) => m.externalId)).toContain('hidden-1');
    const reader = (await newKey(['members:read'])).secret;
    // The same query, same version: the reader's own page, without the anonymous contact.
    const narrow = await list(urlA, '', reader);
    expect(narrow.items.map((m) => m.externalId)).not.toContain('hidden-1');
    expect(narrow.total).toBe(admin.total - 1);
    // Searching for it does not find it either (search is a parameter of the reader's own query).
    expect(await list(urlA, '?search=hidden', reader)).toMatchObject({ items: [], total: 0 });
    expect((await list(urlA, '?search=hidden')).total).toBe(1);
    // A key without members:read gets no list at all, however warm A's pages are.
    const writerOnly = (await newKey(['records:read'])).secret;
    const refused = await call(urlA, 'GET', w('/members'), writerOnly);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toEqual(expect.any(String));
    // Another workspace's id in the path, with its page kept on A: this workspace's key gets no page of it.
    const otherPage = await call<Page>(urlA, 'GET', w('/members', otherWorkspaceId), otherKey);
    expect(otherPage.status).toBe(200);
    for (const base of [urlA, urlW]) {
      const crossed = await call(base, 'GET', w('/members', otherWorkspaceId), apiKey);
      expect([403, 404]).toContain(crossed.status);
      expect(crossed.body).not.toHaveProperty('items');
      // The same id in upper case names the same workspace, and is refused the same way.
      const upper = await call(base, 'GET', w('/members', otherWorkspaceId.toUpperCase()), apiKey);
      expect([403, 404]).toContain(upper.status);
      expect(upper.body).not.toHaveProperty('items');
    }
  });

  it('a member demoted in W sees a narrower list in A within one second, and none once it loses members:read', async () => {
    const role = async (name: string, permissions: string[]) => {
      const res = await call<{ id: number }>(urlW, 'POST', w('/member-roles'), apiKey, { name, permissions });
      expect(res.status).toBe(201);
      return res.body.id;
    };
    const readers = await role('Readers', ['members:read']);
    const admins = await role('Admins', ['members:read', 'members:write', 'members:admin']);
    // A person of another workspace (its bootstrap key acts wherever it is a member), invited here as an admin.
    const person = await bootstrapWithCli(env, 'Elsewhere', 'demoted@example.com');
    const invited = await call<{ id: string }>(urlW, 'POST', w('/invitations'), apiKey, {
      email: 'demoted@example.com',
      memberRoleId: admins,
    });
    expect(invited.status).toBe(201);
    const accepted = await eventually(async () => {
      const r = await call<{ member: { id: number } }>(
        urlW,
        'POST',
        `/me/invitations/${invited.body.id}/accept`,
        person.apiKey,
      );
      return r.status === 200 ? r : undefined;
    }, 'the invitation to be accepted');
    const held = { member: accepted.body.member };
    const token = person.apiKey;
    // A keeps the admin page for this caller (and its membership in the auth cache).
    const wide = await list(urlA, '', token);
    expect(wide.items.map((m) => m.externalId)).toContain('hidden-1');

    const demoted = await call(urlW, 'PUT', w(`/members/${held.member.id}`), apiKey, {
      memberRoleId: readers,
    });
    expect(demoted.status).toBe(200);
    await withinOneSecond(async () => {
      const r = await call<Page>(urlA, 'GET', w('/members'), token);
      return r.status === 200 && !r.body.items.some((m) => m.externalId === 'hidden-1');
    }, 'the demotion to narrow the list in A');
    // And the role held shows in the list at once (read-your-writes), in both processes.
    for (const base of [urlA, urlW])
      expect((await list(base, `?roleId=${readers}`)).items.map((m) => m.id)).toEqual([held.member.id]);

    // The role's scopes are narrowed in W: no members:read, so no list in A within one second.
    const narrowed = await call(urlW, 'PUT', w(`/member-roles/${readers}`), apiKey, {
      name: 'Readers',
      permissions: ['records:read'],
    });
    expect(narrowed.status).toBe(200);
    await withinOneSecond(
      async () => (await call(urlA, 'GET', w('/members'), token)).status === 403,
      'the role change to refuse the list in A',
    );

    // Archived in W: its key reaches nothing of the workspace in A within one second.
    const archived = await call(urlW, 'DELETE', w(`/members/${held.member.id}`), apiKey);
    expect(archived.status).toBe(200);
    await withinOneSecond(async () => {
      const r = await call(urlA, 'GET', w(`/members/${held.member.id}`), token);
      // No membership left: the workspace is not found for this caller, as for a stranger.
      return r.status === 404 && r.body.detail === 'Workspace not found';
    }, 'the archived member to be refused in A');
  });

  it('a revoked key gets no kept page in A within one second', async () => {
    const key = await newKey(['members:read']);
    expect((await list(urlA, '', key.secret)).total).toBeGreaterThan(0);
    expect((await list(urlA, '', key.secret)).total).toBeGreaterThan(0);
    const revoked = await call(urlW, 'DELETE', `/me/api-keys/${key.id}`, apiKey);
    expect([200, 204]).toContain(revoked.status);
    await withinOneSecond(
      async () => (await call(urlA, 'GET', w('/members'), key.secret)).status === 401,
      'the revoked key to be refused in A',
    );
  });

  it('every change a list shows is in A’s and W’s very next list (create, edit, role, merge, archive, import, link)', async () => {
    const both = async (query: string) => [await list(urlA, query), await list(urlW, query)];
    const base = await list(urlA, '?status=all&pageSize=1000');
    // Warm every query below in both processes.
    const queries = ['', '?status=all', '?status=archived', '?search=fresh', `?roleId=${roles.User}`];
    for (const q of queries) await both(q);

    const created = await signup({ name: 'Fresh One', email: 'fresh1@example.com' });
    for (const page of await both('?search=fresh'))
      expect(page.items.map((m) => m.id)).toEqual([created.member.id]);
    for (const page of await both('?status=all')) expect(page.total).toBe(base.total + 1);

    const renamed = await call(urlW, 'PUT', w(`/members/${created.member.id}`), apiKey, {
      name: 'Fresh Renamed',
    });
    expect(renamed.status).toBe(200);
    for (const page of await both('?search=fresh'))
      expect(page.items.map((m) => m.name)).toEqual(['Fresh Renamed']);

    const toUser = await call(urlW, 'PUT', w(`/members/${created.member.id}`), apiKey, {
      memberRoleId: roles.User,
    });
    expect(toUser.status).toBe(200);
    for (const page of await both(`?roleId=${roles.User}`))
      expect(page.items.map((m) => m.id)).toContain(created.member.id);

    // A merge moves every holder of the source role: the source role's list is empty at once.
    const temp = await call<{ id: number }>(urlW, 'POST', w('/member-roles'), apiKey, {
      name: 'Temp',
      permissions: ['members:read'],
    });
    expect(temp.status).toBe(201);
    const moved = await call(urlW, 'PUT', w(`/members/${created.member.id}`), apiKey, {
      memberRoleId: temp.body.id,
    });
    expect(moved.status).toBe(200);
    for (const page of await both(`?roleId=${temp.body.id}`))
      expect(page.items.map((m) => m.id)).toEqual([created.member.id]);
    const merged = await call(urlW, 'POST', w(`/member-roles/${temp.body.id}/merge`), apiKey, {
      targetRoleId: roles.User,
    });
    expect(merged.status).toBe(200);
    for (const page of await both(`?roleId=${temp.body.id}`))
      expect(page).toMatchObject({ items: [], total: 0 });
    for (const page of await both(`?roleId=${roles.User}`))
      expect(page.items.map((m) => m.id)).toContain(created.member.id);

    const archived = await call(urlW, 'DELETE', w(`/members/${created.member.id}`), apiKey);
    expect(archived.status).toBe(200);
    for (const page of await both('?search=fresh')) expect(page).toMatchObject({ items: [], total: 0 });
    for (const page of await both('?status=archived'))
      expect(page.items.map((m) => m.id)).toContain(created.member.id);
    for (const page of await both('?status=all')) expect(page.total).toBe(base.total + 1);

    const imported = await call(urlW, 'POST', w('/members/import'), apiKey, {
      members: [{ name: 'Fresh Two', email: 'fresh2@example.com' }],
    });
    expect(imported.status).toBe(200);
    for (const page of await both('?search=fresh'))
      expect(page.items.map((m) => m.name)).toEqual(['Fresh Two']);
    // An upsert that changes a row already there.
    const upserted = await call(urlW, 'POST', w('/members/import'), apiKey, {
      members: [{ name: 'Fresh Two Upserted', email: 'fresh2@example.com' }],
      upsert: true,
    });
    expect(upserted.status).toBe(200);
    for (const page of await both('?search=fresh'))
      expect(page.items.map((m) => m.name)).toEqual(['Fresh Two Upserted']);
  });

  it('writes from both processes at once: once every write has answered, both lists show the last of each', async () => {
    const made = await call<{ results: { memberId: number }[] }>(urlW, 'POST', w('/members/import'), apiKey, {
      members: Array.from({ length: 6 }, (_, i) => ({ name: `Race ${i}`, email: `race${i}@example.com` })),
    });
    expect(made.status).toBe(200);
    const ids = (await list(urlA, '?search=race')).items.map((m) => m.id);
    expect(ids).toHaveLength(6);
    for (let round = 1; round <= 3; round++) {
      const reads: Promise<unknown>[] = [];
      const writes = ids.map(async (id, i) => {
        reads.push(list(i % 2 ? urlA : urlW, '?search=race'));
        const r = await call(i % 2 ? urlW : urlA, 'PUT', w(`/members/${id}`), apiKey, {
          name: `Race ${i} r${round}`,
        });
        expect(r.status).toBe(200);
      });
      await Promise.all(writes);
      await Promise.all(reads);
      for (const base of [urlA, urlW]) {
        const page = await list(base, '?search=race');
        expect(page.items.map((m) => m.name)).toEqual(ids.map((_, i) => `Race ${i} r${round}`));
      }
    }
  });

  it('bad list parameters are a 400 with a detail in either process, and change nothing', async () => {
    const before = await list(urlA);
    for (const q of [
      '?pageSize=1001',
      '?pageSize=0',
      '?page=0',
      '?page=-1',
      '?page=abc',
      '?page=9007199254740993',
      '?roleId=abc',
      '?roleId=1&memberRoleId=2',
      '?status=deleted',
      `?email=${'x'.repeat(300)}`,
      '?startTime=yesterday',
      '?startTime=2026-01-02T00:00:00Z&endTime=2026-01-01T00:00:00Z',
      '?page=1.5',
      '?page_size=2000',
      `?search=${'s'.repeat(1000)}`,
    ]) {
      for (const base of [urlA, urlW]) {
        const r = await call(base, 'GET', w(`/members${q}`), apiKey);
        expect({ q, status: r.status }).toEqual({ q, status: 400 });
        expect(r.body.detail).toEqual(expect.any(String));
      }
    }
    expect(await list(urlA)).toEqual(before);
    // The largest page is served, and a page past the end is empty with the true total.
    const big = await list(urlA, '?pageSize=1000');
    expect(big.items).toHaveLength(big.total);
    expect(await list(urlA, '?page=1000&pageSize=1000')).toEqual({
      items: [],
      total: big.total,
      page: 1000,
      pageSize: 1000,
    });
    // LIKE wildcards are searched for as text, not as patterns: a key per search, no widening.
    expect(await list(urlA, '?search=%25')).toMatchObject({ items: [], total: 0 });
    expect(await list(urlA, '?search=_')).toMatchObject({ items: [], total: 0 });
  });

  it('the workspace’s default role set in W is the role of a signup taken in A at once', async () => {
    const role = await call<{ id: number }>(urlW, 'POST', w('/member-roles'), apiKey, {
      name: 'Default Here',
      permissions: [],
    });
    expect(role.status).toBe(201);
    // A keeps the current default (a signup through A reads it).
    const first = await call<{ member: { memberRoleId: number } }>(
      urlA,
      'POST',
      w('/create-signup'),
      apiKey,
      {
        member: { name: 'Before Default', email: 'before-default@example.com' },
      },
    );
    expect([200, 201]).toContain(first.status);
    expect(first.body.member.memberRoleId).not.toBe(role.body.id);
    const updated = await call(urlW, 'PUT', `/w/${workspaceId}`, apiKey, {
      settings: { defaultMemberRoleId: role.body.id },
    });
    expect(updated.status).toBe(200);
    await withinOneSecond(async () => {
      const r = await call<{ member: { id: number; memberRoleId: number } }>(
        urlA,
        'POST',
        w('/create-signup'),
        apiKey,
        { member: { name: 'After Default', email: `after-default-${Date.now()}@example.com` } },
      );
      expect([200, 201]).toContain(r.status);
      return r.body.member.memberRoleId === role.body.id;
    }, 'the default role to apply in A');
    expect(ownerId).toBeGreaterThan(0);
  });
});
