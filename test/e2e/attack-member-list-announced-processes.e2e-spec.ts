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

interface Member {
  id: number;
  workspaceId: string;
  name: string | null;
  email: string | null;
  status: string;
}
interface Page {
  items: Member[];
  total: number;
  page: number;
  pageSize: number;
}

/**
 * Attack on the member list's kept pages against the list version the members projection
 * announces in Redis before it commits: two processes on one database and Redis prefix,
 * W (ROLE=all: writes and projections) and A (ROLE=api: reads). The announced key is
 * deleted or garbled behind the service's back, lists are read while writes race them,
 * and the same logical query is asked in several spellings: after every write's 2xx, the
 * very next list in either process shows it.
 */
describe('Attack: member list pages kept against the announced list version, two processes (e2e)', () => {
  let db: TestDatabase;
  const prefix = testRedisPrefix();
  let redis: Redis;
  let urlW: string;
  let urlA: string;
  let apiKey: string;
  let wid: string;
  let ownerId: number;
  let processes: ServiceProcess[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 2 });
    db = await createTestDatabase();
    env = serviceEnv(db.url, prefix);
    const { all: w, api: a } = await startAllAndApi(env, ['all-w', 'api-a']);
    urlW = w.url;
    urlA = a.url;
    processes = [w.proc, a.proc];
    ({
      apiKey,
      workspaceId: wid,
      memberId: ownerId,
    } = await bootstrapWithCli(env, 'Announced', 'announced@example.com'));
  }, 180_000);

  afterAll(async () => {
    redis?.disconnect();
    await reportErrorsAndKillAll(processes);
    await clearRedisPrefix(prefix);
    await db?.drop();
  });

  const announcedKey = () => `${prefix}:read-version:member-list:${wid}`;
  /** Pages are kept at all: the version announced is the one stored (what a page is rendered at). */
  const expectAnnouncedStored = async () => {
    const { rows } = await db
      .pool()
      .query<{ version: string }>(
        `SELECT version::text AS version FROM member_list_versions WHERE workspace_id = $1`,
        [wid],
      );
    expect(await redis.get(announcedKey())).toBe(rows[0]?.version);
  };

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

  const list = async (base: string, query = '', token = apiKey, workspace = wid): Promise<Page> => {
    const res = await call<Page>(base, 'GET', `/w/${workspace}/members${query}`, token);
    expect({ query, status: res.status }).toEqual({ query, status: 200 });
    return res.body;
  };
  const nameOf = async (base: string, id: number, query = '') =>
    (await list(base, query)).items.find((m) => m.id === id)?.name;
  const rename = async (base: string, id: number, name: string) => {
    const put = await call(base, 'PUT', `/w/${wid}/members/${id}`, apiKey, { name });
    expect(put.status).toBe(200);
  };
  const importMembers = async (members: Record<string, unknown>[]) => {
    const res = await call(urlW, 'POST', `/w/${wid}/members/import`, apiKey, { members });
    expect(res.status).toBe(200);
  };
  const memberNamed = async (name: string) =>
    (await list(urlW, '?pageSize=1000')).items.find((m) => m.name === name)!;

  it('a deleted or garbled announced version never lets a kept page hide a write, in either process', async () => {
    await importMembers([{ email: 'tamper@example.com', name: 'Tamper 0' }]);
    const target = await memberNamed('Tamper 0');
    let round = 0;
    // What a Redis flush, a lost key or a corrupted value leaves; each version a number would
    // never be one PostgreSQL wrote (not an integer, not safe, negative, beyond any xid).
    for (const tamper of [null, 'abc', '1.5', '-1', '', '9007199254740993', '99999999999999999999']) {
      round++;
      // Pages kept in both processes at the current version (read twice: rendered, then served).
      for (const base of [urlA, urlW]) for (let i = 0; i < 2; i++) await nameOf(base, target.id);
      if (tamper === null) await redis.del(announcedKey());
      else await redis.set(announcedKey(), tamper);
      // Until the next write the lists still show what is stored.
      for (const base of [urlA, urlW]) expect(await nameOf(base, target.id)).toBe(`Tamper ${round - 1}`);
      await rename(round % 2 ? urlW : urlA, target.id, `Tamper ${round}`);
      for (const base of [urlA, urlW, urlA, urlW])
        expect({ tamper, name: await nameOf(base, target.id) }).toEqual({ tamper, name: `Tamper ${round}` });
    }
    // A garbage version above every real one is never lowered by an announcement: lists then
    // come from PostgreSQL (correct, uncached). Cleared, the next write announces again and
    // the processes keep pages again, still showing every write at once.
    await redis.del(announcedKey());
    for (let i = 1; i <= 3; i++) {
      await rename(urlW, target.id, `Recovered ${i}`);
      await expectAnnouncedStored();
      for (const base of [urlA, urlW, urlA]) expect(await nameOf(base, target.id)).toBe(`Recovered ${i}`);
    }
  });

  it('lists read while writes race them: each write is in the very next list of its client, in both processes', async () => {
    await importMembers([
      { email: 'race-1@example.com', name: 'Race one 0' },
      { email: 'race-2@example.com', name: 'Race two 0' },
    ]);
    const one = await memberNamed('Race one 0');
    const two = await memberNamed('Race two 0');
    await expectAnnouncedStored();
    // Other clients keep reading the same pages (and so confirming and re-rendering them)
    // in both processes the whole time, some with the key deleted under them.
    let stop = false;
    const readers = [urlA, urlW, urlA, urlW].map(async (base, i) => {
      const queries = ['', '?search=race', '?pageSize=1000', '?status=all'];
      while (!stop) {
        const res = await call<Page>(base, 'GET', `/w/${wid}/members${queries[i]}`, apiKey);
        expect(res.status).toBe(200);
        if (i === 3 && Math.random() < 0.1) await redis.del(announcedKey());
      }
    });
    try {
      for (let round = 1; round <= 12; round++) {
        const base = round % 2 ? urlW : urlA;
        // Two writers at once (different members, different processes taking the write).
        await Promise.all([
          rename(base, one.id, `Race one ${round}`),
          rename(urlA, two.id, `Race two ${round}`),
        ]);
        for (const reader of [urlA, urlW]) {
          for (const query of ['', '?search=race', '?pageSize=1000']) {
            const page = await list(reader, query);
            expect({
              round,
              reader,
              query,
              names: page.items.filter((m) => m.id === one.id || m.id === two.id).map((m) => m.name),
            }).toEqual({
              round,
              reader,
              query,
              names: [`Race one ${round}`, `Race two ${round}`],
            });
          }
        }
      }
      // A member created and one archived while the readers run: in the next lists at once.
      await importMembers([{ email: 'race-3@example.com', name: 'Race three' }]);
      for (const base of [urlA, urlW])
        expect((await list(base, '?search=race')).items.map((m) => m.name)).toContain('Race three');
      const archived = await call(urlA, 'DELETE', `/w/${wid}/members/${two.id}`, apiKey);
      expect(archived.status).toBe(200);
      for (const base of [urlA, urlW]) {
        const page = await list(base, '?search=race');
        expect(page.items.map((m) => m.id)).not.toContain(two.id);
        expect(page.total).toBe(page.items.length);
      }
    } finally {
      stop = true;
      await Promise.all(readers);
    }
  });

  it('the same query in other spellings, and a search a write moves a member out of, never show the old page', async () => {
    await importMembers([{ email: 'Spelled@Example.com', name: 'Alpha Spelled' }]);
    const target = await memberNamed('Alpha Spelled');
    await expectAnnouncedStored();
    const spellings = [
      '?search=alpha',
      '?search=ALPHA',
      '?search=%20alpha%20',
      '?search=alpha&pageSize=50',
      '?search=alpha&page_size=50',
      '?search=alpha&page=1',
      '?email=spelled@example.com',
      '?email=SPELLED@EXAMPLE.COM',
      '?startTime=2000-01-01T00:00:00Z&search=alpha',
      '?startTime=2000-01-01T01:00:00%2B01:00&search=alpha',
    ];
    for (const base of [urlA, urlW])
      for (const q of spellings) expect((await list(base, q)).items.map((m) => m.id)).toEqual([target.id]);
    await rename(urlW, target.id, 'Beta Spelled');
    for (const base of [urlA, urlW])
      for (const q of spellings) {
        const page = await list(base, q);
        if (q.includes('email')) expect(page.items.map((m) => m.name)).toEqual(['Beta Spelled']);
        else expect({ q, page }).toEqual({ q, page: { items: [], total: 0, page: 1, pageSize: 50 } });
      }
  });

  it('repeated, unknown or case-changed parameters neither reach another workspace nor a 5xx', async () => {
    const other = await bootstrapWithCli(env, 'Neighbour', 'neighbour@example.com');
    // The neighbour's page is kept in both processes.
    for (const base of [urlA, urlW]) await list(base, '', other.apiKey, other.workspaceId);
    for (const q of [
      '?page=1&page=2',
      '?search=a&search=b',
      '?status=active&status=all',
      `?wid=${other.workspaceId}`,
      `?workspaceId=${other.workspaceId}`,
      '?Search=alpha',
      '?STATUS=all',
      '?status=ACTIVE',
      '?pageSize=50&page_size=1',
      '?roleId=1&memberRoleId=2',
    ]) {
      for (const base of [urlA, urlW]) {
        const res = await call<Page & { detail?: string }>(base, 'GET', `/w/${wid}/members${q}`, apiKey);
        expect({ q, ok: res.status === 200 || res.status === 400 }).toEqual({ q, ok: true });
        if (res.status === 400) expect(res.body.detail).toEqual(expect.any(String));
        else for (const m of res.body.items) expect(m.workspaceId).toBe(wid);
      }
    }
    // Another tenant's workspace, in any spelling: not found, never its kept page.
    for (const base of [urlA, urlW])
      for (const path of [other.workspaceId, other.workspaceId.toUpperCase()]) {
        const res = await call<Page>(base, 'GET', `/w/${path}/members`, apiKey);
        expect(res.status).toBe(404);
        expect(res.body).not.toHaveProperty('items');
      }
    // And its own key still gets its own list, not this workspace's.
    expect((await list(urlA, '', other.apiKey, other.workspaceId)).items.map((m) => m.workspaceId)).toEqual([
      other.workspaceId,
    ]);
  });

  it('a key revoked in W is refused at once in W, whatever pages W keeps for it', async () => {
    const created = await call<{ id: string; secret: string }>(urlW, 'POST', '/me/api-keys', apiKey, {
      name: 'short-lived reader',
      scopes: ['members:read'],
    });
    expect(created.status).toBe(201);
    for (let i = 0; i < 2; i++)
      expect((await list(urlW, '', created.body.secret)).items.length).toBeGreaterThan(0);
    const revoked = await call(urlW, 'DELETE', `/me/api-keys/${created.body.id}`, apiKey);
    expect([200, 204]).toContain(revoked.status);
    const after = await call<Page>(urlW, 'GET', `/w/${wid}/members`, created.body.secret);
    expect(after.status).toBe(401);
    expect(after.body).not.toHaveProperty('items');
    // The owner's own pages are unaffected.
    expect((await list(urlW)).items[0].id).toBe(ownerId);
  });

  it('two workspaces written at once (one projection statement may hold both): each list shows its own write at once', async () => {
    const other = await bootstrapWithCli(env, 'Simultaneous', 'simultaneous@example.com');
    await importMembers([{ email: 'both-here@example.com', name: 'Here 0' }]);
    const here = await memberNamed('Here 0');
    const there = (await list(urlA, '', other.apiKey, other.workspaceId)).items[0];
    for (let round = 1; round <= 10; round++) {
      // Pages of both workspaces kept in A at their current versions.
      for (let i = 0; i < 2; i++) {
        await list(urlA);
        await list(urlA, '', other.apiKey, other.workspaceId);
      }
      const puts = await Promise.all([
        call(urlW, 'PUT', `/w/${wid}/members/${here.id}`, apiKey, { name: `Here ${round}` }),
        call(urlA, 'PUT', `/w/${other.workspaceId}/members/${there.id}`, other.apiKey, {
          name: `There ${round}`,
        }),
      ]);
      expect(puts.map((p) => p.status)).toEqual([200, 200]);
      expect({ round, name: await nameOf(urlA, here.id) }).toEqual({ round, name: `Here ${round}` });
      const theirs = await list(urlA, '', other.apiKey, other.workspaceId);
      expect({ round, name: theirs.items.find((m) => m.id === there.id)?.name }).toEqual({
        round,
        name: `There ${round}`,
      });
    }
  });
});
