import { createTestDatabase, TestDatabase } from '../../../test/support/database';
import type { EventStore } from '../event-store/event-store.port';
import { InMemoryEventStore } from '../event-store/memory/in-memory-event-store';
import { PostgresEventStore } from '../event-store/postgres/postgres-event-store';
import { PreconditionFailedError } from '../http/domain-errors';
import { Decider } from './decider';
import { AGGREGATE_CACHE_SIZE, CachedLoader, EventSourcedRepository } from './event-sourced-repository';

/** A tiny aggregate: a name, and a lock a command's check refuses. */
type Event = { type: 'Named'; data: { name: string } } | { type: 'Locked'; data: { locked: boolean } };
type State = { name: string | null; locked: boolean };
type Command = { name: string } | { locked: boolean };
const decider: Decider<State, Command, Event> = {
  initialState: () => ({ name: null, locked: false }),
  evolve: (s, e) => (e.type === 'Named' ? { ...s, name: e.data.name } : { ...s, locked: e.data.locked }),
  decide: (c, s) => {
    if ('locked' in c) return c.locked === s.locked ? [] : [{ type: 'Locked', data: { locked: c.locked } }];
    return c.name === s.name ? [] : [{ type: 'Named', data: { name: c.name } }];
  },
};
const ws = '0190a6c4-0000-7000-8000-000000000002';
let seq = 0;
const newStream = () => `thing-${process.pid}-${Date.now()}-${++seq}`;

/** The store, with a count of the stream reads made through it. */
function counted(store: EventStore): { store: EventStore; reads: () => number } {
  let reads = 0;
  const readStream = store.readStream.bind(store);
  store.readStream = ((...args: Parameters<EventStore['readStream']>) => {
    reads++;
    return readStream(...args);
  }) as EventStore['readStream'];
  return { store, reads: () => reads };
}

/**
 * The command shape cachedFirst serves: load (through the loader), check, decide and append
 * once. `seen` records the state each run checked.
 */
function rename(
  repo: EventSourcedRepository,
  stream: string,
  name: string,
  seen: State[] = [],
  expectedRevision?: bigint,
) {
  return repo.cachedFirst(async (loader: CachedLoader) => {
    const loaded = await loader.load(stream, decider);
    seen.push(loaded.state);
    if (loaded.state.locked) throw new Error('locked');
    return repo.handle({
      streamName: stream,
      workspaceId: ws,
      decider,
      command: { name },
      loaded,
      expectedRevision,
    });
  });
}

async function names(store: EventStore, stream: string): Promise<string[]> {
  return (await store.readStream(stream)).map((e) =>
    e.type === 'Named'
      ? (e.data as { name: string }).name
      : `locked=${(e.data as { locked: boolean }).locked}`,
  );
}

/**
 * Two repositories stand for two processes, each with its own cache, over one store
 * (on PostgreSQL, two stores on one database: what two processes have).
 */
