import { TestDatabase, createTestDatabase } from '../../../test/support/database';
import { startEventStoreDbStandIn } from '../../../test/support/esdb-standin';
import type { EventStoreDbStandIn } from '../../../test/support/esdb-standin';
import { EventStore, Position, StoredEvent } from '../event-store/event-store.port';
import { EventStoreDbEventStore } from '../event-store/eventstoredb/eventstoredb-event-store';
import { InMemoryEventStore } from '../event-store/memory/in-memory-event-store';
import { delay, event, eventually, range, uniq } from '../event-store/testing/event-store.test-helpers';
import { JsonLogger } from '../logging/json-logger';
import { samePosition } from './checkpoints';
import { LeaderLocks } from './leader-locks';
import { BatchOutcome, SubscriberLoop, SubscriberSpec } from './subscriber-loop';

/**
 * A subscriber whose checkpoint lives in memory. It records what it commits and every
 * batch whose `expected` was not the checkpoint it holds (the loop must always pass
 * the position of the last committed event, however far it has read past it).
 */
class RecordingSubscriber implements SubscriberSpec {
  readonly committed: StoredEvent[] = [];
  readonly wrongExpected: (Position | undefined)[] = [];
  checkpoint: Position | undefined;
  /** Set to make the next batch find the stored checkpoint moved (as a rebuild does). */
  resetOnNextBatch = false;

  constructor(
    readonly name: string,
    readonly eventTypes: readonly string[],
  ) {}

  loadCheckpoint(): Promise<Position | undefined> {
    return Promise.resolve(this.checkpoint);
  }

  commitBatch(events: StoredEvent[], expected: Position | undefined): Promise<BatchOutcome> {
    if (this.resetOnNextBatch) {
      this.resetOnNextBatch = false;
      this.checkpoint = undefined;
      this.committed.length = 0;
      return Promise.resolve('stale');
    }
    if (!samePosition(expected, this.checkpoint)) {
      this.wrongExpected.push(expected);
      return Promise.resolve('stale');
    }
    this.committed.push(...events);
    this.checkpoint = events[events.length - 1].position;
    return Promise.resolve('committed');
  }
}

/** The same store without the optional scanAll: the loop falls back to readAll. */
function withoutScanAll(store: EventStore): EventStore {
  return {
    kind: store.kind,
    append: (...args) => store.append(...args),
    readStream: (...args) => store.readStream(...args),
    readAll: (...args) => store.readAll(...args),
    subscribe: (...args) => store.subscribe(...args),
    onAppended: (...args) => store.onAppended(...args),
    headPosition: () => store.headPosition(),
    ping: () => store.ping(),
    close: () => store.close(),
  };
}

const logger = new JsonLogger('error');
let db: TestDatabase;
let locks: LeaderLocks;

beforeAll(async () => {
  // Leadership is a PostgreSQL advisory lock: a database of its own keeps it apart.
  db = await createTestDatabase({ migrate: false });
  locks = new LeaderLocks(db.url, logger);
});
afterAll(async () => {
  await locks?.close();
  await db?.drop();
});

describe('SubscriberLoop on EventStoreDB (stand-in)', () => {
  let standIn: EventStoreDbStandIn;
  let store: EventStoreDbEventStore;

  beforeAll(async () => {
    standIn = await startEventStoreDbStandIn({ systemEventIntervalMs: 250 });
    store = new EventStoreDbEventStore({ connectionString: standIn.connectionString });
  });
  afterAll(async () => {
    await store?.close();
    await standIn?.stop();
  });

  it('does not read the unmatched tail of $all again on every poll for a rare event type', async () => {
    const prefix = uniq();
    // The rare event first: the 2,000 after it are the tail behind the checkpoint that a
    // poll reading from the checkpoint would read again, and filter out, every time.
    const rare = await store.append(`${prefix}-rare-1`, [event('Rare', { n: 1 })]);
    for (let i = 0; i < 20; i++)
      await store.append(
        `${prefix}-common-${i}`,
        range(100).map((n) => event('Common', { n })),
      );

    const subscriber = new RecordingSubscriber(`rare-${prefix}`, ['Rare']);
    const loop = new SubscriberLoop(subscriber, store, locks, logger, 500);
    const atStart = standIn.stats.allEventsRead;
    loop.start();
    try {
      await eventually(
        () => Promise.resolve(subscriber.committed.length),
        (n) => n >= 1,
      );
      expect(subscriber.committed.map((e) => e.id)).toEqual([rare.events[0].id]);
      // Let it look through the rest of the tail (four batches of 500): it has read all
      // 2,001 events once, and reading settles. A quiet window alone is not enough on a
      // loaded machine, where the loop may still be between batches of its first pass.
      await eventually(
        async () => {
          const start = standIn.stats.allEventsRead;
          await delay(200);
          return { firstPass: start - atStart, quiet: standIn.stats.allEventsRead - start };
        },
        ({ firstPass, quiet }) => firstPass >= 2001 && quiet < 100,
      );

      // Caught up. Wake-ups and polls now should read only what is new.
      const before = standIn.stats.allEventsRead;
      for (let i = 0; i < 10; i++) {
        await store.append(`${prefix}-common-late`, [event('Common', { late: i })]);
        await delay(20);
      }
      await delay(1500);
      const readSince = standIn.stats.allEventsRead - before;
      // A poll reading from the checkpoint would read the 2,000 again each time.
      expect(readSince).toBeLessThan(200);

      const later = await store.append(`${prefix}-rare-2`, [event('Rare', { n: 2 })]);
      await eventually(
        () => Promise.resolve(subscriber.committed.length),
        (n) => n >= 2,
      );
      await delay(300);
      expect(subscriber.committed.map((e) => e.id)).toEqual([rare.events[0].id, later.events[0].id]);
      expect(subscriber.wrongExpected).toEqual([]);
      expect(subscriber.checkpoint).toEqual(later.position);
    } finally {
      await loop.stop();
    }
  });
});

