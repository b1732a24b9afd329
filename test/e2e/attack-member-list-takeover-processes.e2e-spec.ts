import { createTestDatabase, TestDatabase } from '../support/database';
import {
  bootstrapWithCli,
  reportErrorsAndKillAll,
  serviceEnv,
  ServiceProcess,
  spawnOnFreePort,
} from '../support/processes';
import { clearRedisPrefix, testRedisPrefix } from '../support/redis';

interface Page {
  items: { id: number; name: string | null }[];
  total: number;
}

/**
 * Attack on the member list's kept pages while the members projection changes hands: the
 * list version a page is checked against is announced in Redis by whichever process leads
 * the projection, before it commits. Writes go through an API process A while the leading
 * processes are killed (SIGKILL, whatever batch they are in) and new ones take over; after
 * every write's 2xx, A's and the surviving worker's very next lists show it, and nothing
 * a killed leader had announced lets an older page come back.
 */
describe('Attack: member list kept pages across a projection takeover (e2e)', () => {
  let db: TestDatabase;
  const prefix = testRedisPrefix();
  let env: Record<string, string>;
  const processes: ServiceProcess[] = [];
  let apiKey: string;
  let wid: string;

  const start = async (name: string, role: 'all' | 'api') => {
    const { proc, port } = await spawnOnFreePort(
      name,
      'src/main.ts',
      (p) => ({ ...env, ROLE: role, PORT: String(p), HOST: '127.0.0.1' }),
      /"msg":"listening"/,
    );
    processes.push(proc);
    return { proc, url: `http://127.0.0.1:${port}/api/v2` };
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    // Writes wait for a projection that is between leaders for as long as a takeover takes.
    env = serviceEnv(db.url, prefix, { READ_YOUR_WRITES_TIMEOUT_MS: '30000' });
    ({ apiKey, workspaceId: wid } = await bootstrapWithCli(env, 'Takeover', 'takeover@example.com'));
  }, 120_000);

  afterAll(async () => {
    await reportErrorsAndKillAll(processes);
    await clearRedisPrefix(prefix);
    await db?.drop();
  });

  async function call<T>(base: string, method: string, path: string, body?: unknown) {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
  }

  it('every write answered through A is in the next list of A and of the live worker, through two leader kills', async () => {
    const [w1, w2, a] = await Promise.all([
      start('all-1', 'all'),
      start('all-2', 'all'),
      start('api-a', 'api'),
    ]);
    const imported = await call(a.url, 'POST', `/w/${wid}/members/import`, {
      members: [{ email: 'moving@example.com', name: 'Moving 0' }],
    });
    expect(imported.status).toBe(200);
    const listed = await call<Page>(a.url, 'GET', `/w/${wid}/members`);
    const target = listed.body.items.find((m) => m.name === 'Moving 0')!;
    let live = w2;
    let w3: { proc: ServiceProcess; url: string } | undefined;
    for (let round = 1; round <= 18; round++) {
      // Pages kept in A and in the live worker before the write.
      for (const base of [a.url, live.url]) await call(base, 'GET', `/w/${wid}/members`);
      const put = call(a.url, 'PUT', `/w/${wid}/members/${target.id}`, { name: `Moving ${round}` });
      // A leader killed while the write may be in its batch; then the other one's turn.
      if (round === 6) await w1.proc.kill('SIGKILL');
      if (round === 12) {
        w3 = await start('all-3', 'all');
        await w2.proc.kill('SIGKILL');
        live = w3;
      }
      const answered = await put;
      expect({ round, status: answered.status }).toEqual({ round, status: 200 });
      for (const base of [a.url, live.url, a.url]) {
        const page = await call<Page>(base, 'GET', `/w/${wid}/members`);
        expect(page.status).toBe(200);
        expect({ round, name: page.body.items.find((m) => m.id === target.id)?.name }).toEqual({
          round,
          name: `Moving ${round}`,
        });
      }
    }
    expect(w3).toBeDefined();
  }, 180_000);
});
