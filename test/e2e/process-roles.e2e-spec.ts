import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { Pool } from 'pg';
import { loadConfig } from '../../src/core/config/config';
import { createEventStore } from '../../src/core/event-store/event-store.factory';
import { EventStore } from '../../src/core/event-store/event-store.port';
import { jobIdFor } from '../../src/core/reactors/reactor';
import { bullConnection } from '../../src/core/redis/redis';
import { createTestDatabase, TestDatabase } from '../support/database';
import {
  bootstrapWithCli,
  eventually,
  killAll,
  ServiceProcess,
  spawnOnFreePort,
  spawnService,
  TEST_WORKER,
} from '../support/processes';
import { clearRedisPrefix, TEST_REDIS_URL, testRedisPrefix } from '../support/redis';
import { SPINE_TEST_QUEUE, SPINE_TEST_REACTOR, spineTestKeys } from '../support/spine-test.module';

/**
 * ROLE=api and ROLE=worker as separate processes on one database and one Redis prefix:
 * one API (src/main.ts) and two workers (with the test-only reactor and processor).
 */
describe('api and worker processes (e2e)', () => {
  let db: TestDatabase;
  let pool: Pool;
  let store: EventStore;
  let redis: Redis;
  let queue: Queue;
  const prefix = testRedisPrefix();
  let env: Record<string, string>;
  let workers: ServiceProcess[];
  let baseUrl: string;
  let apiKey: string;
  let workspaceId: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = db.pool({ max: 2 });
    store = await createEventStore(loadConfig({ DATABASE_URL: db.url }));
    redis = new Redis(TEST_REDIS_URL);
    queue = new Queue(SPINE_TEST_QUEUE, { connection: bullConnection(TEST_REDIS_URL), prefix });
    env = {
      DATABASE_URL: db.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: prefix,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      // A soft limit: a write answers without its projections after this long.
      READ_YOUR_WRITES_TIMEOUT_MS: '30000',
    };
    // Jobs take a while, so that with jobs arriving faster than one worker finishes them, both work.
    workers = [1, 2].map((n) =>
      spawnService(`worker-${n}`, TEST_WORKER, { ...env, SPINE_TEST_JOB_MS: '1200' }),
    );
    const [started] = await Promise.all([
      spawnOnFreePort(
        'api',
        'src/main.ts',
        (port) => ({ ...env, ROLE: 'api', PORT: String(port), HOST: '127.0.0.1' }),
        /"msg":"listening"/,
      ),
      ...workers.map((w) => w.waitForLine(/"msg":"worker started"/, 90_000)),
    ]);
    baseUrl = `http://127.0.0.1:${started.port}/api/v2`;
    ({ apiKey, workspaceId } = await bootstrapWithCli(env, 'Split roles', 'roles@example.com'));
  }, 180_000);

  afterAll(async () => {
    await killAll();
    await queue?.close();
    redis?.disconnect();
    await store?.close();
    await clearRedisPrefix(prefix);
    await db?.drop();
  });

  async function request(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: { name?: string } }> {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as { name?: string } };
  }

  const runs = async () =>
    (await redis.lrange(spineTestKeys(prefix).runs, 0, -1))
      .map((r) => r.split(' '))
      .map(([jobId, pid]) => ({ jobId, pid: Number(pid) }));
  const updatedJobIds = async () =>
    (await store.readAll({ filter: { eventTypes: ['WorkspaceUpdated'] } })).map((e) => jobIdFor(e));
  const eventsHandled = async () =>
    Number(
      (
        await pool.query<{ n: string }>(
          'SELECT events_handled AS n FROM subscriber_checkpoints WHERE name = $1',
          [SPINE_TEST_REACTOR],
        )
      ).rows[0]?.n ?? 0,
    );

  it('only the workers run subscribers: the API process holds no leadership connection', async () => {
    const { rows } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'workspace-service:leader-locks'`,
      [db.name],
    );
    expect(rows[0].n).toBe(2);
  });

  it('a command through the API is projected by a worker and read back at once (read-your-writes across processes)', async () => {
    for (let i = 1; i <= 8; i++) {
      const put = await request('PUT', `/w/${workspaceId}`, { name: `Split ${i}` });
      expect(put).toEqual({ status: 200, body: expect.objectContaining({ name: `Split ${i}` }) });
      const get = await request('GET', `/w/${workspaceId}`);
      expect(get.body.name).toBe(`Split ${i}`);
    }
  });

  it('the reactor’s jobs run exactly once each across the two workers', async () => {
    const expected = await updatedJobIds();
    expect(expected).toHaveLength(8);
    await eventually(async () => (await runs()).length >= 8, 'every job to run', 30_000);
    const done = await runs();
    expect(done.map((r) => r.jobId).sort()).toEqual([...expected].sort());
    expect(new Set(done.map((r) => r.pid))).toEqual(new Set(workers.map((w) => w.pid)));
  });

  it('replaying the reactor from its first event enqueues nothing new', async () => {
    const handledBefore = await eventsHandled();
    await pool.query(
      'UPDATE subscriber_checkpoints SET position_commit = 0, position_prepare = 0 WHERE name = $1',
      [SPINE_TEST_REACTOR],
    );
    // The next event makes the reactor's leader find its checkpoint moved and start again from the first event.
    expect((await request('PUT', `/w/${workspaceId}`, { name: 'Split 9' })).status).toBe(200);
    await eventually(
      async () => (await eventsHandled()) === handledBefore + 9,
      'the reactor to replay all nine events',
      20_000,
    );
    await eventually(async () => (await runs()).length >= 9, 'the new job to run', 20_000);
    await new Promise((r) => setTimeout(r, 2500)); // room for any duplicate to show up

    const done = await runs();
    expect(done.map((r) => r.jobId).sort()).toEqual((await updatedJobIds()).sort());
    expect(await queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed')).toMatchObject({
      waiting: 0,
      active: 0,
      delayed: 0,
      failed: 0,
      completed: 9,
    });
  });
});