describe.each([
  ['with scanAll', (s: InMemoryEventStore): EventStore => s],
  ['with readAll only', withoutScanAll],
])('SubscriberLoop on the in-memory store, %s', (_name, adapt) => {
  it('delivers each matching event once, passing the last committed position as expected', async () => {
    const memory = new InMemoryEventStore();
    const store = adapt(memory);
    const prefix = uniq();
    const subscriber = new RecordingSubscriber(`memory-${prefix}`, ['Rare']);
    // A batch of 4 looks at 4 events: the rare ones sit among many that do not match.
    const loop = new SubscriberLoop(subscriber, store, locks, logger, 4);
    const rare: string[] = [];
    for (let i = 0; i < 3; i++) {
      await memory.append(
        `${prefix}-common`,
        range(9).map(() => event('Common')),
      );
      rare.push((await memory.append(`${prefix}-rare`, [event('Rare', { i })])).events[0].id);
    }
    loop.start();
    try {
      await eventually(
        () => Promise.resolve(subscriber.committed.length),
        (n) => n >= 3,
      );
      // A rebuild moves the stored checkpoint back: the loop must read from there again.
      subscriber.resetOnNextBatch = true;
      await memory.append(`${prefix}-common`, [event('Common')]);
      rare.push((await memory.append(`${prefix}-rare`, [event('Rare', { i: 3 })])).events[0].id);
      await eventually(
        () => Promise.resolve(subscriber.committed.length),
        (n) => n >= 4,
      );
      await memory.append(`${prefix}-common`, [event('Common')]);
      rare.push((await memory.append(`${prefix}-rare`, [event('Rare', { i: 4 })])).events[0].id);
      await eventually(
        () => Promise.resolve(subscriber.committed.length),
        (n) => n >= 5,
      );
      await delay(100);
      expect(subscriber.committed.map((e) => e.id)).toEqual(rare);
      expect(subscriber.wrongExpected).toEqual([]);
    } finally {
      await loop.stop();
      await memory.close();
    }
  });
});

describe('SubscriberLoop wake-ups', () => {
  it('reads on an append of a type it handles or of unknown types, not on one of types it does not handle', async () => {
    const memory = new InMemoryEventStore();
    const listeners = new Set<(types?: ReadonlySet<string>) => void>();
    let reads = 0;
    // The in-memory store, but wake-ups come only from the test, with the types it names.
    const store: EventStore = {
      ...withoutScanAll(memory),
      scanAll: (options) => {
        reads++;
        return memory.scanAll(options);
      },
      onAppended: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    };
    const wake = (types?: string[]) => listeners.forEach((l) => l(types && new Set(types)));
    // Lets the loop finish what a wake-up started (read, commit, back to sleep): no timers.
    const settle = async () => {
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    };
    const prefix = uniq();
    const subscriber = new RecordingSubscriber(`wakes-${prefix}`, ['Rare']);
    const loop = new SubscriberLoop(subscriber, store, locks, logger, 100);
    loop.start();
    try {
      await eventually(
        () => Promise.resolve(reads),
        (n) => n >= 1,
      );
      await settle();
      const rare = await memory.append(`${prefix}-rare`, [event('Rare')]);

      let before = reads;
      wake(['Common']);
      await settle();
      expect(reads).toBe(before);
      expect(subscriber.committed).toEqual([]);

      wake(['Common', 'Rare']);
      await settle();
      expect(reads).toBeGreaterThan(before);
      expect(subscriber.committed.map((e) => e.id)).toEqual([rare.events[0].id]);

      const other = await memory.append(`${prefix}-rare`, [event('Rare')]);
      before = reads;
      wake(); // another process's append: its types are unknown
      await settle();
      expect(reads).toBeGreaterThan(before);
      expect(subscriber.committed.map((e) => e.id)).toEqual([rare.events[0].id, other.events[0].id]);
    } finally {
      await loop.stop();
      await memory.close();
    }
  });
});

