import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/config';
import { EVENT_STORE, EventStore, Position, StoredEvent } from '../event-store/event-store.port';
import { JsonLogger } from '../logging/json-logger';
import { requestContext, SYSTEM_ACTOR } from '../cqrs/request-context';
import { CHECKPOINT_CHANNEL, readCheckpoint, samePosition, writeCheckpoint } from './checkpoints';
import { CheckpointFeed, encodeNotice } from './checkpoint-feed';
import { LeaderLocks } from './leader-locks';
import { SharedScans } from './shared-scans';
import { applyEvents, RegisteredProjection } from './projection';
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
    // turns reading (LocalBatches). A reactor's batch is no transaction: its loop reads freely.
    for (const p of this.registry.projections())
      this.startLoop(projectionSpec(p, this.db, undefined, this.feed), this.batches, this.scans);
    for (const r of this.registry.reactors()) this.startLoop(reactorSpec(r, this.db), undefined, this.scans);
  }

  private startLoop(spec: SubscriberSpec, batches?: LocalBatches, scans?: SharedScans): void {
    const loop = new SubscriberLoop(
      spec,
      this.store,
      this.locks!,
      this.logger,
      this.config.projectionBatchSize,
      batches,
      scans,
    );
    this.loops.push(loop);
    loop.start();
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all(this.loops.map((l) => l.stop()));
    await this.locks?.close();
  }
}

/**
 * A projection batch: read-model writes and the checkpoint commit in one transaction.
 * The commit is announced on CHECKPOINT_CHANNEL with the new position (read-your-writes
 * waiters in every process keep a map of checkpoints from it instead of querying) and,
 * through `feed`, to this process at once, after COMMIT, never before.
 */
export function projectionSpec(
  p: RegisteredProjection,
  db: DataSource,
  checkpointName = p.definition.name,
  feed?: CheckpointFeed,
): SubscriberSpec {
  return {
    name: checkpointName,
    eventTypes: p.definition.eventTypes,
    loadCheckpoint: () => readCheckpoint(db.manager, checkpointName),
    async commitBatch(events, expected) {
      const last = events[events.length - 1].position;
      const notice = { name: checkpointName, position: last, auth: feed?.affectsAuth(events) ?? false };
      const outcome = await db.transaction(async (em): Promise<BatchOutcome> => {
        // Creates the row on the first batch and locks it, in one round trip. The batch
        // commits without waiting for its WAL flush (synchronous_commit off, this transaction
        // only): it is visible at once as any commit, and a database crash can lose only the
        // last batches together with their checkpoint, which are then applied again from
        // the durably appended events. A write's response so waits for one WAL flush (its
        // append), not for one more per projection.
        const [row] = (await em.query(
          `INSERT INTO subscriber_checkpoints (name, kind, position_commit, position_prepare)
           SELECT $1, 'projection', 0, 0 FROM (SELECT set_config('synchronous_commit', 'off', true)) AS local_setting
           ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name
           RETURNING position_commit, position_prepare`,
          [checkpointName],
        )) as { position_commit: string; position_prepare: string }[];
        const at = { commit: BigInt(row.position_commit), prepare: BigInt(row.position_prepare) };
        // (0, 0) marks a row created before its first batch: nothing handled yet.
        const stored = at.commit === 0n && at.prepare === 0n ? undefined : at;
        if (!samePosition(stored, expected)) return 'stale';
        await applyEvents(p.handler, events, em);
        // The crash window the checkpoint tests aim at (a no-op outside them).
        beforeCheckpointWrite(checkpointName);
        // The checkpoint and its announcement in one statement (delivered at COMMIT).
        await em.query(
          `WITH moved AS (
             UPDATE subscriber_checkpoints SET position_commit = $2, position_prepare = $3,
                    events_handled = events_handled + $4, updated_at = now()
              WHERE name = $1 RETURNING name)
           SELECT pg_notify($5, $6) FROM moved`,
          [
            checkpointName,
            last.commit.toString(),
            last.prepare.toString(),
            events.length,
            CHECKPOINT_CHANNEL,
            encodeNotice(notice),
          ],
        );
        return 'committed';
      });
      if (outcome === 'committed') feed?.publish(notice);
      return outcome;
    },
  };
}

/**
 * A reactor batch: enqueue (idempotent by job id), then checkpoint. A crash between
 * the two replays the batch and the job ids make the second enqueue a no-op.
 */
function reactorSpec(r: RegisteredReactor, db: DataSource): SubscriberSpec {
  const name = r.definition.name;
  return {
    name,
    eventTypes: r.definition.eventTypes,
    loadCheckpoint: () => readCheckpoint(db.manager, name),
    async commitBatch(events: StoredEvent[], expected: Position | undefined) {
      const current = await readCheckpoint(db.manager, name);
      if (!samePosition(current, expected)) return 'stale';
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
      await writeCheckpoint(db.manager, name, 'reactor', events[events.length - 1].position, events.length);
      return 'committed';
    },
  };
}
