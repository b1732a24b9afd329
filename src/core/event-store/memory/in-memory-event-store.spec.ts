import { collect, describeEventStoreConformance, event } from '../testing/event-store.conformance';
import { InMemoryEventStore } from './in-memory-event-store';

describeEventStoreConformance(
  'in-memory',
  async () => {
    const store = new InMemoryEventStore();
    return { store, teardown: () => store.close() };
  },
  // The in-memory store mirrors PostgreSQL's all-or-nothing handling of duplicate ids.
  { postgresOnly: true },
);

describe('InMemoryEventStore', () => {
  it('numbers positions by the global sequence, commit = prepare, from 1', async () => {
    const store = new InMemoryEventStore();
    expect(await store.headPosition()).toBeUndefined();
    await store.append('a-1', [event('A'), event('B')]);
    const result = await store.append('b-1', [event('C')]);
    expect(result.position).toEqual({ commit: 3n, prepare: 3n });
    expect((await store.readAll()).map((e) => e.position.prepare)).toEqual([1n, 2n, 3n]);
    expect(await store.headPosition()).toEqual({ commit: 3n, prepare: 3n });
  });

  it('scans an empty store to nothing: no events, no scannedTo, no more', async () => {
    const store = new InMemoryEventStore();
    expect(await store.scanAll({ limit: 10 })).toEqual({ events: [], more: false });
    await store.append('a-1', [event('A')]);
    const { scannedTo } = await store.scanAll({ limit: 10, filter: { eventTypes: ['B'] } });
    expect(scannedTo).toEqual({ commit: 1n, prepare: 1n });
    expect(await store.scanAll({ after: scannedTo, limit: 10 })).toEqual({ events: [], more: false });
  });

  it('keeps stored events safe from mutation by callers and readers', async () => {
    const store = new InMemoryEventStore();
    const data = { list: [1], at: new Date('2025-01-02T03:04:05.000Z') };
    const result = await store.append('a-1', [event('A', data)]);
    data.list.push(2);
    (result.events[0].data as { list: number[] }).list.push(3);
    const [read] = await store.readStream('a-1');
    (read.data as { list: number[] }).list.push(4);
    expect((await store.readStream('a-1'))[0].data).toEqual({ list: [1], at: '2025-01-02T03:04:05.000Z' });
  });

  it('ends its open subscriptions when closed', async () => {
    const store = new InMemoryEventStore();
    await store.append('a-1', [event('A')]);
    const sub = collect(store.subscribe());
    await sub.waitFor(1);
    await store.close();
    await sub.stop();
    expect(sub.events).toHaveLength(1);
  });
});
