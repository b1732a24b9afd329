import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { ClientBase, QueryResult } from 'pg';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/config';
import { EVENT_STORE, EventStore, Position, StoredEvent } from '../event-store/event-store.port';
import { JsonLogger } from '../logging/json-logger';
import { requestContext, SYSTEM_ACTOR } from '../cqrs/request-context';
import { advanceCheckpoint, CHECKPOINT_CHANNEL, readCheckpoint, samePosition } from './checkpoints';
import { CheckpointFeed, CheckpointNotice, encodeNotice } from './checkpoint-feed';
import { LeaderLocks } from './leader-locks';
import { SharedScans } from './shared-scans';
import { applyEvents, RegisteredProjection } from './projection';
import { CommitStatements, withCommitStatements } from './commit-statements';
import { RegisteredReactor, SubscriberRegistry } from './subscriber-registry';
import {
  BatchOutcome,
  beforeCheckpointWrite,
  LocalBatches,
  SubscriberLoop,
  SubscriberSpec,
} from './subscriber-loop';

/**
 * Runs every projection and reactor in processes whose ROLE is `all` or `worker`.
 * Several such processes may run: each subscriber's leadership lock makes exactly one
 * of them its runner at a time.
 */
@Injectable()
export class SubscribersHost implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly loops: SubscriberLoop[] = [];
  private locks: LeaderLocks | undefined;
  private readonly batches = new LocalBatches();
  private scans: SharedScans | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly db: DataSource,
    private readonly registry: SubscriberRegistry,
    private readonly logger: JsonLogger,
    private readonly feed: CheckpointFeed,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.role === 'api') return;
    this.locks = new LeaderLocks(this.config.databaseUrl, this.logger);
    const store = this.store;
    if (store.scanAll) this.scans = new SharedScans((options) => store.scanAll!(options));
    // Projection batches hold the store's horizon while they commit: their loops take
    // turns reading (LocalBatches), and those asked for together commit in one
    // transaction (JointProjectionBatches). A reactor's batch is no transaction: nothing
    // waits for it, but it reads when the projections do, in their shared scan.
    const joint = new JointProjectionBatches(this.db, this.feed);
    for (const p of this.registry.projections())
      this.startLoop(projectionSpec(p, this.db, undefined, this.feed, joint), this.batches, this.scans, true);
    for (const r of this.registry.reactors())
      this.startLoop(reactorSpec(r, this.db), this.batches, this.scans, false);
  }

  private startLoop(
    spec: SubscriberSpec,
    batches: LocalBatches,
    scans: SharedScans | undefined,
    holdsHorizon: boolean,
  ): void {
    const loop = new SubscriberLoop(
      spec,
      this.store,
      this.locks!,
      this.logger,
      this.config.projectionBatchSize,
      batches,
      scans,
      holdsHorizon,
    );
    this.loops.push(loop);
    loop.start();
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all(this.loops.map((l) => l.stop()));
    await this.locks?.close();
  }
}

/** One projection's batch, as its loop asks for it to be committed. */
interface ProjectionBatch {
  projection: RegisteredProjection;
  checkpointName: string;
  events: StoredEvent[];
  expected: Position | undefined;
}

/**
 * The projection batches of a process's loops asked for in one turn of the event loop
 * commit in one transaction. The loops read together (one shared scan, see SharedScans and
 * LocalBatches), so every member write's batches (the members projection and the audit
 * log) are asked for together: one transaction with one BEGIN and one checkpoint
 * statement for all of them instead of one of each per projection. Each projection keeps
 * its own checkpoint row, expectation and outcome: a batch found stale is left out (its
 * loop reads again), and should any handler fail, the joint transaction is rolled back
 * (nothing of it was written) and each batch is committed alone, so that a failing
 * projection fails only its own batch and holds back no other.
 */
export class JointProjectionBatches {
  private pending: { batch: ProjectionBatch; resolve(o: BatchOutcome): void; reject(e: unknown): void }[] =
    [];
  private scheduled = false;