function describeCache(
  name: string,
  open: () => Promise<{ a: EventStore; b: EventStore; close: () => Promise<void> }>,
): void {
  describe(`EventSourcedRepository's aggregate cache (${name})`, () => {
    let a: ReturnType<typeof counted>;
    let b: EventStore;
    let close: () => Promise<void>;
    let repoA: EventSourcedRepository;
    let repoB: EventSourcedRepository;
    beforeEach(async () => {
      const opened = await open();
      a = counted(opened.a);
      b = opened.b;
      close = opened.close;
      repoA = new EventSourcedRepository(a.store);
      repoB = new EventSourcedRepository(b);
    });
    afterEach(() => close());

    it('decides on the state it last wrote without reading the stream, and appends at the right revision', async () => {
      const stream = newStream();
      await rename(repoA, stream, 'one');
      const before = a.reads();
      const seen: State[] = [];
      await rename(repoA, stream, 'two', seen);
      await rename(repoA, stream, 'three', seen);
      expect(a.reads() - before).toBe(0);
      expect(seen.map((s) => s.name)).toEqual(['one', 'two']);
      expect(await names(b, stream)).toEqual(['one', 'two', 'three']);
    });

    it('re-runs the whole command on fresh state when another process moved the stream, writing nothing on the stale one', async () => {
      const stream = newStream();
      await rename(repoA, stream, 'one');
      await rename(repoB, stream, 'other');
      const seen: State[] = [];
      const result = await rename(repoA, stream, 'two', seen);
      // The check ran twice: on the cached state, then on the stream as it stands.
      expect(seen.map((s) => s.name)).toEqual(['one', 'other']);
      expect(result.state.name).toBe('two');
      expect(await names(b, stream)).toEqual(['one', 'other', 'two']);
      // And the cache now holds what it wrote: the next command reads nothing.
      const before = a.reads();
      await rename(repoA, stream, 'three');
      expect(a.reads() - before).toBe(0);
    });

    it('lets twelve concurrent writers of one stream all land (each lost race re-decided), across both processes', async () => {
      const stream = newStream();
      await rename(repoA, stream, 'start');
      const writers = Array.from({ length: 12 }, (_, i) =>
        repoB.handle({ streamName: stream, workspaceId: ws, decider, command: { name: `w${i}` } }),
      );
      const settled = await Promise.allSettled(writers);
      expect(settled.filter((r) => r.status === 'rejected')).toEqual([]);
      expect((await names(b, stream)).sort()).toEqual(
        ['start', ...Array.from({ length: 12 }, (_, i) => `w${i}`)].sort(),
      );
    });

    it('confirms on a fresh read a decision to write nothing', async () => {
      const stream = newStream();
      await rename(repoA, stream, 'one');
      await rename(repoB, stream, 'other');
      // On A's cached state the name is already "one": a no-op there, a change in truth.
      const result = await rename(repoA, stream, 'one');
      expect(result.events).toHaveLength(1);
      expect(await names(b, stream)).toEqual(['one', 'other', 'one']);
      // A no-op that is one: nothing appended, and no error.
      const none = await rename(repoA, stream, 'one');
      expect(none.events).toEqual([]);
      expect(await names(b, stream)).toEqual(['one', 'other', 'one']);
    });

    it('re-runs a check that refused the cached state, on the stream as another process left it', async () => {
      const stream = newStream();
      await rename(repoA, stream, 'one');
      await repoA.handle({ streamName: stream, workspaceId: ws, decider, command: { locked: true } });
      await repoB.append(stream, ws, [{ type: 'Locked', data: { locked: false } }], 'any');
      const seen: State[] = [];
      await rename(repoA, stream, 'two', seen);
      expect(seen.map((s) => s.locked)).toEqual([true, false]);
      expect(await names(b, stream)).toEqual(['one', 'locked=true', 'locked=false', 'two']);
      // A refusal on fresh state is the answer, given once.
      await repoB.append(stream, ws, [{ type: 'Locked', data: { locked: true } }], 'any');
      const refused: State[] = [];
      await expect(rename(repoA, stream, 'three', refused)).rejects.toThrow('locked');
      expect(refused.map((s) => s.locked)).toEqual([false, true]);
      const fresh = new EventSourcedRepository(b);
      const once: State[] = [];
      await expect(rename(fresh, stream, 'three', once)).rejects.toThrow('locked');
      expect(once).toHaveLength(1);
    });

    it('judges If-Match on the stream as it stands, not on a stale cached revision', async () => {
      const stream = newStream();
      await rename(repoA, stream, 'one');
      const moved = await repoB.handle({
        streamName: stream,
        workspaceId: ws,
        decider,
        command: { name: 'other' },
      });
      // The client read revision 1 (from B): A's cache, at 0, must not make it a 412.
      const ok = await rename(repoA, stream, 'two', [], moved.append!.nextExpectedRevision);
      expect(ok.state.name).toBe('two');
      // A revision the stream has moved past is a 412, cached or not.
      await expect(
        rename(repoA, stream, 'three', [], moved.append!.nextExpectedRevision),
      ).rejects.toBeInstanceOf(PreconditionFailedError);
      expect(await names(b, stream)).toEqual(['one', 'other', 'two']);
    });

    it('keeps nothing of aggregates no cachedFirst command uses', async () => {
      const plain = { ...decider };
      const stream = newStream();
      await repoB.handle({ streamName: stream, workspaceId: ws, decider: plain, command: { name: 'one' } });
      await repoB.load(stream, plain);
      expect(repoB.cachedAggregates).toBe(0);
    });

    it('serves a cached state only to the decider that folded it', async () => {
      const stream = newStream();
      await rename(repoA, stream, 'one');
      const other = { initialState: decider.initialState, evolve: decider.evolve };
      const before = a.reads();
      const loaded = await repoA.cachedFirst((loader) => loader.load(stream, other));
      expect(loaded.cached).toBe(false);
      expect(a.reads() - before).toBe(1);
    });
  });
}

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db?.drop());

describeCache('PostgreSQL, two stores on one database', async () => {
  const a = new PostgresEventStore({ connectionString: db.url, poolSize: 2 });
  const b = new PostgresEventStore({ connectionString: db.url, poolSize: 2 });
  return { a, b, close: () => Promise.all([a.close(), b.close()]).then(() => undefined) };
});

describeCache('in memory, one store', async () => {
  const store = new InMemoryEventStore();
  // The counting wrapper replaces readStream on the instance it is given: give A its own view.
  const a = Object.create(store) as EventStore;
  return { a, b: store, close: () => store.close() };
});

describe('EventSourcedRepository cache size', () => {
  it(`keeps at most ${AGGREGATE_CACHE_SIZE} aggregates, dropping the least recently used`, () => {
    const store = new InMemoryEventStore();
    const repo = new EventSourcedRepository(store);
    for (let i = 0; i <= AGGREGATE_CACHE_SIZE; i++)
      repo.remember(`s-${i}`, decider, decider.initialState(), 0n);
    expect(repo.cachedAggregates).toBe(AGGREGATE_CACHE_SIZE);
    return store.close();
  });

  it('keeps no state its decider calls too large, and drops the one it held of that stream', async () => {
    const store = new InMemoryEventStore();
    const { store: countedStore, reads } = counted(store);
    const repo = new EventSourcedRepository(countedStore);
    const bounded: Decider<State, Command, Event> = {
      ...decider,
      cacheable: (s) => (s.name ?? '').length <= 5,
    };
    const stream = newStream();
    repo.remember(stream, bounded, bounded.initialState(), 0n);
    await repo.handle({ streamName: stream, workspaceId: ws, decider: bounded, command: { name: 'short' } });
    expect(repo.cachedAggregates).toBe(1);
    await repo.handle({
      streamName: stream,
      workspaceId: ws,
      decider: bounded,
      command: { name: 'much longer' },
    });
    expect(repo.cachedAggregates).toBe(0);
    const before = reads();
    await repo.cachedFirst((loader) => loader.load(stream, bounded));
    expect(reads()).toBe(before + 1);
    return store.close();
  });
});
