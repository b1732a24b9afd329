import { EventStoreDBClient, jsonEvent } from '@eventstore/db-client';
import { startEventStoreDbStandIn } from '../../../../test/support/esdb-standin';
import type { EventStoreDbStandIn } from '../../../../test/support/esdb-standin';
import { WrongExpectedRevisionError } from '../event-store.port';
import {
  collect,
  delay,
  describeEventStoreConformance,
  event,
  eventually,
  meta,
  range,
  uniq,
} from '../testing/event-store.conformance';
import { EventStoreDbEventStore } from './eventstoredb-event-store';

// The real client against the in-process stand-in, with the stand-in writing system
// events into $all all along, as a node does.
describeEventStoreConformance('eventstoredb (stand-in)', async () => {
  const standIn = await startEventStoreDbStandIn({ systemEventIntervalMs: 20 });
  const store = new EventStoreDbEventStore({ connectionString: standIn.connectionString });
  return {
    store,
    teardown: async () => {
      await store.close();
      await standIn.stop();
    },
  };
});

const serverConnectionString = process.env.EVENTSTORE_CONNECTION_STRING;
if (serverConnectionString) {
  describeEventStoreConformance('eventstoredb (server)', async () => {
    const store = new EventStoreDbEventStore({ connectionString: serverConnectionString });
    return { store, teardown: () => store.close() };
  });

  describe('EventStoreDbEventStore (server)', () => {
    let store: EventStoreDbEventStore;
    beforeAll(() => {
      store = new EventStoreDbEventStore({ connectionString: serverConnectionString });
    });
    afterAll(() => store.close());

    // The adapter trusts a single-event write's reported position without reading it back.
    it('reports for single- and multi-event appends the positions readAll shows', async () => {
      const prefix = uniq();
      const single = await store.append(`${prefix}-s-1`, [event('One')]);
      const batch = await store.append(`${prefix}-s-2`, [event('Two'), event('Three')]);
      const all = await eventually(
        () => store.readAll({ filter: { streamPrefixes: [`${prefix}-`] } }),
        (events) => events.length === 3,
      );
      expect(all.map((e) => e.position)).toEqual([single.position, ...batch.events.map((e) => e.position)]);
      expect(all).toEqual([...single.events, ...batch.events]);
    });
  });
}