  constructor(
    private readonly db: DataSource,
    private readonly feed?: CheckpointFeed,
  ) {}

  commit(batch: ProjectionBatch): Promise<BatchOutcome> {
    return new Promise<BatchOutcome>((resolve, reject) => {
      this.pending.push({ batch, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      // After the current turn's promise jobs: the loops a shared scan answered ask in it.
      setImmediate(() => {
        this.scheduled = false;
        const asked = this.pending;
        this.pending = [];
        void this.run(asked);
      });
    });
  }

  private async run(asked: JointProjectionBatches['pending']): Promise<void> {
    if (asked.length > 1) {
      let outcomes: BatchOutcome[] | undefined;
      try {
        outcomes = await commitProjectionBatches(
          asked.map((a) => a.batch),
          this.db,
          this.feed,
        );
      } catch {
        // Rolled back whole: each batch alone, with its own outcome (below).
      }
      if (outcomes) {
        asked.forEach((a, i) => a.resolve(outcomes[i]));
        return;
      }
    }
    await Promise.all(
      asked.map((a) =>
        commitProjectionBatches([a.batch], this.db, this.feed).then((o) => a.resolve(o[0]), a.reject),
      ),
    );
  }
}

/**
 * A projection batch: read-model writes and the checkpoint commit in one transaction.
 * The commit is announced on CHECKPOINT_CHANNEL with the new position (read-your-writes
 * waiters in every process keep a map of checkpoints from it instead of querying) and,
 * through `feed`, to this process at once, after COMMIT, never before.
 *
 * The batch is two round trips besides the handler's own statements: BEGIN with the
 * checkpoint's lock, and the checkpoint's move with COMMIT (both multi-statement simple
 * queries, their values as literals), where TypeORM's transaction took five; the writes
 * a handler leaves for the commit (writeWithCommit: the audit log's) go in the second. A write waits for its projections' batches one after the other (they take
 * turns, LocalBatches), so each round trip saved is saved once per projection it waits for.
 * With `joint`, the batches of the process's loops asked for together share the
 * transaction (JointProjectionBatches).
 */
export function projectionSpec(
  p: RegisteredProjection,
  db: DataSource,
  checkpointName = p.definition.name,
  feed?: CheckpointFeed,
  joint?: JointProjectionBatches,
): SubscriberSpec {
  return {
    name: checkpointName,
    eventTypes: p.definition.eventTypes,
    loadCheckpoint: () => readCheckpoint(db.manager, checkpointName),
    async commitBatch(events, expected) {
      const batch = { projection: p, checkpointName, events, expected };
      if (joint) return joint.commit(batch);
      return (await commitProjectionBatches([batch], db, feed))[0];
    },
  };
}

/**
 * Commits the batches of distinct projections in one transaction: each batch is applied
 * and its checkpoint moved, or the batch is 'stale' (its stored checkpoint is no longer
 * what it expected: a rebuild swapped tables in) and left out. Throws, with nothing
 * written, when a handler or a statement fails.
 */
async function commitProjectionBatches(
  batches: readonly ProjectionBatch[],
  db: DataSource,
  feed?: CheckpointFeed,
): Promise<BatchOutcome[]> {
  const runner = db.createQueryRunner();
  const client = (await runner.connect()) as ClientBase;
  // Rows locked in name order, whatever the order asked, as any other joint batch does.
  const names = [...new Set(batches.map((b) => b.checkpointName))].sort();
  if (names.length !== batches.length) throw new Error('joint projection batches share a checkpoint');
  const outcomes: BatchOutcome[] = batches.map(() => 'stale');
  const notices: CheckpointNotice[] = [];
  let open = false;
  try {
    // Opens the transaction, creates the rows on the first batch and locks them, in one
    // round trip. The batch commits without waiting for its WAL flush (synchronous_commit
    // off, this transaction only): it is visible at once as any commit, and a database
    // crash can lose only the last batches together with their checkpoints, which are
    // then applied again from the durably appended events. A write's response so waits
    // for one WAL flush (its append), not for one more per projection.
    open = true;
    const opened = (await client.query(
      `BEGIN; SET LOCAL synchronous_commit = off;
       INSERT INTO subscriber_checkpoints (name, kind, position_commit, position_prepare)
       VALUES ${names.map((n) => `(${client.escapeLiteral(n)}, 'projection', 0, 0)`).join(', ')}
       ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name
       RETURNING name, position_commit, position_prepare`,
    )) as unknown as QueryResult<{ name: string; position_commit: string; position_prepare: string }>[];
    const stored = new Map<string, Position | undefined>();
    for (const row of opened[opened.length - 1].rows) {
      const at = { commit: BigInt(row.position_commit), prepare: BigInt(row.position_prepare) };
      // (0, 0) marks a row created before its first batch: nothing handled yet.
      stored.set(row.name, at.commit === 0n && at.prepare === 0n ? undefined : at);
    }
    const moves: string[] = [];
    const later = new CommitStatements();
    for (const [i, b] of batches.entries()) {
      if (!samePosition(stored.get(b.checkpointName), b.expected)) continue;
      await withCommitStatements(runner.manager, client, later, () =>
        applyEvents(b.projection.handler, b.events, runner.manager),
      );
      const last = b.events[b.events.length - 1].position;
      const notice = { name: b.checkpointName, position: last, auth: feed?.affectsAuth(b.events) ?? false };
      const name = client.escapeLiteral(b.checkpointName);
      // The checkpoint and its announcement (delivered at COMMIT).
      moves.push(
        `WITH moved AS (
           UPDATE subscriber_checkpoints SET position_commit = ${last.commit.toString()},
                  position_prepare = ${last.prepare.toString()},
                  events_handled = events_handled + ${b.events.length}, updated_at = now()
            WHERE name = ${name} RETURNING name)
         SELECT pg_notify(${client.escapeLiteral(CHECKPOINT_CHANNEL)}, ${client.escapeLiteral(encodeNotice(notice))}) FROM moved`,
      );
      notices.push(notice);
      outcomes[i] = 'committed';
    }
    if (moves.length === 0) {
      open = false;
      await client.query('ROLLBACK');
      return outcomes;
    }
    // The crash window the checkpoint tests aim at (a no-op outside them).
    for (const n of notices) beforeCheckpointWrite(n.name);
    // What the handlers left for the commit (core/projections/commit-statements.ts), the
    // checkpoints, then COMMIT, in one round trip.
    await client.query(`${[...later.take(), ...moves].join(';\n')};\nCOMMIT`);
    open = false;
  } catch (err) {
    if (open) await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await runner.release();
  }
  for (const n of notices) feed?.publish(n);
  return outcomes;
}

/**
 * A reactor batch: enqueue (idempotent by job id), then move the checkpoint if it is
 * still where the batch began (one compare-and-set statement). A crash between the two
 * replays the batch and the job ids make the second enqueue a no-op; so does a batch
 * found stale (another leader moved the checkpoint meanwhile), which is then dropped
 * without writing and read again from the stored checkpoint.
 */
export function reactorSpec(r: RegisteredReactor, db: DataSource): SubscriberSpec {
  const name = r.definition.name;
  return {
    name,
    eventTypes: r.definition.eventTypes,
    loadCheckpoint: () => readCheckpoint(db.manager, name),
    async commitBatch(events: StoredEvent[], expected: Position | undefined) {
      if (r.handler.reactBatch) {
        const first = events[0];
        await requestContext.run(
          {
            requestId: first.metadata.correlationId,
            causationId: first.id,
            actor: SYSTEM_ACTOR,
            appended: [],
          },
          () => r.handler.reactBatch!(events),
        );
      } else
        for (const event of events) {
          await requestContext.run(
            {
              requestId: event.metadata.correlationId,
              causationId: event.id,
              actor: SYSTEM_ACTOR,
              appended: [],
            },
            () => r.handler.react(event),
          );
        }
      const last = events[events.length - 1].position;
      const moved = await advanceCheckpoint(db.manager, name, 'reactor', expected, last, events.length);
      return moved ? 'committed' : 'stale';
    },
  };
}