describe('SubscriberLoop wake-ups with the appended position', () => {
  it('reads no more once it has looked past what this process announced; polls while it is held back', async () => {
    const memory = new InMemoryEventStore();
    const listeners = new Set<(types?: ReadonlySet<string>, position?: Position) => void>();
    let reads = 0;
    // Nothing is readable while `holding` (an older transaction holding the horizon).
    let holding = false;
    const store: EventStore = {
      ...withoutScanAll(memory),
      scanAll: (options) => {
        reads++;
        return holding ? Promise.resolve({ events: [], more: false }) : memory.scanAll(options);
      },
      onAppended: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    };
    const wake = (types: string[], position: Position) =>
      listeners.forEach((l) => l(new Set(types), position));
    const prefix = uniq();
    const subscriber = new RecordingSubscriber(`placed-${prefix}`, ['Rare']);
    const loop = new SubscriberLoop(subscriber, store, locks, logger, 100);
    loop.start();
    try {
      await eventually(
        () => Promise.resolve(reads),
        (n) => n >= 1,
      );
      const first = await memory.append(`${prefix}-rare`, [event('Rare')]);
      wake(['Rare'], first.position);
      await eventually(
        () => Promise.resolve(subscriber.committed.length),
        (n) => n === 1,
      );
      // It has looked at what was announced: no read until the next wake-up (it polled
      // every 20 ms for two seconds after any wake-up before).
      await delay(50);
      const settled = reads;
      await delay(200);
      expect(reads).toBe(settled);

      // Announced but held back: it polls until it can read it, with no further wake-up.
      holding = true;
      const second = await memory.append(`${prefix}-rare`, [event('Rare')]);
      wake(['Rare'], second.position);
      const heldAt = reads;
      await delay(200);
      expect(reads).toBeGreaterThanOrEqual(heldAt + 3);
      expect(subscriber.committed).toHaveLength(1);
      holding = false;
      await eventually(
        () => Promise.resolve(subscriber.committed.length),
        (n) => n === 2,
      );
      expect(subscriber.committed.map((e) => e.id)).toEqual([first.events[0].id, second.events[0].id]);
      expect(subscriber.wrongExpected).toEqual([]);
    } finally {
      await loop.stop();
      await memory.close();
    }
  });
});

describe('SubscriberLoop reading ahead through a backlog', () => {
  it('reads the next batch while one commits, and commits every event once, in order', async () => {
    const memory = new InMemoryEventStore();
    const prefix = uniq();
    const appended: string[] = [];
    for (let i = 0; i < 5; i++)
      appended.push(
        ...(
          await memory.append(
            `${prefix}-s${i}`,
            range(10).map((n) => event('Thing', { i, n })),
          )
        ).events.map((e) => e.id),
      );
    const scans: number[] = [];
    const store: EventStore = {
      ...withoutScanAll(memory),
      scanAll: (o) => {
        scans.push(Date.now());
        return memory.scanAll(o);
      },
    };
    // A slow commit: the loop's next read must not wait for it.
    const subscriber = new RecordingSubscriber(`ahead-${prefix}`, ['Thing']);
    const commit = subscriber.commitBatch.bind(subscriber);
    const commits: { start: number; readsBefore: number }[] = [];
    subscriber.commitBatch = async (events, expected) => {
      commits.push({ start: Date.now(), readsBefore: scans.length });
      await delay(30);
      return commit(events, expected);
    };
    const loop = new SubscriberLoop(subscriber, store, locks, logger, 10);
    loop.start();
    try {
      await eventually(
        () => Promise.resolve(subscriber.committed.length),
        (n) => n >= 50,
      );
      await delay(100);
      expect(subscriber.committed.map((e) => e.id)).toEqual(appended);
      expect(subscriber.wrongExpected).toEqual([]);
      // Each full batch's commit began with the next batch's read already asked for.
      for (const [i, c] of commits.slice(0, 4).entries()) expect(c.readsBefore).toBeGreaterThanOrEqual(i + 2);
    } finally {
      await loop.stop();
      await memory.close();
    }
  });
});
