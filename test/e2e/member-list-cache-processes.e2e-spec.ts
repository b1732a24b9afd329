import Redis from 'ioredis';
import { createTestDatabase, TestDatabase } from '../support/database';
import {
  bootstrapWithCli,
  reportErrorsAndKillAll,
  serviceEnv,
  ServiceProcess,
  startAllAndApi,
} from '../support/processes';
import { clearRedisPrefix, TEST_REDIS_URL, testRedisPrefix } from '../support/redis';

interface Page {
  items: { id: number; name: string | null; status: string }[];
  total: number;
  page: number;
  pageSize: number;
}

/**
 * Each process keeps the member-list pages it rendered and serves one again while the
 * workspace's list version (moved by the members projection with every change a list
 * shows) is still the one it was rendered at. Two processes on one database: W
 * (ROLE=all) takes the writes and runs the projections, A (ROLE=api) only reads. Every
 * write answers once its projection has it (read-your-writes), so the very next list A
 * serves must show it, with no waiting: a page A kept from before may not come back.
 */
describe('member list pages kept per process, across processes (e2e)', () => {
  let db: TestDatabase;
  const prefix = testRedisPrefix();
  let urlW: string;
  let urlA: string;
  let apiKey: string;
  let workspaceId: string;
  let ownerId: number;
  let processes: ServiceProcess[] = [];
  let redis: Redis;

  beforeAll(async () => {
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 2 });
    db = await createTestDatabase();
    const env = serviceEnv(db.url, prefix);
    const { all: w, api: a } = await startAllAndApi(env, ['all-w', 'api-a']);
    urlW = w.url;
    urlA = a.url;
    processes = [w.proc, a.proc];
    ({ apiKey, workspaceId, memberId: ownerId } = await bootstrapWithCli(env, 'Lists', 'lists@example.com'));
  }, 180_000);

  afterAll(async () => {
    redis?.disconnect();
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
  ): Promise<{ status: number; body: T }> {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
  }

  const list = async (base: string, query = '', token = apiKey): Promise<Page> => {
    const res = await call<Page>(base, 'GET', `/w/${workspaceId}/members${query}`, token);
    expect(res.status).toBe(200);
    return res.body;
  };

  const importMembers = async (members: Record<string, unknown>[]) => {
    const res = await call<{ created: number }>(urlW, 'POST', `/w/${workspaceId}/members/import`, apiKey, {
      members,
    });
    expect(res.status).toBe(200);
  };

  it('a page kept by A is not served once W has changed a member it shows, nor after a new member or an archive', async () => {
    await importMembers([
      { email: 'one@example.com', name: 'One' },
      { email: 'two@example.com', name: 'Two' },
    ]);
    const before = await list(urlA);
    expect(before.total).toBe(3);
    const two = before.items.find((m) => m.name === 'Two')!;
    // Served again (the version has not moved): the same page.
    expect(await list(urlA)).toEqual(before);

    for (let i = 1; i <= 5; i++) {
      const put = await call(urlW, 'PUT', `/w/${workspaceId}/members/${two.id}`, apiKey, {
        name: `Two ${i}`,
      });
      expect(put.status).toBe(200);
      const after = await list(urlA);
      expect(after.items.find((m) => m.id === two.id)?.name).toBe(`Two ${i}`);
      expect(after.total).toBe(3);
    }

    await importMembers([{ email: 'three@example.com', name: 'Three' }]);
    const grown = await list(urlA);
    expect(grown.total).toBe(4);
    expect(grown.items.map((m) => m.name)).toContain('Three');

    const archived = await call(urlW, 'DELETE', `/w/${workspaceId}/members/${two.id}`, apiKey);
    expect(archived.status).toBe(200);
    const active = await list(urlA);
    expect(active.total).toBe(3);
    expect(active.items.map((m) => m.id)).not.toContain(two.id);
    expect((await list(urlA, '?status=archived')).items.map((m) => m.id)).toEqual([two.id]);
  });

  it('a page kept for one query or one caller is never served to another', async () => {
    // An anonymous contact (no email, phone or name) is shown only to members:admin.
    await importMembers([{ externalId: 'anon-1' }]);
    const admin = await list(urlA, '?externalId=anon-1');
    expect(admin.items).toHaveLength(1);
    expect(admin.total).toBe(1);

    const created = await call<{ secret: string }>(urlW, 'POST', '/me/api-keys', apiKey, {
      name: 'reader',
      scopes: ['members:read'],
    });
    expect(created.status).toBe(201);
    const reader = created.body.secret;
    // Same workspace, same query, same list version: the reader's own page, without the contact.
    expect(await list(urlA, '?externalId=anon-1', reader)).toEqual({
      items: [],
      total: 0,
      page: 1,
      pageSize: 50,
    });
    // And the admin's page stays the admin's once the reader's is kept beside it.
    expect(await list(urlA, '?externalId=anon-1')).toEqual(admin);

    const full = await list(urlA);
    const small = await list(urlA, '?pageSize=1');
    expect(small.items).toEqual(full.items.slice(0, 1));
    expect(small.pageSize).toBe(1);
    expect((await list(urlA, '?page=2&pageSize=1')).items).toEqual(full.items.slice(1, 2));
    expect(full.items[0].id).toBe(ownerId);
  });

  it('W serves its own writes from its own kept pages at once (read-your-writes in one process)', async () => {
    const first = await list(urlW);
    const target = first.items.find((m) => m.id !== ownerId)!;
    for (let i = 1; i <= 5; i++) {
      const put = await call(urlW, 'PUT', `/w/${workspaceId}/members/${target.id}`, apiKey, {
        name: `Same process ${i}`,
      });
      expect(put.status).toBe(200);
      expect((await list(urlW)).items.find((m) => m.id === target.id)?.name).toBe(`Same process ${i}`);
    }
  });

  /** The list version the members projection announced (core/http/kept-reads.ts), and the stored one. */
  const versions = async () => ({
    announced: await redis.get(`${prefix}:read-version:member-list:${workspaceId}`),
    stored: (
      (
        await db
          .pool()
          .query(`SELECT version::text AS version FROM member_list_versions WHERE workspace_id = $1`, [
            workspaceId,
          ])
      ).rows[0] as { version: string }
    ).version,
  });

  it('A serves a kept page only while the announced list version is the one it was rendered at', async () => {
    const first = await list(urlA);
    const target = first.items.find((m) => m.id !== ownerId)!;
    const put = await call(urlW, 'PUT', `/w/${workspaceId}/members/${target.id}`, apiKey, {
      name: 'Announced',
    });
    expect(put.status).toBe(200);
    // Announced before it committed, so by the time W answered.
    const { announced, stored } = await versions();
    expect(announced).toBe(stored);
    const kept = await list(urlA);
    expect(kept.items.find((m) => m.id === target.id)?.name).toBe('Announced');

    // Changed behind every cache's back, the stored version moved but not announced: A keeps
    // serving its page from memory (for at most a second), so it asked PostgreSQL nothing...
    await db.pool().query(`UPDATE members SET name = 'Behind' WHERE id = $1`, [target.id]);
    await db
      .pool()
      .query(`UPDATE member_list_versions SET version = version + 1 WHERE workspace_id = $1`, [workspaceId]);
    expect(await list(urlA)).toEqual(kept);
    // ...and, with no version announced (as after a Redis flush), PostgreSQL is asked.
    await redis.del(`${prefix}:read-version:member-list:${workspaceId}`);
    expect((await list(urlA)).items.find((m) => m.id === target.id)?.name).toBe('Behind');

    // A change announced again is in A's very next list.
    const again = await call(urlW, 'PUT', `/w/${workspaceId}/members/${target.id}`, apiKey, {
      name: 'Again',
    });
    expect(again.status).toBe(200);
    expect((await versions()).announced).toBe((await versions()).stored);
    expect((await list(urlA)).items.find((m) => m.id === target.id)?.name).toBe('Again');
  });
});
