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

describeEventStoreConformance(
  'postgres without group commit',
  async () => {
    const store = new PostgresEventStore({ connectionString: db.url, poolSize: 10, groupCommit: false });
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

  it('reads several streams in one statement, each as readStream reads it, in the order asked', async () => {
    const [a, b, absent] = [`${uniq()}-rs-a`, `${uniq()}-rs-b`, `${uniq()}-rs-none`];
    await store.append(b, [event('B1')]);
    await store.append(a, [event('A1'), event('A2')]);
    await store.append(b, [event('B2'), event('B3')]);
    const [readB, readAbsent, readA] = await store.readStreams([b, absent, a]);
    expect(readB).toEqual(await store.readStream(b));
    expect(readB.map((e) => e.type)).toEqual(['B1', 'B2', 'B3']);
    expect(readA).toEqual(await store.readStream(a));
    expect(readA.map((e) => e.type)).toEqual(['A1', 'A2']);
    expect(readAbsent).toEqual([]);
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

  it('does not wake its own listeners again on the echo of its own NOTIFY; another writer’s still wakes them', async () => {
    const own = new PostgresEventStore({ connectionString: db.url, poolSize: 2, notifyIntervalMs: 1 });
    const other = new PostgresEventStore({ connectionString: db.url, poolSize: 1 });
    const calls: (string[] | undefined)[] = [];
    const unsubscribe = own.onAppended((types) => calls.push(types && [...types]));
    try {
      const prefix = uniq();
      // LISTEN is up (its first call says "look"), then quiet.
      await eventually(
        () => Promise.resolve(calls.length),
        (n) => n > 0,
      );
      await delay(50);
      calls.length = 0;
      for (let i = 0; i < 3; i++) {
        await own.append(`${prefix}-s`, [event('Mine')]);
        await delay(30);
      }
      await delay(200);
      // Each append carried its pg_notify (the interval is 1 ms): three typed calls, no echo.
      expect(calls).toEqual([['Mine'], ['Mine'], ['Mine']]);
      calls.length = 0;
      await other.append(`${prefix}-t`, [event('Theirs')]);
      await eventually(
        () => Promise.resolve(calls.length),
        (n) => n > 0,
      );
      expect(calls).toEqual([undefined]);
    } finally {
      unsubscribe();
      await own.close();
      await other.close();
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
    // Without group commit, so that the burst below is three statements (a group of them
    // is one: see the group commit specs).
    const writer = new PostgresEventStore({
      connectionString: db.url,
      pool,
      notifyIntervalMs: 5,
      groupCommit: false,
    });
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

  describe('group commit', () => {
    /** A store over a pool whose statements are recorded (their SQL text). */
    function recordingStore(): { store: PostgresEventStore; sent: string[]; close(): Promise<void> } {
      const pool = new Pool({ connectionString: db.url, max: 4 });
      const sent: string[] = [];
      pool.on('connect', (client) => {
        const query = client.query.bind(client) as (...args: unknown[]) => unknown;
        client.query = ((...args: unknown[]) => {
          const q = args[0] as string | { text: string };
          sent.push(typeof q === 'string' ? q : q.text);
          return query(...args);
        }) as typeof client.query;
      });
      const grouped = new PostgresEventStore({ connectionString: db.url, pool });
      return {
        store: grouped,
        sent,
        close: async () => {
          await grouped.close();
          await pool.end().catch(() => undefined);
        },
      };
    }
    const appends = (sent: string[]) => sent.filter((text) => text.includes('INSERT INTO events'));
    const settled = <T>(p: Promise<T>) =>
      p.then(
        (value): PromiseSettledResult<T> => ({ status: 'fulfilled', value }),
        (reason: unknown): PromiseSettledResult<T> => ({ status: 'rejected', reason }),
      );

    it('sends appends to distinct streams asked for in one turn as one statement, one transaction', async () => {
      const { store: grouped, sent, close } = recordingStore();
      try {
        const prefix = uniq();
        await grouped.append(`${prefix}-b`, [event('Seed')]);
        sent.length = 0;
        const results = await Promise.all([
          grouped.append(`${prefix}-a`, [event('A1'), event('A2')], { expectedRevision: 'no_stream' }),
          grouped.append(`${prefix}-b`, [event('B1')], { expectedRevision: 0n }),
          grouped.append(`${prefix}-c`, [event('C1')]),
          grouped.append(`${prefix}-b2`, [event('D1')], { expectedRevision: 'no_stream' }),
        ]);
        expect(appends(sent)).toHaveLength(1);
        expect(results.map((r) => r.nextExpectedRevision)).toEqual([1n, 1n, 0n, 0n]);
        const all = results.flatMap((r) => r.events);
        // One transaction, in the order asked, events of an append in their order.
        expect(new Set(all.map((e) => e.position.commit)).size).toBe(1);
        expect(all.map((e) => e.type)).toEqual(['A1', 'A2', 'B1', 'C1', 'D1']);
        const prepares = all.map((e) => e.position.prepare);
        expect([...prepares].sort((x, y) => (x < y ? -1 : 1))).toEqual(prepares);
        // What came back is what is stored.
        expect(await grouped.readStream(`${prefix}-a`)).toEqual(results[0].events);
        expect((await grouped.readStream(`${prefix}-b`)).slice(1)).toEqual(results[1].events);
        const read = await eventually(
          () => grouped.readAll({ filter: { streamPrefixes: [`${prefix}-`] } }),
          (events) => events.length === 6,
        );
        expect(read.slice(1)).toEqual(all);
      } finally {
        await close();
      }
    });

    it('fails only the appends whose expectation fails, each with the revision it found', async () => {
      const { store: grouped, sent, close } = recordingStore();
      try {
        const prefix = uniq();
        await grouped.append(`${prefix}-taken`, [event('Seed'), event('Seed')]);
        sent.length = 0;
        const outcomes = await Promise.all([
          settled(grouped.append(`${prefix}-new`, [event('N')], { expectedRevision: 'no_stream' })),
          settled(grouped.append(`${prefix}-taken`, [event('X')], { expectedRevision: 'no_stream' })),
          settled(grouped.append(`${prefix}-absent`, [event('X')], { expectedRevision: 'stream_exists' })),
          settled(grouped.append(`${prefix}-absent2`, [event('X')], { expectedRevision: 3n })),
          settled(grouped.append(`${prefix}-taken2`, [event('X')], { expectedRevision: 'any' })),
        ]);
        expect(appends(sent)).toHaveLength(1);
        expect(outcomes.map((o) => o.status)).toEqual([
          'fulfilled',
          'rejected',
          'rejected',
          'rejected',
          'fulfilled',
        ]);
        const reasons = outcomes.filter((o) => o.status === 'rejected').map((o) => o.reason as unknown);
        for (const r of reasons) expect(r).toBeInstanceOf(WrongExpectedRevisionError);
        expect(reasons).toMatchObject([
          { streamName: `${prefix}-taken`, expected: 'no_stream', actual: 1n },
          { streamName: `${prefix}-absent`, expected: 'stream_exists', actual: 'no_stream' },
          { streamName: `${prefix}-absent2`, expected: 3n, actual: 'no_stream' },
        ]);
        expect((await grouped.readStream(`${prefix}-taken`)).map((e) => e.type)).toEqual(['Seed', 'Seed']);
        expect(await grouped.readStream(`${prefix}-absent`)).toEqual([]);
        expect((await grouped.readStream(`${prefix}-new`)).map((e) => e.type)).toEqual(['N']);
      } finally {
        await close();
      }
    });

    it('refuses an exact revision the stream has moved past, as a single append does', async () => {
      const { store: grouped, close } = recordingStore();
      try {
        const stream = `${uniq()}-moved`;
        await grouped.append(stream, [event('A'), event('B'), event('C')]);
        const [stale, other] = await Promise.all([
          settled(grouped.append(stream, [event('X')], { expectedRevision: 1n })),
          settled(grouped.append(`${stream}-other`, [event('Y')])),
        ]);
        expect(stale.status).toBe('rejected');
        expect((stale as PromiseRejectedResult).reason).toMatchObject({ expected: 1n, actual: 2n });
        expect(other.status).toBe('fulfilled');
        expect((await grouped.readStream(stream)).map((e) => e.type)).toEqual(['A', 'B', 'C']);
      } finally {
        await close();
      }
    });

    it('keeps the order of appends to one stream asked for together, each after the one before', async () => {
      const { store: grouped, close } = recordingStore();
      try {
        const prefix = uniq();
        const results = await Promise.all([
          grouped.append(`${prefix}-s`, [event('First')], { expectedRevision: 'no_stream' }),
          grouped.append(`${prefix}-other`, [event('Other')]),
          grouped.append(`${prefix}-s`, [event('Second')], { expectedRevision: 0n }),
          grouped.append(`${prefix}-s`, [event('Third')]),
          grouped.append(`${prefix}-s`, [event('Fourth')], { expectedRevision: 2n }),
        ]);
        expect(results.map((r) => r.nextExpectedRevision)).toEqual([0n, 0n, 1n, 2n, 3n]);
        expect((await grouped.readStream(`${prefix}-s`)).map((e) => e.type)).toEqual([
          'First',
          'Second',
          'Third',
          'Fourth',
        ]);
        // Each later append to the stream committed after the one before it.
        const commits = [results[0], results[2], results[3], results[4]].map((r) => r.position.commit);
        expect(commits).toEqual([...commits].sort((x, y) => (x < y ? -1 : 1)));
        expect(new Set(commits).size).toBe(4);
      } finally {
        await close();
      }
    });

    it('falls back to one append at a time when a concurrent writer takes a revision first', async () => {
      const { store: grouped, sent, close } = recordingStore();
      try {
        const prefix = uniq();
        const raced = `${prefix}-raced`;
        const strict = `${prefix}-strict`;
        await grouped.append(raced, [event('Seed')]);
        await grouped.append(strict, [event('Seed')]);
        sent.length = 0;
        // Another transaction holds revision 1 of both streams, uncommitted, while the
        // group is sent: the group waits on its rows and fails on the unique key.
        const txA = await rawClient();
        await txA.query('BEGIN');
        await store.appendInTransaction(txA, raced, [event('FromA')], { expectedRevision: 0n });
        await store.appendInTransaction(txA, strict, [event('FromA')], { expectedRevision: 0n });
        const group = Promise.all([
          settled(grouped.append(raced, [event('Any')])),
          settled(grouped.append(strict, [event('Exact')], { expectedRevision: 0n })),
          settled(grouped.append(`${prefix}-fresh`, [event('Fresh')], { expectedRevision: 'no_stream' })),
        ]);
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
        const [any, exact, fresh] = await group;
        // The group statement, then one append each.
        expect(appends(sent).length).toBeGreaterThanOrEqual(4);
        expect(any).toMatchObject({ status: 'fulfilled', value: { nextExpectedRevision: 2n } });
        expect(exact.status).toBe('rejected');
        expect((exact as PromiseRejectedResult).reason).toBeInstanceOf(WrongExpectedRevisionError);
        expect((exact as PromiseRejectedResult).reason).toMatchObject({ expected: 0n, actual: 1n });
        expect(fresh).toMatchObject({ status: 'fulfilled', value: { nextExpectedRevision: 0n } });
        expect((await grouped.readStream(raced)).map((e) => e.type)).toEqual(['Seed', 'FromA', 'Any']);
        expect((await grouped.readStream(strict)).map((e) => e.type)).toEqual(['Seed', 'FromA']);
      } finally {
        await close();
      }
    });

    it('gives a value the database refuses to its own append only', async () => {
      const { store: grouped, close } = recordingStore();
      try {
        const prefix = uniq();
        const [bad, good, duplicate, original] = await Promise.all([
          settled(grouped.append(`${prefix}-bad`, [{ ...event('Bad'), id: 'not-a-uuid' }])),
          settled(grouped.append(`${prefix}-good`, [event('Good')])),
          settled(
            grouped.append(`${prefix}-dup`, [
              { ...event('Dup'), id: '0190a4f0-0000-7000-8000-00000000abcd' },
            ]),
          ),
          settled(
            grouped.append(`${prefix}-orig`, [
              { ...event('Orig'), id: '0190a4f0-0000-7000-8000-00000000abcd' },
            ]),
          ),
        ]);
        expect(bad.status).toBe('rejected');
        expect(good.status).toBe('fulfilled');
        // Of two appends with one event id, exactly one lands.
        expect([duplicate.status, original.status].sort()).toEqual(['fulfilled', 'rejected']);
        expect(await grouped.readStream(`${prefix}-bad`)).toEqual([]);
        expect((await grouped.readStream(`${prefix}-good`)).map((e) => e.type)).toEqual(['Good']);
      } finally {
        await close();
      }
    });

    it('wakes local subscribers once with the types of what landed, and carries the NOTIFY', async () => {
      const { store: grouped, sent, close } = recordingStore();
      const calls: string[][] = [];
      const unsubscribe = grouped.onAppended((types) => types && calls.push([...types].sort()));
      try {
        const prefix = uniq();
        await delay(20);
        sent.length = 0;
        await Promise.all([
          grouped.append(`${prefix}-a`, [event('Alpha')]),
          grouped.append(`${prefix}-b`, [event('Beta')]),
          settled(
            grouped.append(`${prefix}-a-missing`, [event('Gamma')], { expectedRevision: 'stream_exists' }),
          ),
        ]);
        expect(calls).toEqual([['Alpha', 'Beta']]);
        expect(sent).toHaveLength(1);
        expect(sent[0]).toContain('pg_notify');
      } finally {
        unsubscribe();
        await close();
      }
    });

    it('sends createStreams calls asked for together as one statement; a refused one alone fails', async () => {
      const { store: grouped, sent, close } = recordingStore();
      try {
        const prefix = uniq();
        const [a, b] = await Promise.all([
          grouped.createStreams([
            { streamName: `${prefix}-a1`, events: [event('A1')] },
            { streamName: `${prefix}-a2`, events: [event('A2'), event('A3')] },
          ]),
          grouped.createStreams([{ streamName: `${prefix}-b`, events: [event('B')] }]),
        ]);
        expect(appends(sent)).toHaveLength(1);
        expect(a.map((r) => r.nextExpectedRevision)).toEqual([0n, 1n]);
        expect(b[0].events.map((e) => e.type)).toEqual(['B']);
        expect(new Set([...a, ...b].map((r) => r.position.commit)).size).toBe(1);
        expect(await grouped.readStream(`${prefix}-a2`)).toEqual(a[1].events);

        // One of the calls names a stream that exists: the others land all the same.
        sent.length = 0;
        const outcomes = await Promise.all([
          settled(grouped.createStreams([{ streamName: `${prefix}-c`, events: [event('C')] }])),
          settled(
            grouped.createStreams([
              { streamName: `${prefix}-d`, events: [event('D')] },
              { streamName: `${prefix}-b`, events: [event('Again')] },
            ]),
          ),
        ]);
        expect(outcomes[0].status).toBe('fulfilled');
        expect(outcomes[1].status).toBe('rejected');
        expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({
          streamName: `${prefix}-b`,
          expected: 'no_stream',
          actual: 0n,
        });
        expect(await grouped.readStream(`${prefix}-d`)).toEqual([]);
        expect((await grouped.readStream(`${prefix}-b`)).map((e) => e.type)).toEqual(['B']);
        expect((await grouped.readStream(`${prefix}-c`)).map((e) => e.type)).toEqual(['C']);
      } finally {
        await close();
      }
    });

    it('runs the calls’ `also` statement once on their merged values; a conflict in one fails only it', async () => {
      const { store: grouped, sent, close } = recordingStore();
      const client = await rawClient();
      await client.query(`CREATE TABLE IF NOT EXISTS group_also (v text PRIMARY KEY, owner text NOT NULL)`);
      const also = (owner: string, ...values: string[]) => ({
        sql: `INSERT INTO group_also (v, owner) SELECT unnest($2::text[]), unnest($3::text[])`,
        values: [values, values.map(() => owner)],
        merge: (lists: readonly unknown[][]) => [0, 1].map((c) => lists.flatMap((l) => l[c] as string[])),
      });
      try {
        const prefix = uniq();
        const [x, y] = await Promise.all([
          grouped.createStreams(
            [{ streamName: `${prefix}-x`, events: [event('X')] }],
            also('x', `${prefix}-1`),
          ),
          grouped.createStreams(
            [{ streamName: `${prefix}-y`, events: [event('Y')] }],
            also('y', `${prefix}-2`, `${prefix}-3`),
          ),
        ]);
        expect(appends(sent)).toHaveLength(1);
        expect([x[0].events[0].type, y[0].events[0].type]).toEqual(['X', 'Y']);
        const rows = await client.query<{ v: string; owner: string }>(
          `SELECT v, owner FROM group_also WHERE starts_with(v, $1) ORDER BY v`,
          [prefix],
        );
        expect(rows.rows).toEqual([
          { v: `${prefix}-1`, owner: 'x' },
          { v: `${prefix}-2`, owner: 'y' },
          { v: `${prefix}-3`, owner: 'y' },
        ]);

        // Two calls claim one value: exactly one lands, with its stream; the other writes nothing.
        const [p, q] = await Promise.all([
          settled(
            grouped.createStreams(
              [{ streamName: `${prefix}-p`, events: [event('P')] }],
              also('p', `${prefix}-4`),
            ),
          ),
          settled(
            grouped.createStreams(
              [{ streamName: `${prefix}-q`, events: [event('Q')] }],
              also('q', `${prefix}-4`),
            ),
          ),
        ]);
        expect([p.status, q.status].sort()).toEqual(['fulfilled', 'rejected']);
        const loser = p.status === 'rejected' ? 'p' : 'q';
        const winner = loser === 'p' ? 'q' : 'p';
        expect((p.status === 'rejected' ? p : (q as PromiseRejectedResult)).reason).toMatchObject({
          code: '23505',
        });
        expect(await grouped.readStream(`${prefix}-${loser}`)).toEqual([]);
        expect(await grouped.readStream(`${prefix}-${winner}`)).toHaveLength(1);
        const owner = await client.query<{ owner: string }>(`SELECT owner FROM group_also WHERE v = $1`, [
          `${prefix}-4`,
        ]);
        expect(owner.rows).toEqual([{ owner: winner }]);
      } finally {
        await close();
      }
    });

    it('sends what was asked for before close() and answers it', async () => {
      const { store: grouped, close } = recordingStore();
      const prefix = uniq();
      const pending = [1, 2, 3].map((i) => grouped.append(`${prefix}-${i}`, [event('Late')]));
      await close();
      await expect(Promise.all(pending)).resolves.toHaveLength(3);
      expect((await store.readStream(`${prefix}-2`)).map((e) => e.type)).toEqual(['Late']);
    });
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

  it('sends its reads and its new streams with `also` as named statements, planned once per connection', async () => {
    // One connection, so the session's prepared statements are the store's.
    const pool = new Pool({ connectionString: db.url, max: 1 });
    const named = new PostgresEventStore({ connectionString: db.url, pool, groupCommit: false });
    try {
      await pool.query(`CREATE TABLE IF NOT EXISTS named_also (v text PRIMARY KEY)`);
      const prefix = uniq();
      // Past PostgreSQL's five custom plans, so later runs use the cached generic one.
      for (let i = 0; i < 7; i++) {
        await named.createStreams([{ streamName: `${prefix}-${i}`, events: [event('A'), event('B')] }], {
          sql: `INSERT INTO named_also (v) SELECT unnest($2::text[])`,
          values: [[`${prefix}-${i}`]],
        });
        expect(
          (await named.readStream(`${prefix}-${i}`, { maxCount: i < 3 ? undefined : 1 })).map((e) => e.type),
        ).toEqual(i < 3 ? ['A', 'B'] : ['A']);
        expect(
          (await named.readStream(`${prefix}-${i}`, { direction: 'backwards', maxCount: 1 })).map(
            (e) => e.revision,
          ),
        ).toEqual([1n]);
      }
      const { rows } = await pool.query<{ name: string; statement: string }>(
        `SELECT name, statement FROM pg_prepared_statements`,
      );
      const names = rows.map((r) => r.name);
      expect(names).toEqual(
        expect.arrayContaining(['event_store_read_stream_forwards', 'event_store_read_stream_backwards']),
      );
      // One statement per text: with and without the NOTIFY the throttle lets it carry.
      const withAlso = rows.filter((r) => r.statement.includes('named_also'));
      expect(withAlso.length).toBeGreaterThanOrEqual(1);
      expect(new Set(withAlso.map((r) => r.statement)).size).toBe(withAlso.length);
    } finally {
      await named.close();
      await pool.end();
    }
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
