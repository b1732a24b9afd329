import { createTestDatabase, TestDatabase } from '../../../test/support/database';
import type { EventStore, StoredEvent } from '../event-store/event-store.port';
import { PostgresEventStore } from '../event-store/postgres/postgres-event-store';
import { Decider } from './decider';
import { EventSourcedRepository } from './event-sourced-repository';

type Event = { type: 'Named'; data: { name: string } };
type State = { names: string[] };
const decider: Decider<State, never, Event> = {
  initialState: () => ({ names: [] }),
  evolve: (s, e) => ({ names: [...s.names, e.data.name] }),
  decide: () => [],
};
const ws = '0190a6c4-0000-7000-8000-000000000003';
let seq = 0;
const newStream = () => `shared-${process.pid}-${Date.now()}-${++seq}`;

/**
 * The store's reads, counted, each held back until `release` (a slow statement): while
 * one is held, the test can ask for more reads and write behind their backs.
 */
function gated(store: EventStore) {
  let reads = 0;
  const held: (() => void)[] = [];
  const readStream = store.readStream.bind(store);
  store.readStream = (async (...args: Parameters<EventStore['readStream']>) => {
    reads++;
    const events = await readStream(...args);
    await new Promise<void>((resolve) => held.push(resolve));
    return events;
  }) as EventStore['readStream'];
  return {
    reads: () => reads,
    /** Lets the held reads return, once some are held. */
    release: async () => {
      while (!held.length) await new Promise((r) => setTimeout(r, 2));
      held.splice(0).forEach((go) => go());
    },
  };
}

const append = (store: EventStore, stream: string, name: string) =>
  new EventSourcedRepository(store).append(stream, ws, [{ type: 'Named', data: { name } }], 'any');

describe('EventSourcedRepository.loadShared (PostgreSQL)', () => {
  let db: TestDatabase;
  let store: PostgresEventStore;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db?.drop());
  // A store of its own per test: each replaces its readStream.
  beforeEach(() => {
    store = new PostgresEventStore({ connectionString: db.url, poolSize: 4 });
  });
  afterEach(() => store.close());

  it('answers concurrent callers of one stream with one read each round trip, each read sent after its callers asked', async () => {
    const stream = newStream();
    await append(store, stream, 'first');
    const gate = gated(store);
    const repo = new EventSourcedRepository(store);

    const early = repo.loadShared(stream, decider);
    // Written after the first read was sent, before the others asked: they must see it.
    await new Promise((r) => setTimeout(r, 20));
    await append(store, stream, 'second');
    const later = Array.from({ length: 10 }, () => repo.loadShared(stream, decider));
    await gate.release(); // the first read returns; the ten share the next
    await gate.release();
    const [a, ...rest] = await Promise.all([early, ...later]);

    expect(a.state.names).toEqual(['first']);
    for (const r of rest) {
      expect(r.state.names).toEqual(['first', 'second']);
      expect(r.revision).toBe(1n);
    }
    expect(gate.reads()).toBe(2);
  });

  it('reads again for a caller who asks once the shared read has returned', async () => {
    const stream = newStream();
    await append(store, stream, 'one');
    const gate = gated(store);
    const repo = new EventSourcedRepository(store);
    const first = repo.loadShared(stream, decider);
    await gate.release();
    expect((await first).state.names).toEqual(['one']);
    await append(store, stream, 'two');
    const second = repo.loadShared(stream, decider);
    await gate.release();
    expect((await second).state.names).toEqual(['one', 'two']);
    expect(gate.reads()).toBe(2);
  });

  it('fails the callers of a failed read and reads anew for the next', async () => {
    const stream = newStream();
    await append(store, stream, 'x');
    const repo = new EventSourcedRepository(store);
    const readStream = store.readStream.bind(store);
    let fail = true;
    store.readStream = (async (...args: Parameters<EventStore['readStream']>): Promise<StoredEvent[]> => {
      if (fail) {
        fail = false;
        await new Promise((r) => setTimeout(r, 20));
        throw new Error('connection lost');
      }
      return readStream(...args);
    }) as EventStore['readStream'];
    const failing = repo.loadShared(stream, decider);
    const waiting = repo.loadShared(stream, decider); // shares the read sent after the failed one
    await expect(failing).rejects.toThrow('connection lost');
    expect((await waiting).state.names).toEqual(['x']);
    expect((await repo.loadShared(stream, decider)).state.names).toEqual(['x']);
  });
});
