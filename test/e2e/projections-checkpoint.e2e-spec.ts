import type { Pool } from 'pg';
import { loadConfig } from '../../src/core/config/config';
import { createEventStore } from '../../src/core/event-store/event-store.factory';
import { EventStore, StoredEvent } from '../../src/core/event-store/event-store.port';
import { createTestDatabase, TestDatabase } from '../support/database';
import { eventually, killAll, ServiceProcess, spawnService, TEST_WORKER } from '../support/processes';
import { clearRedisPrefix, TEST_REDIS_URL, testRedisPrefix } from '../support/redis';
import { SPINE_TEST_APPLIED, spineTestEvents } from '../support/spine-test.module';

/**
 * A projection's read model and its checkpoint commit together or not at all. The
 * worker is killed in the window between them (after the batch's read-model writes, as
 * the checkpoint is about to be written: SPINE_TEST_EXIT_BEFORE_CHECKPOINT, see
 * core/projections/subscriber-loop.ts), once through `handle` and once through
 * `handleBatch`; with the checkpoint in a transaction of its own, the batch would be
 * applied again after takeover.
 */
describe('projection checkpoints and read models move together (e2e)', () => {
  let db: TestDatabase;
  let pool: Pool;
  let store: EventStore;
  const prefix = testRedisPrefix();
  let env: Record<string, string>;
  let seq = 0;
  let appended: StoredEvent[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = db.pool({ max: 2 });
    store = await createEventStore(loadConfig({ DATABASE_URL: db.url }));
    env = {
      DATABASE_URL: db.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: prefix,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      PROJECTION_BATCH_SIZE: '10',
    };
  });

  afterAll(async () => {
    await killAll();
    await store?.close();
    await clearRedisPrefix(prefix);
    // Ends the pool; fails when a session or a pool error outlived the tests.
    await db?.drop();
  });

  async function appendTestEvents(n: number): Promise<void> {
    const events = spineTestEvents(n, seq + 1, 'checkpoint-test');
    seq += n;
    // One append, so that a catching-up worker reads them in full batches of 10.
    appended = [...appended, ...(await store.append('spinetest-checkpoint', events)).events];
  }

  async function startWorker(name: string, extra: Record<string, string> = {}): Promise<ServiceProcess> {
    const p = spawnService(name, TEST_WORKER, { ...env, ...extra });
    await p.waitForLine(/"msg":"worker started"/);
    return p;
  }

  const positionOf = (e: StoredEvent) => `${e.position.commit}-${e.position.prepare}`;

  /** The checkpoint and the read model's latest applied position, read in one snapshot. */
  async function snapshot(projection: { name: string; table: string }) {
    const { rows } = await pool.query<{ checkpoint: string | null; applied: string | null; n: number }>(
      `SELECT (SELECT position_commit || '-' || position_prepare FROM subscriber_checkpoints WHERE name = $1) AS checkpoint,
              (SELECT position_commit || '-' || position_prepare FROM ${projection.table}
                 ORDER BY position_commit DESC, position_prepare DESC LIMIT 1) AS applied,
              (SELECT count(*)::int FROM ${projection.table}) AS n`,
      [projection.name],
    );
    return rows[0];
  }

  const appliedMoreThanOnce = async (table: string) =>
    (await pool.query<{ seq: number }>(`SELECT seq FROM ${table} WHERE applied <> 1`)).rows;

  /**
   * Until the projection holds every appended event, every snapshot finds the
   * checkpoint exactly at the last applied event; then both are at the head.
   */
  async function expectLockstepUntilCaughtUp(projection: { name: string; table: string }): Promise<void> {
    const head = positionOf(appended[appended.length - 1]);
    let snapshots = 0;
    await eventually(
      async () => {
        const s = await snapshot(projection);
        snapshots++;
        expect(s.applied).toBe(s.checkpoint);
        return s.n === appended.length && s.checkpoint === head;
      },
      `${projection.name} to catch up`,
      30_000,
      5,
    );
    expect(snapshots).toBeGreaterThan(0);
    expect(await appliedMoreThanOnce(projection.table)).toEqual([]);
  }

  for (const [path, projection] of [
    ['handle', SPINE_TEST_APPLIED.one],
    ['handleBatch', SPINE_TEST_APPLIED.batch],
  ] as const) {
    it(`a worker killed between the read-model writes and the checkpoint (${path}) leaves both at the last commit; the next applies every event exactly once`, async () => {
      await appendTestEvents(60);
      const before = appended.length - 60;
      // Batches of 10: two commit, the third is written and the process dies before its checkpoint.
      const doomed = await startWorker(`doomed-${path}`, {
        SPINE_TEST_EXIT_BEFORE_CHECKPOINT: `${projection.name}@3`,
      });
      expect(await doomed.exited).toBe('SIGKILL');

      const afterCrash = await snapshot(projection);
      expect(afterCrash).toEqual({
        checkpoint: positionOf(appended[before + 19]),
        applied: positionOf(appended[before + 19]),
        n: before + 20,
      });

      const next = await startWorker(`next-${path}`);
      await expectLockstepUntilCaughtUp(projection);
      const { rows } = await pool.query<{ seq: number }>(`SELECT seq FROM ${projection.table} ORDER BY seq`);
      expect(rows.map((r) => r.seq)).toEqual(appended.map((e) => (e.data as { seq: number }).seq));
      // Both at the head and the worker stopped, so the next test starts from a known place.
      for (const other of Object.values(SPINE_TEST_APPLIED)) await expectLockstepUntilCaughtUp(other);
      expect(await next.kill('SIGTERM')).toBe(0);
    });
  }

  it('under a steady stream of appends, every snapshot finds both projections’ checkpoints at their last applied event', async () => {
    const worker = await startWorker('steady');
    for (let round = 0; round < 5; round++) {
      await appendTestEvents(7);
      for (const projection of Object.values(SPINE_TEST_APPLIED)) {
        const s = await snapshot(projection);
        expect(s.applied).toBe(s.checkpoint);
      }
    }
    for (const projection of Object.values(SPINE_TEST_APPLIED)) await expectLockstepUntilCaughtUp(projection);
    expect(await worker.kill('SIGTERM')).toBe(0);
  });
});
