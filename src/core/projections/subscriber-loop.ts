import type { EventStore, Position, StoredEvent } from '../event-store/event-store.port';
import { JsonLogger } from '../logging/json-logger';
import { LeaderLocks } from './leader-locks';

export type BatchOutcome = 'committed' | 'stale';

export interface SubscriberSpec {
  name: string;
  eventTypes: readonly string[] | 'all';
  /** Reads the stored checkpoint (absent: from the first event). */
  loadCheckpoint(): Promise<Position | undefined>;
  /**
   * Applies a batch and moves the checkpoint to its last event. Returns 'stale' when
   * the stored checkpoint is no longer `expected` (a rebuild swapped tables in).
   */
  commitBatch(events: StoredEvent[], expected: Position | undefined): Promise<BatchOutcome>;
}

const LEADER_RETRY_MS = 1000;
/** Shortly after a wake-up, poll again: an older transaction may still have been open. */
const BUSY_POLL_MS = 20;
const IDLE_POLL_MS = 1000;
const MAX_BACKOFF_MS = 30_000;

/**
 * Runs one checkpointed subscriber: wins its leadership lock, then reads batches from
 * its checkpoint and commits them, sleeping until the store signals new events. A
 * failing batch is retried with backoff (and logged as an incident), never skipped.
 */
export class SubscriberLoop {
  private stopping = false;
  private done: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private lastWakeAt = 0;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly spec: SubscriberSpec,
    private readonly store: EventStore,
    private readonly locks: LeaderLocks,
    private readonly logger: JsonLogger,
    private readonly batchSize: number,
  ) {}

  start(): void {
    if (this.done) return;
    this.unsubscribe = this.store.onAppended(() => {
      this.lastWakeAt = Date.now();
      this.wake?.();
    });
    this.done = this.run();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.done;
    this.unsubscribe?.();
    await this.locks.release(this.spec.name);
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      try {
        if (!(await this.locks.tryAcquire(this.spec.name))) {
          await this.sleep(LEADER_RETRY_MS);
          continue;
        }
        await this.lead(() => (failures = 0));
      } catch (err) {
        failures++;
        const delay = Math.min(MAX_BACKOFF_MS, 100 * 2 ** Math.min(failures, 10));
        this.logger.event('error', {
          msg: 'subscriber batch failed',
          subscriber: this.spec.name,
          failures,
          retryInMs: delay,
          err:
            err instanceof Error ? { name: err.name, message: err.message, stack: err.stack } : String(err),
        });
        await this.sleep(delay);
      }
    }
  }

  private async lead(onProgress: () => void): Promise<void> {
    let checkpoint = await this.spec.loadCheckpoint();
    while (!this.stopping && this.locks.holds(this.spec.name)) {
      const events = await this.store.readAll({
        after: checkpoint,
        maxCount: this.batchSize,
        filter: this.spec.eventTypes === 'all' ? undefined : { eventTypes: this.spec.eventTypes },
      });
      if (!events.length) {
        await this.sleep(Date.now() - this.lastWakeAt < 2000 ? BUSY_POLL_MS : IDLE_POLL_MS);
        continue;
      }
      const outcome = await this.spec.commitBatch(events, checkpoint);
      checkpoint =
        outcome === 'stale' ? await this.spec.loadCheckpoint() : events[events.length - 1].position;
      onProgress();
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = undefined;
        done();
      };
    });
  }
}
