import { comparePositions } from '../event-store/event-store.port';
import type { EventFilter, EventStore, Position, StoredEvent } from '../event-store/event-store.port';
import { JsonLogger } from '../logging/json-logger';
import { loggableError } from '../logging/loggable-error';
import { LeaderLocks } from './leader-locks';
import type { SharedScans } from './shared-scans';

export type BatchOutcome = 'committed' | 'stale';

interface ReadResult {
  events: StoredEvent[];
  scannedTo?: Position;
  more: boolean;
}

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
/** The longest a read waits for this process's other batches to commit (see LocalBatches). */
const BATCH_WAIT_MS = 50;
/**
 * The same for a reactor's read while it reads through a backlog (its last read stopped at
 * its limit, as through an import): it follows the projections, reading once their batch
 * has committed, when the range it reads is the one they have just read (SharedScans
 * answers it from their scan, without reading the events and their data again). With the
 * projections' 50 ms, a reactor overtook an import's projection batches that took longer
 * and then read every batch in scans of its own. Near the head it keeps the 50 ms, so its
 * latency does not depend on how busy the projections are.
 */
const FOLLOW_WAIT_MS = 1000;

/**
 * The batches this process's subscriber loops are committing right now. A projection
 * batch is a transaction with an id, and until it commits the store's horizon holds back
 * every event appended after it began, for every reader in the cluster. Two projections
 * that take turns (members and the audit log, both fed by every member write) so hide
 * each other's new events: each scan while the other commits finds nothing readable, and
 * under load a loop scanned a dozen times per batch, one empty scan per append that woke
 * it. So a loop reads only when no other local batch is in flight (or after
 * BATCH_WAIT_MS): then it finds what the other's transaction held back, in one scan and
 * one larger batch. A batch of another process is not waited for (its commit wakes the
 * loop through the store's notification, as before).
 */
export class LocalBatches {
  private running = 0;
  private readonly waiters = new Set<() => void>();

  begin(): void {
    this.running++;
  }

  end(): void {
    this.running--;
    if (this.running === 0) for (const w of [...this.waiters]) w();
  }

  /** Resolves at once when no batch is in flight, else when the last ends or after `ms`. */
  idle(ms: number): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }
}

/**
 * Runs one checkpointed subscriber: wins its leadership lock, then reads batches from
 * its checkpoint and commits them, sleeping until the store signals new events. A
 * failing batch is retried with backoff (and logged as an incident), never skipped.
 */
