import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { Pool } from 'pg';
import { loadConfig } from '../../src/core/config/config';
import { createEventStore } from '../../src/core/event-store/event-store.factory';
import { encodePosition, EventStore, StoredEvent } from '../../src/core/event-store/event-store.port';
import { bullConnection } from '../../src/core/redis/redis';
import { createTestDatabase, TestDatabase } from '../support/database';
import {
  eventually,
  killAll,
  runToCompletion,
  ServiceProcess,
  spawnService,
  TEST_WORKER,
} from '../support/processes';
import { clearRedisPrefix, TEST_REDIS_URL, testRedisPrefix } from '../support/redis';
import {
  spineTestEvents,
  SPINE_TEST_PROJECTION,
  SPINE_TEST_QUEUE,
  spineTestKeys,
} from '../support/spine-test.module';

/**
 * Worker processes killed at the worst moments: between a projection batch's read-model
 * write and its commit, while leading, and in the middle of a queue job.
 */
describe('crashes and takeovers (e2e)', () => {
  let db: TestDatabase;
  let pool: Pool;
  let store: EventStore;
  let redis: Redis;
  const prefix = testRedisPrefix();
  let env: Record<string, string>;
  let seq = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = db.pool({ max: 2 });
    store = await createEventStore(loadConfig({ DATABASE_URL: db.url }));
    redis = new Redis(TEST_REDIS_URL);
    env = {
      DATABASE_URL: db.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: prefix,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      PROJECTION_BATCH_SIZE: '10',
      QUEUE_LOCK_DURATION_MS: '2000',
      QUEUE_STALLED_INTERVAL_MS: '1000',
    };
  });

  afterAll(async () => {
    await killAll();
    redis?.disconnect();
    await store?.close();
    await clearRedisPrefix(prefix);
    await db?.drop();
  });

  async function appendTestEvents(n: number): Promise<StoredEvent[]> {
    const events = spineTestEvents(n, seq + 1, 'crash-test');
    seq += n;
    return (await store.append('spinetest-crash', events)).events;
  }

  async function startWorker(name: string, extra: Record<string, string> = {}): Promise<ServiceProcess> {
    const p = spawnService(name, TEST_WORKER, { ...env, ...extra });
    await p.waitForLine(/"msg":"worker started"/);
    return p;
  }

  const rows = async () =>
    (
      await pool.query<{ seq: number; applied: number; pid: number }>(
        'SELECT seq, applied, pid FROM spine_test_counts ORDER BY seq',
      )
    ).rows;
  const checkpoint = async (name: string) => {
    const { rows: r } = await pool.query<{ c: string; p: string }>(
      'SELECT position_commit AS c, position_prepare AS p FROM subscriber_checkpoints WHERE name = $1',
      [name],
    );
    return r[0] ? `${r[0].c}-${r[0].p}` : undefined;
  };
  const seqs = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

  let survivor: ServiceProcess;

  it('a process killed between a batch’s writes and its commit loses nothing, and the next applies nothing twice', async () => {
    const events = await appendTestEvents(60);
    // Batches of 10: 1-10 and 11-20 commit; the process dies after writing 25, inside 21-30.
    const first = await startWorker('worker-1', { SPINE_TEST_CRASH_AT_SEQ: '25' });
    expect(await first.exited).toBe('SIGKILL');

    const afterCrash = await rows();
    expect(afterCrash.map((r) => r.seq)).toEqual(seqs(1, 20));
    expect(afterCrash.every((r) => r.applied === 1 && r.pid === first.pid)).toBe(true);
    expect(await checkpoint(SPINE_TEST_PROJECTION)).toBe(encodePosition(events[19].position));

    // The operator's view while nothing runs: 40 events behind.
    const status = JSON.parse(
      await runToCompletion('test/support/processes/cli.ts', ['projections', 'status', '--json'], {
        ...env,
        LOG_LEVEL: 'warn',
      }),
    ) as { name: string; kind: string; checkpoint: string; lag: number }[];
    expect(status.find((s) => s.name === SPINE_TEST_PROJECTION)).toMatchObject({
      kind: 'projection',
      checkpoint: encodePosition(events[19].position),
      lag: 40,
    });
    expect(status.find((s) => s.name === 'spine-test-jobs')).toMatchObject({ kind: 'reactor', lag: 0 });

    survivor = await startWorker('worker-2');
    await eventually(async () => (await rows()).length === 60, 'the second process to catch up');
    const all = await rows();
    expect(all.map((r) => r.seq)).toEqual(seqs(1, 60));
    expect(all.filter((r) => r.applied !== 1)).toEqual([]);
    expect(all.filter((r) => r.seq > 20 && r.pid !== survivor.pid)).toEqual([]);
    await eventually(
      async () => (await checkpoint(SPINE_TEST_PROJECTION)) === encodePosition(events[59].position),
      'the checkpoint at the head',
    );
  });

  it('a second process takes a projection over when its leader dies', async () => {
    const leader = survivor;
    const standby = await startWorker('worker-3');
    await appendTestEvents(10);
    await eventually(async () => (await rows()).length === 70, 'events 61-70 to be applied');
    expect((await rows()).filter((r) => r.seq > 60).map((r) => r.pid)).toEqual(Array(10).fill(leader.pid));

    expect(await leader.kill('SIGKILL')).toBe('SIGKILL');
    await appendTestEvents(10);
    await eventually(
      async () => (await rows()).length === 80,
      'events 71-80 to be applied by the standby',
      20_000,
    );
    const all = await rows();
    expect(all.filter((r) => r.seq > 70).map((r) => r.pid)).toEqual(Array(10).fill(standby.pid));
    expect(all.filter((r) => r.applied !== 1)).toEqual([]);
    survivor = standby;
  });

  it('a job whose worker dies mid-job is recovered as stalled and run to completion by another worker', async () => {
    // Only the crashing worker may take the job: stop the other one first.
    expect(await survivor.kill('SIGTERM')).toBe(0);
    const doomed = await startWorker('worker-4', { SPINE_TEST_CRASH_IN_JOB: '1' });
    const queue = new Queue(SPINE_TEST_QUEUE, { connection: bullConnection(TEST_REDIS_URL), prefix });
    try {
      const job = await queue.add('crash', { crash: true }, { jobId: 'crash-1' });
      expect(await doomed.exited).toBe('SIGKILL');
      expect(await job.getState()).toBe('active'); // nobody is left to notice yet

      const rescuer = await startWorker('worker-5');
      await eventually(
        async () => (await job.getState()) === 'completed',
        'the stalled job to complete elsewhere',
        20_000,
      );
      const keys = spineTestKeys(prefix);
      expect(await redis.lrange(keys.starts, 0, -1)).toEqual([
        `crash-1 ${doomed.pid}`,
        `crash-1 ${rescuer.pid}`,
      ]);
      expect(await redis.lrange(keys.runs, 0, -1)).toEqual([`crash-1 ${rescuer.pid}`]);
    } finally {
      await queue.close();
    }
  });
});
