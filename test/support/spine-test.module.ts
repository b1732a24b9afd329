import { Inject, Injectable, Module, OnModuleInit } from '@nestjs/common';
import { InjectQueue, Processor, WorkerHost } from '@nestjs/bullmq';
import type { Job, Queue } from 'bullmq';
import Redis from 'ioredis';
import { DataSource, EntityManager } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../src/core/config/config';
import { SYSTEM_ACTOR } from '../../src/core/cqrs/request-context';
import type { NewEvent, StoredEvent } from '../../src/core/event-store/event-store.port';
import { Projection, ProjectionHandler } from '../../src/core/projections/projection';
import { withQueues } from '../../src/core/queues/queues.module';
import { jobIdFor, Reactor, ReactorHandler } from '../../src/core/reactors/reactor';
import { REDIS } from '../../src/core/redis/redis';

/**
 * Test-only subscribers and processor for the spine's process-level tests (crash,
 * leadership, roles, queues, rebuild). What they do is driven by environment
 * variables, so a test can tell one child process, and only that one, to die.
 */
export const SPINE_TEST_EVENT = 'SpineTestEvent';
export const SPINE_TEST_QUEUE = 'spine-test';

/** Test events numbered from `firstSeq`, with the metadata every stored event carries. */
export function spineTestEvents(n: number, firstSeq: number, correlationId: string): NewEvent[] {
  return Array.from({ length: n }, (_, i) => ({
    type: SPINE_TEST_EVENT,
    data: { seq: firstSeq + i },
    metadata: {
      workspaceId: 'spine-test',
      actor: SYSTEM_ACTOR,
      correlationId,
      occurredAt: new Date().toISOString(),
      schemaVersion: 1,
    },
  }));
}
export const SPINE_TEST_PROJECTION = 'spine-test-counts';
export const SPINE_TEST_REACTOR = 'spine-test-jobs';
/** Projections recording the position of every event they apply, one per apply path. */
export const SPINE_TEST_APPLIED = {
  one: { name: 'spine-test-applied-one', table: 'spine_test_applied_one' },
  batch: { name: 'spine-test-applied-batch', table: 'spine_test_applied_batch' },
} as const;

/** Redis lists the processor writes "<jobId> <pid>" to: when a job starts, and when it completes. */
export const spineTestKeys = (redisPrefix: string) => ({
  starts: `${redisPrefix}:spine-test:starts`,
  runs: `${redisPrefix}:spine-test:runs`,
  /** While this key exists, the job fails (to show retry from the board). */
  fail: (jobId: string) => `${redisPrefix}:spine-test:fail:${jobId}`,
});

/** The read model lives outside the migrations; several processes may start at once, hence the lock. */
@Injectable()
class SpineTestTables implements OnModuleInit {
  constructor(private readonly db: DataSource) {}

  async onModuleInit(): Promise<void> {
    await this.db.transaction(async (em) => {
      await em.query('SELECT pg_advisory_xact_lock(74299)');
      // row_id has a sequence DEFAULT and the indexes custom names: what a rebuild must keep.
      await em.query(`
        CREATE TABLE IF NOT EXISTS spine_test_counts (
          row_id bigserial PRIMARY KEY,
          event_id uuid NOT NULL CONSTRAINT spine_test_counts_event UNIQUE,
          seq integer NOT NULL,
          applied integer NOT NULL,
          pid integer NOT NULL
        )`);
      await em.query('CREATE INDEX IF NOT EXISTS spine_test_counts_by_pid ON spine_test_counts (pid)');
      for (const { table } of Object.values(SPINE_TEST_APPLIED)) {
        await em.query(`
          CREATE TABLE IF NOT EXISTS ${table} (
            event_id uuid PRIMARY KEY,
            seq integer NOT NULL,
            position_commit numeric NOT NULL,
            position_prepare numeric NOT NULL,
            applied integer NOT NULL
          )`);
      }
    });
  }
}

/**
 * Counts how often each event was applied (a second application shows as applied = 2).
 * SPINE_TEST_CRASH_AT_SEQ=n: after writing event n's row, inside the batch's open
 * transaction, the process SIGKILLs itself, before the commit.
 */
