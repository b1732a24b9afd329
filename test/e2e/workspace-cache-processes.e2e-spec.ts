import Redis from 'ioredis';
import { createTestDatabase, TestDatabase } from '../support/database';
import {
  bootstrapWithCli,
  eventually,
  reportErrorsAndKillAll,
  serviceEnv,
  ServiceProcess,
  startAllAndApi,
} from '../support/processes';
import { clearRedisPrefix, TEST_REDIS_URL, testRedisPrefix } from '../support/redis';

interface Workspace {
  id: string;
  name: string;
  settings: { defaultMemberRoleId?: number; timezone?: string };
  updatedAt: string;
}

/**
 * Each process keeps the answer of GET /w/{wid} and serves it again while the version the
 * workspaces projection last announced in Redis is the one it was read at (announced
 * before the projection's commit). Two processes on one database: W (ROLE=all) takes the
 * writes and runs the projections, A (ROLE=api) only reads. Every write answers once its
 * projection has it (read-your-writes), so the very next GET that A serves must show it,
 * with no waiting: an answer A kept from before may not come back.
 */
describe('GET /w/{wid} kept per process, across processes (e2e)', () => {
  let db: TestDatabase;
  const prefix = testRedisPrefix();
  let urlW: string;
  let urlA: string;
  let apiKey: string;
  let workspaceId: string;
  let processes: ServiceProcess[] = [];
  let redis: Redis;

  beforeAll(async () => {
    db = await createTestDatabase();
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 2 });
    const env = serviceEnv(db.url, prefix);
    const { all: w, api: a } = await startAllAndApi(env, ['all-w', 'api-a']);
    urlW = w.url;
    urlA = a.url;
    processes = [w.proc, a.proc];
    ({ apiKey, workspaceId } = await bootstrapWithCli(env, 'Kept', 'kept@example.com'));
    await eventually(async () => (await get(urlW)).status === 200, 'the bootstrap key to work');
  }, 180_000);

  afterAll(async () => {
    await reportErrorsAndKillAll(processes);
    redis?.disconnect();
    await clearRedisPrefix(prefix);
    await db?.drop();
  });

  async function call<T = Record<string, unknown>>(
    base: string,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T; etag: string | null }> {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as T, etag: res.headers.get('etag') };
  }

  const get = (base: string) => call<Workspace>(base, 'GET', `/w/${workspaceId}`);
  const versionKey = () => `${prefix}:read-version:workspace:${workspaceId}`;

  it('an answer kept by A is not served once W has renamed the workspace', async () => {
    const before = await get(urlA);
    expect(before.status).toBe(200);
    expect(before.body.name).toBe('Kept');
    // Kept (the announced version is the one it was read at): the same answer, same ETag.
    expect(await get(urlA)).toEqual(before);
    expect(await redis.get(versionKey())).toBe(before.etag!.replace(/"/g, ''));

    let etag = before.etag;
    for (let i = 1; i <= 10; i++) {
      const put = await call<Workspace>(urlW, 'PUT', `/w/${workspaceId}`, { name: `Kept ${i}` });
      expect(put.status).toBe(200);
      const after = await get(urlA);
      expect(after.body.name).toBe(`Kept ${i}`);
      expect(after.etag).toBe(put.etag);
      expect(after.etag).not.toBe(etag);
      etag = after.etag;
      // And W, which answered the write, serves it too.
      expect((await get(urlW)).body.name).toBe(`Kept ${i}`);
    }
  });

  it('nor once the default role moved, by a role made default or by a merge', async () => {
    const created = await call<{ id: number }>(urlW, 'POST', `/w/${workspaceId}/member-roles`, {
      name: 'Temporary default',
      permissions: ['chats:read'],
    });
    expect(created.status).toBe(201);
    const kept = await get(urlA);
    expect(kept.body.settings.defaultMemberRoleId).not.toBe(created.body.id);

    const made = await call(urlW, 'PUT', `/w/${workspaceId}/member-roles/${created.body.id}`, {
      isDefault: true,
    });
    expect(made.status).toBe(200);
    expect((await get(urlA)).body.settings.defaultMemberRoleId).toBe(created.body.id);

    // Merged onto a built-in role: the default follows (MemberRolesMerged, not a workspace event).
    const roles = await call<{ items: { id: number; name: string; isBuiltIn: boolean }[] }>(
      urlW,
      'GET',
      `/w/${workspaceId}/member-roles?pageSize=100`,
    );
    const target = roles.body.items.find((r) => r.isBuiltIn && r.name === 'User')!;
    expect(target).toBeDefined();
    const merged = await call(urlW, 'POST', `/w/${workspaceId}/member-roles/${created.body.id}/merge`, {
      targetRoleId: target.id,
      resourceAccess: 'discard',
    });
    expect(merged.status).toBe(200);
    expect((await get(urlA)).body.settings.defaultMemberRoleId).toBe(target.id);
  });

  it('reads through PostgreSQL while no version is announced (a flushed Redis), and keeps again after the next change', async () => {
    const current = await get(urlA);
    await redis.del(versionKey());
    // Changed behind every cache's back (as if the announcement had been lost with a flush):
    // with no announced version nothing kept may be served.
    await db
      .pool()
      .query(`UPDATE workspaces SET name = 'Behind', version = version + 1 WHERE id = $1`, [workspaceId]);
    const through = await get(urlA);
    expect(through.body.name).toBe('Behind');
    expect(through.etag).not.toBe(current.etag);

    const put = await call<Workspace>(urlW, 'PUT', `/w/${workspaceId}`, { name: 'Announced again' });
    expect(put.status).toBe(200);
    expect(await redis.get(versionKey())).toBe(put.etag!.replace(/"/g, ''));
    expect((await get(urlA)).body.name).toBe('Announced again');
    expect((await get(urlA)).body.name).toBe('Announced again');
  });
});