export class SubscriberLoop {
  private stopping = false;
  private done: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  /** When a wake-up without a position came (another process's commit, a reconnect, a caller's transaction). */
  private lastWakeAt = 0;
  /** Counts wake-ups, so that the loop can tell whether one came while it read or committed. */
  private wakes = 0;
  /**
   * The position of the last event of a type this loop handles that this process has
   * appended (its wake-ups carry it): once the loop has looked at everything up to it,
   * nothing local it handles is waiting (see `settledUpTo`).
   */
  private announced: Position | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly spec: SubscriberSpec,
    private readonly store: EventStore,
    private readonly locks: LeaderLocks,
    private readonly logger: JsonLogger,
    private readonly batchSize: number,
    /** Shared by the loops of one process (absent: reads never wait). */
    private readonly batches?: LocalBatches,
    /** Shared by the loops of one process over the store's scanAll (absent: each scans alone). */
    private readonly scans?: SharedScans,
    /**
     * Whether this loop's batches are transactions that hold the store's horizon (a
     * projection's): the other loops then wait for them before reading. A reactor's batch
     * is not: it waits for the projections' like they do (so that it reads with them, in
     * one shared scan, and in the larger batch), and nothing waits for its own.
     */
    private readonly holdsHorizon = true,
  ) {}

  start(): void {
    if (this.done) return;
    this.unsubscribe = this.store.onAppended((eventTypes, position) => {
      // An append in this process of types this subscriber does not handle is not worth a
      // read (every append wakes every loop otherwise, each running its own query); any
      // event it does handle still wakes it, and its polls still find whatever it missed.
      if (!wakes(this.spec.eventTypes, eventTypes)) return;
      if (eventTypes && position) {
        if (!this.announced || comparePositions(position, this.announced) > 0) this.announced = position;
      } else {
        this.lastWakeAt = Date.now();
      }
      this.wakes++;
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
          err: loggableError(err),
        });
        await this.sleep(delay);
      }
    }
  }

  /**
   * `checkpoint` is the position of the last committed event, what commitBatch expects
   * to find stored. `readFrom` is where the next read starts: with the store's scanAll it
   * also moves past events looked at that did not match, so a subscriber of rare event
   * types does not read the same unmatched tail again on every poll. It is memory only:
   * a new leadership term, a retry after a failure or a stale batch starts again from
   * the stored checkpoint.
   */
  private async lead(onProgress: () => void): Promise<void> {
    let checkpoint = await this.spec.loadCheckpoint();
    let readFrom = checkpoint;
    const filter = this.spec.eventTypes === 'all' ? undefined : { eventTypes: this.spec.eventTypes };
    /** The next batch's read, begun while this one commits (see below). */
    let ahead: { from: Position; read: Promise<ReadResult>; wakes: number } | undefined;
    /** Whether the last read stopped at its limit (a backlog to read through). */
    let behind = false;
    while (!this.stopping && this.locks.holds(this.spec.name)) {
      let wakesBefore = this.wakes;
      let result: ReadResult;
      if (ahead && readFrom && comparePositions(ahead.from, readFrom) === 0) {
        wakesBefore = ahead.wakes;
        result = await ahead.read;
      } else {
        await this.batches?.idle(this.holdsHorizon || !behind ? BATCH_WAIT_MS : FOLLOW_WAIT_MS);
        wakesBefore = this.wakes;
        result = await this.read(readFrom, filter);
      }
      ahead = undefined;
      const { events, scannedTo, more } = result;
      behind = more;
      if (!events.length) {
        if (scannedTo) readFrom = later(readFrom, scannedTo);
        if (more) continue;
        if (this.settledUpTo(readFrom)) await this.sleep(IDLE_POLL_MS);
        // Announced but not readable yet: an older transaction holds it back.
        else if (this.wakes === wakesBefore) await this.sleep(BUSY_POLL_MS);
        // (A wake-up that came during the read is read for at once.)
        continue;
      }
      // In a projection's loop, a read that stopped at its limit left events to read (a
      // backlog, such as an import's): the next read starts now, while this batch commits,
      // from where this one ended. It finds what was committed before this batch's
      // transaction began (the backlog), never less than a read after the commit would find
      // up to where it ends (positions below the store's horizon are final). So the loop's
      // batches follow each other without a read between them. A stale or failed batch
      // drops it. (A reactor reads after their batches, from what they have read: see
      // FOLLOW_WAIT_MS.)
      const next = later(readFrom, scannedTo ?? events[events.length - 1].position);
      if (more && this.holdsHorizon) {
        const wakes = this.wakes;
        const read = this.read(next, filter);
        read.catch(() => undefined);
        ahead = { from: next, read, wakes };
      }
      const registered = this.holdsHorizon ? this.batches : undefined;
      registered?.begin();
      let outcome: BatchOutcome;
      try {
        outcome = await this.spec.commitBatch(events, checkpoint);
      } finally {
        registered?.end();
      }
      if (outcome === 'stale') {
        ahead = undefined;
        checkpoint = await this.spec.loadCheckpoint();
        readFrom = checkpoint;
      } else {
        checkpoint = events[events.length - 1].position;
        readFrom = next;
        // Read again at once only when something may be waiting: the read stopped at its
        // limit, a wake-up without a position came meanwhile, or this process appended
        // something it handles beyond what it looked at. Otherwise the next wake-up (or
        // poll) says when; a read now would find nothing (under load, one empty scan per
        // loop per batch).
        if (!more && this.wakes === wakesBefore && this.settledUpTo(readFrom)) {
          onProgress();
          await this.sleep(IDLE_POLL_MS);
          continue;
        }
      }
      onProgress();
    }
  }

  /**
   * Whether nothing is known to wait beyond `readFrom`: every event of a handled type this
   * process appended has been looked at, and no wake-up without a position (another
   * process, a caller's transaction, a reconnect) came in the last two seconds. Otherwise
   * the loop polls again shortly: an older transaction may have held back what a wake-up
   * announced (it is readable once that transaction ends, which may announce nothing).
   */
  private settledUpTo(readFrom: Position | undefined): boolean {
    if (Date.now() - this.lastWakeAt < 2000) return false;
    return !this.announced || (!!readFrom && comparePositions(this.announced, readFrom) <= 0);
  }

  private async read(after: Position | undefined, filter: EventFilter | undefined): Promise<ReadResult> {
    if (this.scans) return this.scans.scan({ after, limit: this.batchSize, filter });
    if (this.store.scanAll) return this.store.scanAll({ after, limit: this.batchSize, filter });
    const events = await this.store.readAll({ after, maxCount: this.batchSize, filter });
    return { events, more: false };
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

const checkpointWrites = new Map<string, number>();

/**
 * Test-only fault injection, for the crash specs' child processes. With NODE_ENV=test and
 * SPINE_TEST_EXIT_BEFORE_CHECKPOINT="<subscriber>@<n>[,...]", the process SIGKILLs itself
 * as it is about to write that subscriber's n-th checkpoint, i.e. after the batch's
 * read-model writes. writeCheckpoint() calls it, so it marks the window between the
 * two wherever a checkpoint is written: in one transaction with the read model nothing
 * survives the kill; in a transaction of its own the read model would run ahead.
 */
export function beforeCheckpointWrite(subscriber: string): void {
  const plan = process.env.SPINE_TEST_EXIT_BEFORE_CHECKPOINT;
  if (!plan || process.env.NODE_ENV !== 'test') return;
  const count = (checkpointWrites.get(subscriber) ?? 0) + 1;
  checkpointWrites.set(subscriber, count);
  const doomed = plan.split(',').some((entry) => {
    const at = entry.lastIndexOf('@');
    return entry.slice(0, at) === subscriber && Number(entry.slice(at + 1)) === count;
  });
  if (doomed) process.kill(process.pid, 'SIGKILL');
}

/** Whether an append of `appended` types (absent: unknown) concerns a subscriber of `handled` types. */
export function wakes(
  handled: readonly string[] | 'all',
  appended: ReadonlySet<string> | undefined,
): boolean {
  if (handled === 'all' || !appended) return true;
  return handled.some((type) => appended.has(type));
}

/** The later of two positions; an absent one is before every event. */
function later(a: Position | undefined, b: Position): Position {
  return a && comparePositions(a, b) > 0 ? a : b;
}