@Injectable()
@Projection({ name: SPINE_TEST_PROJECTION, eventTypes: [SPINE_TEST_EVENT], tables: ['spine_test_counts'] })
export class SpineTestCountsProjection implements ProjectionHandler {
  async handle(event: StoredEvent, em: EntityManager): Promise<void> {
    const seq = (event.data as { seq: number }).seq;
    await em.query(
      `INSERT INTO spine_test_counts (event_id, seq, applied, pid) VALUES ($1, $2, 1, $3)
       ON CONFLICT (event_id) DO UPDATE SET applied = spine_test_counts.applied + 1, pid = EXCLUDED.pid`,
      [event.id, seq, process.pid],
    );
    if (process.env.SPINE_TEST_CRASH_AT_SEQ && Number(process.env.SPINE_TEST_CRASH_AT_SEQ) === seq) {
      process.kill(process.pid, 'SIGKILL');
    }
  }
}

const APPLY = (table: string) =>
  `INSERT INTO ${table} (event_id, seq, position_commit, position_prepare, applied)
   SELECT e.*, 1 FROM unnest($1::uuid[], $2::int[], $3::numeric[], $4::numeric[]) AS e
   ON CONFLICT (event_id) DO UPDATE SET applied = ${table}.applied + 1`;

function applyRows(table: string, events: readonly StoredEvent[], em: EntityManager): Promise<unknown> {
  return em.query(APPLY(table), [
    events.map((e) => e.id),
    events.map((e) => (e.data as { seq: number }).seq),
    events.map((e) => e.position.commit.toString()),
    events.map((e) => e.position.prepare.toString()),
  ]);
}

/**
 * Record each event's position and how often it was applied, so a spec can compare the
 * read model with the checkpoint in one snapshot. This one through `handle`...
 */
@Injectable()
@Projection({
  name: SPINE_TEST_APPLIED.one.name,
  eventTypes: [SPINE_TEST_EVENT],
  tables: [SPINE_TEST_APPLIED.one.table],
})
export class SpineTestAppliedOneProjection implements ProjectionHandler {
  async handle(event: StoredEvent, em: EntityManager): Promise<void> {
    await applyRows(SPINE_TEST_APPLIED.one.table, [event], em);
  }
}

/** ...and this one through `handleBatch`. */
@Injectable()
@Projection({
  name: SPINE_TEST_APPLIED.batch.name,
  eventTypes: [SPINE_TEST_EVENT],
  tables: [SPINE_TEST_APPLIED.batch.table],
})
export class SpineTestAppliedBatchProjection implements ProjectionHandler {
  async handle(event: StoredEvent, em: EntityManager): Promise<void> {
    await applyRows(SPINE_TEST_APPLIED.batch.table, [event], em);
  }

  async handleBatch(events: readonly StoredEvent[], em: EntityManager): Promise<void> {
    await applyRows(SPINE_TEST_APPLIED.batch.table, events, em);
  }
}

/** One job per WorkspaceUpdated, with the event's job id, so a replay enqueues nothing new. */
@Injectable()
@Reactor({ name: SPINE_TEST_REACTOR, eventTypes: ['WorkspaceUpdated'] })
export class SpineTestJobsReactor implements ReactorHandler {
  constructor(@InjectQueue(SPINE_TEST_QUEUE) private readonly queue: Queue) {}

  async react(event: StoredEvent): Promise<void> {
    await this.queue.add('workspace-updated', { eventId: event.id }, { jobId: jobIdFor(event) });
  }
}

/**
 * Records each run in Redis. SPINE_TEST_JOB_MS makes every job take that long;
 * SPINE_TEST_CRASH_IN_JOB=1 makes the process SIGKILL itself mid-job on jobs with data.crash.
 */
@Processor(SPINE_TEST_QUEUE)
export class SpineTestProcessor extends WorkerHost {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  async process(job: Job<{ crash?: boolean; sleepMs?: number }>): Promise<{ pid: number }> {
    const keys = spineTestKeys(this.config.redisPrefix);
    await this.redis.rpush(keys.starts, `${job.id} ${process.pid}`);
    if (job.data.crash && process.env.SPINE_TEST_CRASH_IN_JOB === '1') process.kill(process.pid, 'SIGKILL');
    if (await this.redis.exists(keys.fail(job.id!))) throw new Error('told to fail');
    const ms = job.data.sleepMs ?? Number(process.env.SPINE_TEST_JOB_MS ?? 0);
    if (ms > 0) await new Promise((r) => setTimeout(r, ms));
    await this.redis.rpush(keys.runs, `${job.id} ${process.pid}`);
    return { pid: process.pid };
  }
}

@Module(
  withQueues(
    { queues: [SPINE_TEST_QUEUE], processors: [SpineTestProcessor] },
    {
      providers: [
        SpineTestTables,
        SpineTestCountsProjection,
        SpineTestAppliedOneProjection,
        SpineTestAppliedBatchProjection,
        SpineTestJobsReactor,
      ],
    },
  ),
)
export class SpineTestModule {}