describe('EventStoreDbEventStore (stand-in)', () => {
  let standIn: EventStoreDbStandIn;
  let store: EventStoreDbEventStore;
  let raw: EventStoreDBClient;

  beforeAll(async () => {
    standIn = await startEventStoreDbStandIn({ systemEventIntervalMs: 20 });
    store = new EventStoreDbEventStore({ connectionString: standIn.connectionString });
    raw = EventStoreDBClient.connectionString(standIn.connectionString);
  });
  afterAll(async () => {
    await store.close();
    await raw.dispose();
    await standIn.stop();
  });

  it('stores our id as the event id, data as JSON data and our metadata as JSON metadata', async () => {
    const stream = `${uniq()}-record-1`;
    const [appended] = (await store.append(stream, [event('RecordCreated', { name: 'Ada' })])).events;
    const [recorded] = await toArray(raw.readStream(stream));
    expect(recorded.event).toMatchObject({
      id: appended.id,
      type: 'RecordCreated',
      isJson: true,
      data: { name: 'Ada' },
      metadata: meta(),
      revision: 0n,
      position: appended.position,
    });
  });

  it('reads events another writer appended with the plain client', async () => {
    const stream = `${uniq()}-chat-1`;
    await raw.appendToStream(
      stream,
      jsonEvent({ type: 'ChatOpened', data: { channel: 'sms' }, metadata: { ...meta() } }),
    );
    const [read] = await store.readStream(stream);
    expect(read).toMatchObject({
      type: 'ChatOpened',
      data: { channel: 'sms' },
      metadata: meta(),
      streamName: stream,
      revision: 0n,
    });
  });

  it('maps a lost race to WrongExpectedRevisionError with the actual revision', async () => {
    const stream = `${uniq()}-member-1`;
    await store.append(stream, [event('A'), event('B')]);
    const error = await store.append(stream, [event('C')], { expectedRevision: 0n }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WrongExpectedRevisionError);
    expect(error).toMatchObject({ streamName: stream, expected: 0n, actual: 1n });
  });

  it('hands out the positions readAll shows, for every event of a batch', async () => {
    const prefix = uniq();
    const result = await store.append(
      `${prefix}-s-1`,
      range(5).map((i) => event('Step', { i })),
    );
    const all = await eventually(
      () => store.readAll({ filter: { streamPrefixes: [`${prefix}-`] } }),
      (events) => events.length === 5,
    );
    expect(all.map((e) => e.position)).toEqual(result.events.map((e) => e.position));
    expect(result.position).toEqual(all[4].position);
  });

  it('pages through $all without repeating or losing events at page boundaries', async () => {
    const prefix = uniq();
    for (let batch = 0; batch < 25; batch++) {
      await store.append(
        `${prefix}-s-${batch % 4}`,
        range(100).map((i) => event('Bulk', { n: batch * 100 + i })),
      );
    }
    const numbers = (events: { data: unknown }[]) => events.map((e) => (e.data as { n: number }).n);
    const filter = { streamPrefixes: [`${prefix}-`] };
    const forwards = await store.readAll({ filter });
    expect(numbers(forwards)).toEqual(range(2500));
    expect(numbers(await store.readAll({ direction: 'backwards', filter }))).toEqual(range(2500).reverse());
    expect(numbers(await store.readAll({ after: forwards[999].position, maxCount: 1200, filter }))).toEqual(
      range(2200).slice(1000),
    );
    expect(
      numbers(
        await store.readAll({
          direction: 'backwards',
          after: forwards[1500].position,
          maxCount: 1100,
          filter,
        }),
      ),
    ).toEqual(range(1500).slice(400).reverse());
  });

  it('matches event types exactly, also when they hold regex characters', async () => {
    const prefix = uniq();
    const types = ['Order.Placed', 'OrderxPlaced', 'Order.Placed.Later', 'XOrder.Placed', 'Paid(1)', 'Paid1'];
    await store.append(
      `${prefix}-s-1`,
      types.map((type) => event(type)),
    );
    const wanted = ['Order.Placed', 'Paid(1)'];
    const read = await store.readAll({ filter: { streamPrefixes: [`${prefix}-`], eventTypes: wanted } });
    expect(read.map((e) => e.type)).toEqual(wanted);

    // Only types on the server side, so its regex alone decides what arrives.
    const sub = collect(store.subscribe({ filter: { eventTypes: wanted } }));
    await store.append(
      `${prefix}-s-2`,
      types.map((type) => event(type)),
    );
    await sub.waitFor(4);
    await delay(100);
    await sub.stop();
    expect(
      sub.events.filter((e) => e.streamName.startsWith(prefix)).map((e) => `${e.streamName}/${e.type}`),
    ).toEqual([
      `${prefix}-s-1/Order.Placed`,
      `${prefix}-s-1/Paid(1)`,
      `${prefix}-s-2/Order.Placed`,
      `${prefix}-s-2/Paid(1)`,
    ]);
  });

  it('leaves system events out of readAll, subscriptions and the head position', async () => {
    const prefix = uniq();
    const result = await store.append(`${prefix}-s-1`, [event('Last')]);
    await delay(100); // the stand-in writes $statsCollected every 20 ms
    const newestRaw = (
      await toArray(raw.readAll({ direction: 'backwards', fromPosition: 'end', maxCount: 1 }))
    )[0];
    expect(newestRaw.event?.type).toBe('$statsCollected');

    expect(await store.headPosition()).toEqual(result.position);
    expect((await store.readAll({ direction: 'backwards', maxCount: 1 }))[0].id).toBe(result.events[0].id);
    const everything = await store.readAll();
    expect(everything.some((e) => e.type.startsWith('$') || e.streamName.startsWith('$'))).toBe(false);

    const sub = collect(store.subscribe());
    await eventually(
      async () => sub.events.length,
      () => sub.events.some((e) => e.id === result.events[0].id),
    );
    await delay(100);
    await sub.stop();
    expect(sub.events.some((e) => e.type.startsWith('$'))).toBe(false);
  });

  it('calls onAppended listeners after an append, and not after they unsubscribe', async () => {
    let calls = 0;
    const unsubscribe = store.onAppended(() => calls++);
    await delay(200);
    const before = calls;
    await store.append(`${uniq()}-s-1`, [event('A')]);
    await eventually(
      async () => calls,
      (n) => n > before,
      2000,
    );
    expect(calls).toBeGreaterThan(before);
    unsubscribe();
    await delay(50);
    const after = calls;
    await store.append(`${uniq()}-s-1`, [event('B')]);
    await delay(200);
    expect(calls).toBe(after);
  });

  it('ends a subscription with an error when the server goes away, and close() still resolves', async () => {
    const own = await startEventStoreDbStandIn();
    const ownStore = new EventStoreDbEventStore({ connectionString: own.connectionString });
    try {
      const sub = ownStore.subscribe();
      const events = sub[Symbol.asyncIterator]();
      await ownStore.append(`${uniq()}-s-1`, [event('A')]);
      expect((await events.next()).value).toMatchObject({ type: 'A' });
      await own.stop();
      // A projection runner must hear of it (and resubscribe), not wait forever.
      await expect(events.next()).rejects.toThrow();
      await expect(sub.close()).resolves.toBeUndefined();
    } finally {
      await ownStore.close();
    }
  });

  it('closes its open subscriptions when closed', async () => {
    const own = await startEventStoreDbStandIn();
    const ownStore = new EventStoreDbEventStore({ connectionString: own.connectionString });
    const sub = collect(ownStore.subscribe());
    await delay(100);
    await ownStore.close();
    await sub.stop();
    expect(sub.events).toEqual([]);
    await expect(ownStore.append('x-1', [event('A')])).rejects.toThrow('closed');
    await own.stop();
  });
});

async function toArray<T>(read: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of read) items.push(item);
  return items;
}
