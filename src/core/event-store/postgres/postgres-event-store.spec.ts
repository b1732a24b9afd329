import { Client, Pool } from 'pg';
import { TestDatabase, createTestDatabase } from '../../../../test/support/database';
import { WrongExpectedRevisionError, comparePositions } from '../event-store.port';
import {
  collect,
  delay,
  describeEventStoreConformance,
  event,
  eventually,
  uniq,
} from '../testing/event-store.conformance';
import { PostgresEventStore } from './postgres-event-store';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describeEventStoreConformance(
  'postgres',
  async () => {
    const store = new PostgresEventStore({ connectionString: db.url, poolSize: 10 });
    return { store, teardown: () => store.close() };
  },
  { postgresOnly: true },
);

describe('PostgresEventStore', () => {
  let store: PostgresEventStore;
  const raw: Client[] = [];

  beforeAll(() => {
    store = new PostgresEventStore({ connectionString: db.url, poolSize: 4 });
  });
  afterAll(async () => {
    await Promise.all(raw.map((c) => c.end().catch(() => undefined)));
    await store.close();
  });

  async function rawClient(): Promise<Client> {
    const client = new Client({ connectionString: db.url });
    await client.connect();
    raw.push(client);
    return client;
  }

  it('stamps an append with its transaction id as commit and the global sequence as prepare', async () => {
    const result = await store.append(`${uniq()}-p-1`, [event('A'), event('B')]);
    const [a, b] = result.events;
    expect(a.position.commit).toBe(b.position.commit);
    expect(b.position.prepare).toBe(a.position.prepare + 1n);
    const client = await rawClient();
    const { rows } = await client.query<{ tx: string }>(
      `SELECT transaction_id::text AS tx FROM events WHERE event_id = $1`,
      [a.id],
    );
    expect(BigInt(rows[0].tx)).toBe(a.position.commit);
  });

  it('orders by number, not text, where positions and revisions gain a digit', async () => {
    const prefix = uniq();
    const client = await rawClient();
    await client.query(
      `SELECT setval('events_global_position_seq', greatest(99995, (SELECT last_value FROM events_global_position_seq)))`,
    );
    const result = await store.append(
      `${prefix}-s`,
      Array.from({ length: 12 }, (_, i) => event('N', { i })),
    );
    expect(result.events.map((e) => Number(e.revision))).toEqual(Array.from({ length: 12 }, (_, i) => i));
    const forwards = await eventually(
      () => store.readAll({ filter: { streamPrefixes: [`${prefix}-`] } }),
      (events) => events.length === 12,
    );
    expect(forwards).toEqual(result.events);
    expect(
      await store.readAll({ direction: 'backwards', filter: { streamPrefixes: [`${prefix}-`] } }),
    ).toEqual([...result.events].reverse());
    expect(
      await store.readAll({
        after: result.events[3].position,
        maxCount: 2,
        filter: { streamPrefixes: [`${prefix}-`] },
      }),
    ).toEqual(result.events.slice(4, 6));
    expect(await store.readStream(`${prefix}-s`)).toEqual(result.events);
    expect(await store.readStream(`${prefix}-s`, { direction: 'backwards' })).toEqual(
      [...result.events].reverse(),
    );
  });

  it('scans past events a filter rejects, so a filtered subscription does not rescan them', async () => {
    const prefix = uniq();
    const head = await store.headPosition();
    for (let i = 0; i < 5; i++)
      await store.append(
        `${prefix}-other`,
        Array.from({ length: 5 }, () => event('Other')),
      );
    const wanted = await store.append(`${prefix}-wanted`, [event('Wanted')]);
    const all = await eventually(
      () => store.readAll({ after: head }),
      (events) => events.length >= 26,
    );
    expect(all).toHaveLength(26);
    const filter = { eventTypes: ['Wanted'] };

    const first = await store.scanAll({ after: head, limit: 10, filter });
    expect(first).toEqual({ events: [], scannedTo: all[9].position, more: true });
    const second = await store.scanAll({ after: first.scannedTo, limit: 10, filter });
    expect(second).toEqual({ events: [], scannedTo: all[19].position, more: true });
    const third = await store.scanAll({ after: second.scannedTo, limit: 10, filter });
    expect(third).toEqual({ events: wanted.events, scannedTo: wanted.position, more: false });
    expect(await store.scanAll({ after: third.scannedTo, limit: 10, filter })).toEqual({
      events: [],
      more: false,
    });
    // Unfiltered, a scan is a plain forwards read.
    expect((await store.scanAll({ after: head, limit: 7 })).events).toEqual(all.slice(0, 7));
  });

  it('never skips an event whose transaction began earlier and committed later', async () => {
    const prefix = uniq();
    const sub = collect(store.subscribe({ filter: { streamPrefixes: [`${prefix}-`] } }));
    await delay(100);

    // Transaction A takes the earlier sequence value and transaction id, then stays open...
    const txA = await rawClient();
    await txA.query('BEGIN');
    const a = await store.appendInTransaction(txA, `${prefix}-a`, [event('A')]);
    // ...while B appends and commits.
    const b = await store.append(`${prefix}-b`, [event('B')]);
    expect(a.position.prepare).toBeLessThan(b.position.prepare);
    expect(a.position.commit).toBeLessThan(b.position.commit);

    await delay(300);
    // A reader ordering by the sequence alone would now see B, checkpoint past A and lose it.
    const naive = await (
      await rawClient()
    ).query(`SELECT type FROM events WHERE starts_with(stream_name, $1) ORDER BY global_position`, [prefix]);
    expect(naive.rows.map((r: { type: string }) => r.type)).toEqual(['B']);
    // This store holds B back until A has ended.
    expect(sub.events).toEqual([]);
    expect(await store.readAll({ filter: { streamPrefixes: [`${prefix}-`] } })).toEqual([]);

    await txA.query('COMMIT');
    await sub.waitFor(2, 10_000);
    await delay(100);
    await sub.stop();
    expect(sub.events.map((e) => e.type)).toEqual(['A', 'B']);
    expect(comparePositions(sub.events[0].position, sub.events[1].position)).toBeLessThan(0);
    expect(sub.events[0].position).toEqual(a.position);
    expect(sub.events[1].position).toEqual(b.position);
  });

  it('tells its in-process listeners the types of what it appended (a NOTIFY carries none)', async () => {
    const calls: (string[] | undefined)[] = [];
    const unsubscribe = store.onAppended((types) => calls.push(types && [...types].sort()));
    try {
      const prefix = uniq();
      await store.append(`${prefix}-a`, [event('Alpha'), event('Beta'), event('Alpha')]);
      expect(calls).toContainEqual(['Alpha', 'Beta']);
      await store.createStreams([
        { streamName: `${prefix}-b`, events: [event('Gamma')] },
        { streamName: `${prefix}-c`, events: [event('Delta')] },
      ]);
      expect(calls).toContainEqual(['Delta', 'Gamma']);
      // Typed calls name only what was appended; the others (LISTEN) name nothing.
      expect(calls.filter((c) => c !== undefined)).toEqual([
        ['Alpha', 'Beta'],
        ['Delta', 'Gamma'],
      ]);
    } finally {
      unsubscribe();
    }
  });

  it('wakes a waiting subscriber through LISTEN when another process appends', async () => {
    // Polls only once a minute, so a prompt delivery can only come from the notification.
    const follower = new PostgresEventStore({ connectionString: db.url, poolSize: 2, idlePollMs: 60_000 });
    const writer = new PostgresEventStore({ connectionString: db.url, poolSize: 2 });
    try {
      const prefix = uniq();
      await writer.append(`${prefix}-s`, [event('First')]);
      const sub = collect(follower.subscribe({ filter: { streamPrefixes: [`${prefix}-`] } }));
      await sub.waitFor(1);
      let wokenAt: number | undefined;
      const unsubscribe = follower.onAppended(() => (wokenAt ??= Date.now()));
      await delay(200);
      wokenAt = undefined;

      const since = Date.now();
      const appended = await writer.append(`${prefix}-s`, [event('Second')]);
      await sub.waitFor(2, 30_000);
      const deliveredMs = Date.now() - since;
      unsubscribe();
      await sub.stop();
      expect(sub.events[1].id).toBe(appended.events[0].id);
      // The wake-up itself takes milliseconds. Delivery can take longer only while some
      // other transaction in the cluster (other test files) holds the horizon back. The
      // bounds are loose (a loaded machine), yet far below the 60 s poll.
      expect(wokenAt).toBeDefined();
      expect(wokenAt! - since).toBeLessThan(10_000);
      expect(deliveredMs).toBeLessThan(15_000);
    } finally {
      await follower.close();
      await writer.close();
    }
  });

  it('carries the wake-up of other processes in the append itself: no NOTIFY statement of its own', async () => {
    const pool = new Pool({ connectionString: db.url, max: 2 });
    const sent: string[] = [];
    pool.on('connect', (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      client.query = ((...args: unknown[]) => {
        const q = args[0] as string | { text: string };
        sent.push(typeof q === 'string' ? q : q.text);
        return query(...args);
      }) as typeof client.query;
    });
    const writer = new PostgresEventStore({ connectionString: db.url, pool, notifyIntervalMs: 5 });
    const listener = new Client({ connectionString: db.url });
    raw.push(listener);
    await listener.connect();
    const heard: number[] = [];
    listener.on('notification', (n) => n.channel === 'event_store_appended' && heard.push(Date.now()));
    await listener.query('LISTEN event_store_appended');
    try {
      const prefix = uniq();
      for (let i = 0; i < 4; i++) {
        await writer.append(`${prefix}-s`, [event('A')]);
        await delay(20);
      }
      await writer.createStreams([{ streamName: `${prefix}-t`, events: [event('B')] }]);
      await eventually(
        () => Promise.resolve(heard.length),
        (n) => n >= 5,
        5000,
      );
      expect(heard.length).toBeGreaterThanOrEqual(5);
      // One statement per write, each with its pg_notify (delivered at its commit).
      expect(sent).toHaveLength(5);
      expect(sent.every((text) => text.includes('INSERT INTO events') && text.includes('pg_notify'))).toBe(
        true,
      );

      // Writes closer together than the interval: one carries, the next ones wait for
      // the next write past the interval to carry theirs, or for a NOTIFY of its own.
      sent.length = 0;
      heard.length = 0;
      await Promise.all([1, 2, 3].map((i) => writer.append(`${prefix}-burst-${i}`, [event('C')])));
      const done = Date.now();
      // The last of them is still announced, after the burst.
      await eventually(
        () => Promise.resolve(heard.some((t) => t >= done)),
        (ok) => ok,
        5000,
      );
      expect(heard.some((t) => t >= done)).toBe(true);
      // Three appends; how many NOTIFYs of their own (0-2) depends on the machine's timing.
      expect(sent.filter((text) => text.includes('INSERT INTO events'))).toHaveLength(3);
    } finally {
      await writer.close();
      await pool.end().catch(() => undefined);
    }
  });

  it('keeps its connection after a lost append race or a stream that already exists', async () => {
    // One connection: the throttled NOTIFY after an append queues behind the next statement
    // instead of opening a second one.
    const pool = new Pool({ connectionString: db.url, max: 1 });
    let connections = 0;
    pool.on('connect', () => connections++);
    const racer = new PostgresEventStore({ connectionString: db.url, pool });
    try {
      const name = `${uniq()}-race`;
      await racer.append(name, [event('A')], { expectedRevision: 'no_stream' });
      const opened = connections;
      for (let i = 0; i < 5; i++) {
        await expect(
          racer.append(name, [event('B')], { expectedRevision: 'no_stream' }),
        ).rejects.toBeInstanceOf(WrongExpectedRevisionError);
        await expect(
          racer.createStreams([{ streamName: name, events: [event('C')] }]),
        ).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      }
      // pg-pool's own query() would have ended the connection after each refusal.
      expect(connections).toBe(opened);
      await expect(racer.readStream(name)).resolves.toHaveLength(1);
    } finally {
      await racer.close();
      await pool.end().catch(() => undefined);
    }
  });

  it('sleeps once caught up: no polling loop while nothing happens', async () => {
    const pool = new Pool({ connectionString: db.url, max: 2 });
    let queries = 0;
    const query = pool.query.bind(pool);
    pool.query = ((...args: Parameters<typeof query>) => {
      queries++;
      return query(...args);
    }) as typeof pool.query;
    // Small batches, so both subscriptions catch up through full batches first.
    const follower = new PostgresEventStore({
      connectionString: db.url,
      pool,
      idlePollMs: 60_000,
      subscriptionBatchSize: 2,
    });
    try {
      const prefix = uniq();
      await store.append(`${prefix}-s`, [event('A'), event('B'), event('C'), event('D'), event('E')]);
      const head = await eventually(
        () => store.headPosition(),
        (p) => p !== undefined,
      );
      const filtered = collect(follower.subscribe({ filter: { streamPrefixes: [`${prefix}-`] } }));
      const unfiltered = collect(follower.subscribe());
      await filtered.waitFor(5);
      await eventually(
        async () => unfiltered.events.at(-1)?.position,
        (p) => p !== undefined && comparePositions(p, head!) >= 0,
      );
      await delay(100);
      const before = queries;
      await delay(600);
      // Asleep, both make none; a busy loop would make thousands. Some polling at the
      // held-back interval is allowed while other test files' transactions hold the horizon.
      expect(queries - before).toBeLessThan(30);
      await filtered.stop();
      await unfiltered.stop();
    } finally {
      await follower.close();
      await pool.end();
    }
  });

  it('listens again after its LISTEN connection is killed', async () => {
    const follower = new PostgresEventStore({ connectionString: db.url, poolSize: 2, idlePollMs: 60_000 });
    try {
      const prefix = uniq();
      const sub = collect(follower.subscribe({ filter: { streamPrefixes: [`${prefix}-`] } }));
      await delay(200);
      const admin = await rawClient();
      const killed = await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'event-store-listener'`,
        [db.name],
      );
      expect(killed.rowCount).toBeGreaterThanOrEqual(1);
      await delay(500);
      await store.append(`${prefix}-s`, [event('AfterKill')]);
      await sub.waitFor(1, 5_000);
      await sub.stop();
    } finally {
      await follower.close();
    }
  });

  /** Holds transaction A open with an append to `stream`, then starts `racing` and waits until it blocks on A's row. */
  async function raceAgainstOpenTransaction<T>(
    stream: string,
    racing: () => Promise<T>,
  ): Promise<PromiseSettledResult<T>> {
    const txA = await rawClient();
    await txA.query('BEGIN');
    await store.appendInTransaction(txA, stream, [event('FromA')], { expectedRevision: 0n });
    const outcome = racing().then(
      (value): PromiseSettledResult<T> => ({ status: 'fulfilled', value }),
      (reason: unknown): PromiseSettledResult<T> => ({ status: 'rejected', reason }),
    );
    const admin = await rawClient();
    await eventually(
      async () =>
        (
          await admin.query(
            `SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'`,
            [db.name],
          )
        ).rowCount,
      (n) => (n ?? 0) > 0,
      5_000,
    );
    await txA.query('COMMIT');
    return outcome;
  }

  it('turns a lost race on the unique (stream, revision) key into WrongExpectedRevisionError', async () => {
    const stream = `${uniq()}-race`;
    await store.append(stream, [event('Seed')]);
    // B passes the "revision 0 exists" check, then waits on A's uncommitted revision 1 and collides.
    const outcome = await raceAgainstOpenTransaction(stream, () =>
      store.append(stream, [event('FromB')], { expectedRevision: 0n }),
    );
    expect(outcome.status).toBe('rejected');
    const error = (outcome as PromiseRejectedResult).reason as unknown;
    expect(error).toBeInstanceOf(WrongExpectedRevisionError);
    expect(error).toMatchObject({ streamName: stream, expected: 0n, actual: 1n });
    expect((await store.readStream(stream)).map((e) => e.type)).toEqual(['Seed', 'FromA']);
  });

  it("retries an 'any' append that lost the race, landing after the winner", async () => {
    const stream = `${uniq()}-race`;
    await store.append(stream, [event('Seed')]);
    const outcome = await raceAgainstOpenTransaction(stream, () =>
      store.append(stream, [event('FromB'), event('FromB2')]),
    );
    expect(outcome).toMatchObject({ status: 'fulfilled', value: { nextExpectedRevision: 3n } });
    expect((await store.readStream(stream)).map((e) => e.type)).toEqual(['Seed', 'FromA', 'FromB', 'FromB2']);
  });

  it('leaves the caller transaction usable after a conflict in appendInTransaction', async () => {
    const stream = `${uniq()}-in-tx`;
    const client = await rawClient();
    await client.query('BEGIN');
    await expect(
      store.appendInTransaction(client, stream, [event('A')], { expectedRevision: 'stream_exists' }),
    ).rejects.toBeInstanceOf(WrongExpectedRevisionError);
    await store.appendInTransaction(client, stream, [event('A')], { expectedRevision: 'no_stream' });
    await client.query('COMMIT');
    expect((await store.readStream(stream)).map((e) => e.type)).toEqual(['A']);
  });

  it('rolls back with the caller: an aborted appendInTransaction leaves nothing', async () => {
    const stream = `${uniq()}-rolled-back`;
    const client = await rawClient();
    await client.query('BEGIN');
    await store.appendInTransaction(client, stream, [event('A'), event('B')], {
      expectedRevision: 'no_stream',
    });
    await client.query('ROLLBACK');
    expect(await store.readStream(stream)).toEqual([]);
    await expect(
      store.append(stream, [event('C')], { expectedRevision: 'no_stream' }),
    ).resolves.toMatchObject({ nextExpectedRevision: 0n });
  });

  it('ends its open subscriptions when closed, without an error to their consumers', async () => {
    const closing = new PostgresEventStore({ connectionString: db.url, poolSize: 2 });
    const waiting = collect(closing.subscribe({ filter: { streamPrefixes: [`${uniq()}-`] } }));
    const draining = collect(closing.subscribe());
    await delay(200);
    const started = Date.now();
    await closing.close();
    await waiting.stop();
    await draining.stop();
    // A guard against hanging, not a speed target.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('closes only a pool it created', async () => {
    const pool = new Pool({ connectionString: db.url, max: 2 });
    try {
      const shared = new PostgresEventStore({ connectionString: db.url, pool });
      await shared.ping();
      await shared.close();
      await expect(shared.ping()).rejects.toThrow(/closed/);
      await expect(pool.query('SELECT 1')).resolves.toBeDefined();
    } finally {
      await pool.end();
    }
  });
});
