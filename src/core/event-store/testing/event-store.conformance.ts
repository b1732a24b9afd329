import { randomUUID } from 'node:crypto';
import {
  EventFilter,
  EventStore,
  ExpectedRevision,
  Position,
  ScanAllOptions,
  ScanAllResult,
  StoredEvent,
  WrongExpectedRevisionError,
  comparePositions,
} from '../event-store.port';
import { collect, delay, event, eventually, meta, range, uniq } from './event-store.test-helpers';

export { collect, delay, event, eventually, meta, range, uniq } from './event-store.test-helpers';
export type { Collected } from './event-store.test-helpers';

export interface ConformanceOptions {
  /**
   * Also run the cases that hold for PostgreSQL's transactional semantics but not for
   * EventStoreDB's: a duplicate event id fails the whole append (EventStoreDB treats a
   * repeated id as an idempotent retry instead), and createStreams writes several new
   * streams atomically (EventStoreDB has no multi-stream transaction, so the adapter
   * must not offer it).
   */
  postgresOnly?: boolean;
}

/**
 * The behaviour every EventStore adapter must share. Cases never assume an empty store
 * or exact position values: each works in its own stream-name prefix, and reads of the
 * global order are repeated until they settle, because a store may expose a committed
 * event to readAll a moment later than to readStream (PostgreSQL waits for older
 * transactions anywhere in the cluster, so another test's open transaction delays it;
 * hence the generous timeouts, which only matter when something is wrong or slow).
 */
export function describeEventStoreConformance(
  name: string,
  factory: () => Promise<{ store: EventStore; teardown(): Promise<void> }>,
  options: ConformanceOptions = {},
): void {
  describe(`EventStore conformance: ${name}`, () => {
    let store: EventStore;
    let teardown: () => Promise<void>;

    beforeAll(async () => {
      ({ store, teardown } = await factory());
    });
    afterAll(async () => {
      await teardown?.();
    });

    /** Reads the global order (forwards, in one prefix) until it holds `count` events. */
    async function readAllSettled(
      prefix: string,
      count: number,
      extra: { eventTypes?: string[] } = {},
    ): Promise<StoredEvent[]> {
      return eventually(
        () => store.readAll({ filter: { streamPrefixes: [prefix], ...extra } }),
        (events) => events.length >= count,
      );
    }

    describe('append and readStream', () => {
      it('stores events with revisions from 0, uuid v7 ids when absent, and JSON data as given', async () => {
        const stream = `${uniq()}-order-1`;
        const givenId = randomUUID();
        const data = {
          nested: { list: [1, 'two', null, { three: true }] },
          text: 'żółw ✓ "quoted" \\ back',
          n: 1.5,
        };
        const result = await store.append(
          stream,
          [
            event('Created', data),
            { ...event('Renamed', { name: 'x' }), id: givenId },
            event('Closed', null),
          ],
          {
            expectedRevision: 'no_stream',
          },
        );
        expect(result.nextExpectedRevision).toBe(2n);
        expect(result.events.map((e) => e.revision)).toEqual([0n, 1n, 2n]);
        expect(result.events[0].id).toMatch(
          /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
        );
        expect(result.events[1].id).toBe(givenId);
        expect(comparePositions(result.position, result.events[2].position)).toBe(0);
        expect(comparePositions(result.events[0].position, result.events[1].position)).toBeLessThan(0);
        expect(comparePositions(result.events[1].position, result.events[2].position)).toBeLessThan(0);

        const read = await store.readStream(stream);
        expect(read).toEqual(result.events);
        expect(read[0]).toMatchObject({ type: 'Created', data, streamName: stream, metadata: meta() });
        expect(read[2].data).toBeNull();
      });

      it('reads forwards and backwards from a revision, up to maxCount', async () => {
        const stream = `${uniq()}-list-1`;
        await store.append(
          stream,
          range(10).map((i) => event('Numbered', { i })),
        );
        const revisions = (events: StoredEvent[]) => events.map((e) => Number(e.revision));

        expect(revisions(await store.readStream(stream))).toEqual(range(10));
        expect(revisions(await store.readStream(stream, { fromRevision: 3n, maxCount: 4 }))).toEqual([
          3, 4, 5, 6,
        ]);
        expect(revisions(await store.readStream(stream, { fromRevision: 10n }))).toEqual([]);
        expect(revisions(await store.readStream(stream, { direction: 'backwards' }))).toEqual(
          range(10).reverse(),
        );
        expect(
          revisions(
            await store.readStream(stream, { direction: 'backwards', fromRevision: 5n, maxCount: 3 }),
          ),
        ).toEqual([5, 4, 3]);
        expect(revisions(await store.readStream(stream, { direction: 'backwards', maxCount: 2 }))).toEqual([
          9, 8,
        ]);
      });

      it('reads an absent stream as []', async () => {
        expect(await store.readStream(`${uniq()}-absent-1`)).toEqual([]);
        expect(await store.readStream(`${uniq()}-absent-1`, { direction: 'backwards' })).toEqual([]);
      });
    });

    describe('expected revision', () => {
      it("'no_stream' creates a stream once, then conflicts", async () => {
        const stream = `${uniq()}-s-1`;
        await store.append(stream, [event('A')], { expectedRevision: 'no_stream' });
        await expectConflict(
          store.append(stream, [event('B')], { expectedRevision: 'no_stream' }),
          stream,
          'no_stream',
          0n,
        );
      });

      it("'stream_exists' conflicts on an absent stream and appends to an existing one", async () => {
        const stream = `${uniq()}-s-1`;
        await expectConflict(
          store.append(stream, [event('A')], { expectedRevision: 'stream_exists' }),
          stream,
          'stream_exists',
          'no_stream',
        );
        expect(await store.readStream(stream)).toEqual([]);
        await store.append(stream, [event('A')]);
        const result = await store.append(stream, [event('B')], { expectedRevision: 'stream_exists' });
        expect(result.nextExpectedRevision).toBe(1n);
      });

      it('an exact revision appends only at that revision', async () => {
        const stream = `${uniq()}-s-1`;
        await expectConflict(
          store.append(stream, [event('A')], { expectedRevision: 0n }),
          stream,
          0n,
          'no_stream',
        );
        const first = await store.append(stream, [event('A')], { expectedRevision: 'no_stream' });
        const second = await store.append(stream, [event('B'), event('C')], {
          expectedRevision: first.nextExpectedRevision,
        });
        expect(second.nextExpectedRevision).toBe(2n);
        await expectConflict(store.append(stream, [event('D')], { expectedRevision: 1n }), stream, 1n, 2n);
        await expectConflict(store.append(stream, [event('D')], { expectedRevision: 3n }), stream, 3n, 2n);
        expect(
          (await store.append(stream, [event('D')], { expectedRevision: 2n })).nextExpectedRevision,
        ).toBe(3n);
      });

      it("'any' (the default) appends to absent and existing streams", async () => {
        const stream = `${uniq()}-s-1`;
        expect(
          (await store.append(stream, [event('A')], { expectedRevision: 'any' })).nextExpectedRevision,
        ).toBe(0n);
        expect((await store.append(stream, [event('B')])).nextExpectedRevision).toBe(1n);
      });

      it.each<[string, ExpectedRevision]>([
        ['an exact revision', 0n],
        ["'no_stream'", 'no_stream'],
      ])('of concurrent appends expecting %s, exactly one wins', async (_label, expected) => {
        const stream = `${uniq()}-race-1`;
        if (expected !== 'no_stream')
          await store.append(stream, [event('Seed')], { expectedRevision: 'no_stream' });
        const before = (await store.readStream(stream)).length;
        const outcomes = await Promise.allSettled(
          range(10).map((i) =>
            store.append(stream, [event('Raced', { i }), event('Raced2', { i })], {
              expectedRevision: expected,
            }),
          ),
        );
        const won = outcomes.filter((o) => o.status === 'fulfilled');
        const lost = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
        expect(won).toHaveLength(1);
        for (const o of lost) expect(o.reason).toBeInstanceOf(WrongExpectedRevisionError);
        const events = await store.readStream(stream);
        expect(events).toHaveLength(before + 2);
        expect(events.map((e) => Number(e.revision))).toEqual(range(before + 2));
      });

      it("concurrent 'any' appends to one stream all land, with dense revisions", async () => {
        const stream = `${uniq()}-any-1`;
        const results = await Promise.all(
          range(10).map((i) => store.append(stream, [event('X', { i }), event('Y', { i })])),
        );
        const revisions = results
          .flatMap((r) => r.events.map((e) => Number(e.revision)))
          .sort((a, b) => a - b);
        expect(revisions).toEqual(range(20));
        for (const r of results) expect(r.events[1].revision).toBe(r.events[0].revision + 1n);
        expect((await store.readStream(stream)).map((e) => Number(e.revision))).toEqual(range(20));
      });

      it('a failed multi-event append leaves nothing behind', async () => {
        const prefix = uniq();
        const stream = `${prefix}-atomic-1`;
        await store.append(stream, [event('A')]);
        await expectConflict(
          store.append(stream, [event('B'), event('C'), event('D')], { expectedRevision: 5n }),
          stream,
          5n,
          0n,
        );
        expect((await store.readStream(stream)).map((e) => e.type)).toEqual(['A']);
        await store.append(`${prefix}-atomic-2`, [event('Marker')]);
        // Once a later append is readable, a leaked part of the failed one would be too.
        expect((await readAllSettled(`${prefix}-`, 2)).map((e) => e.type)).toEqual(['A', 'Marker']);
      });

      if (options.postgresOnly) {
        it('a duplicate event id fails the whole append', async () => {
          const prefix = uniq();
          const taken = randomUUID();
          await store.append(`${prefix}-dup-1`, [{ ...event('A'), id: taken }]);
          await expect(
            store.append(`${prefix}-dup-2`, [event('B'), { ...event('C'), id: taken }, event('D')]),
          ).rejects.toThrow();
          expect(await store.readStream(`${prefix}-dup-2`)).toEqual([]);
          await expect(
            store.append(`${prefix}-dup-2`, [event('E')], { expectedRevision: 'no_stream' }),
          ).resolves.toBeDefined();
        });
      }
    });

    describe('createStreams', () => {
      if (!options.postgresOnly) {
        it('is not offered: without a multi-stream transaction it could not be atomic', () => {
          expect(store.createStreams).toBeUndefined();
        });
        return;
      }

      it('creates several streams in one write, revisions from 0, in the order given', async () => {
        const prefix = uniq();
        const results = await store.createStreams!([
          { streamName: `${prefix}-a`, events: [event('A1'), event('A2')] },
          { streamName: `${prefix}-b`, events: [event('B1', { n: 1 })] },
        ]);
        expect(results.map((r) => r.events.map((e) => [e.streamName, Number(e.revision), e.type]))).toEqual([
          [
            [`${prefix}-a`, 0, 'A1'],
            [`${prefix}-a`, 1, 'A2'],
          ],
          [[`${prefix}-b`, 0, 'B1']],
        ]);
        expect(results[0].nextExpectedRevision).toBe(1n);
        expect((await store.readStream(`${prefix}-b`))[0].data).toEqual({ n: 1 });
        const all = await readAllSettled(`${prefix}-`, 3);
        expect(all.map((e) => e.type)).toEqual(['A1', 'A2', 'B1']);
        expect(all.map((e) => e.position)).toEqual(results.flatMap((r) => r.events.map((e) => e.position)));
        // Appending continues from what was created.
        await store.append(`${prefix}-a`, [event('A3')], { expectedRevision: 1n });
      });

      it('writes nothing when one of the streams exists, naming it', async () => {
        const prefix = uniq();
        await store.append(`${prefix}-taken`, [event('Old')]);
        await expectConflict(
          store.createStreams!([
            { streamName: `${prefix}-new-1`, events: [event('N1')] },
            { streamName: `${prefix}-taken`, events: [event('N2')] },
            { streamName: `${prefix}-new-2`, events: [event('N3')] },
          ]),
          `${prefix}-taken`,
          'no_stream',
          0n,
        );
        expect(await store.readStream(`${prefix}-new-1`)).toEqual([]);
        expect(await store.readStream(`${prefix}-new-2`)).toEqual([]);
        expect((await store.readStream(`${prefix}-taken`)).map((e) => e.type)).toEqual(['Old']);
        await store.createStreams!([{ streamName: `${prefix}-new-1`, events: [event('N1')] }]);
        expect((await store.readStream(`${prefix}-new-1`)).map((e) => e.type)).toEqual(['N1']);
      });

      it('of racing writes that share a stream, exactly one lands', async () => {
        const prefix = uniq();
        const outcomes = await Promise.allSettled(
          range(8).map((i) =>
            store.createStreams!([
              { streamName: `${prefix}-own-${i}`, events: [event('Own')] },
              { streamName: `${prefix}-shared`, events: [event('Shared', { i })] },
            ]),
          ),
        );
        const won = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [i] : []));
        expect(won).toHaveLength(1);
        for (const o of outcomes)
          if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(WrongExpectedRevisionError);
        expect((await store.readStream(`${prefix}-shared`)).map((e) => e.data)).toEqual([{ i: won[0] }]);
        for (const i of range(8))
          expect((await store.readStream(`${prefix}-own-${i}`)).length).toBe(i === won[0] ? 1 : 0);
      });
    });

    describe('readAll', () => {
      it('reads the global order forwards and backwards, exclusive of `after`, with maxCount', async () => {
        const prefix = uniq();
        for (let i = 0; i < 6; i++) await store.append(`${prefix}-s-${i % 3}`, [event('Step', { i })]);
        const forwards = await readAllSettled(`${prefix}-`, 6);
        expect(forwards.map((e) => (e.data as { i: number }).i)).toEqual(range(6));
        for (let i = 1; i < forwards.length; i++)
          expect(comparePositions(forwards[i - 1].position, forwards[i].position)).toBeLessThan(0);

        const filter = { streamPrefixes: [`${prefix}-`] };
        const backwards = await store.readAll({ direction: 'backwards', filter });
        expect(backwards).toEqual([...forwards].reverse());
        expect(await store.readAll({ after: forwards[2].position, filter })).toEqual(forwards.slice(3));
        expect(await store.readAll({ after: forwards[2].position, maxCount: 2, filter })).toEqual(
          forwards.slice(3, 5),
        );
        expect(await store.readAll({ direction: 'backwards', after: forwards[3].position, filter })).toEqual(
          forwards.slice(0, 3).reverse(),
        );
        expect(await store.readAll({ direction: 'backwards', maxCount: 2, filter })).toEqual(
          forwards.slice(4).reverse(),
        );
        expect(await store.readAll({ after: forwards[5].position, filter })).toEqual([]);
      });

      it('filters by event type and by stream prefixes', async () => {
        const prefix = uniq();
        await store.append(`${prefix}-a-1`, [event('Wanted'), event('Other')]);
        await store.append(`${prefix}-b-1`, [event('Other'), event('Wanted')]);
        await store.append(`${prefix}-c-1`, [event('Wanted')]);
        const all = await readAllSettled(`${prefix}-`, 5);
        expect(all).toHaveLength(5);

        const wanted = await store.readAll({
          filter: { streamPrefixes: [`${prefix}-`], eventTypes: ['Wanted'] },
        });
        expect(wanted.map((e) => e.streamName)).toEqual([`${prefix}-a-1`, `${prefix}-b-1`, `${prefix}-c-1`]);
        const twoPrefixes = await store.readAll({
          filter: { streamPrefixes: [`${prefix}-a-`, `${prefix}-c-`] },
        });
        expect(twoPrefixes.map((e) => `${e.streamName}/${e.type}`)).toEqual([
          `${prefix}-a-1/Wanted`,
          `${prefix}-a-1/Other`,
          `${prefix}-c-1/Wanted`,
        ]);
        const both = await store.readAll({
          filter: { streamPrefixes: [`${prefix}-b-`], eventTypes: ['Wanted', 'Nothing'] },
        });
        expect(both.map((e) => e.streamName)).toEqual([`${prefix}-b-1`]);
        const backwards = await store.readAll({
          direction: 'backwards',
          filter: { streamPrefixes: [`${prefix}-`], eventTypes: ['Other'] },
        });
        expect(backwards.map((e) => e.streamName)).toEqual([`${prefix}-b-1`, `${prefix}-a-1`]);
      });

      it('reports a head position at or after the last append', async () => {
        const result = await store.append(`${uniq()}-head-1`, [event('A')]);
        const head = await eventually(
          () => store.headPosition(),
          (p) => p !== undefined && comparePositions(p, result.position) >= 0,
        );
        // eventually() returns its last value when time runs out: check the value itself.
        expect(head).toBeDefined();
        expect(comparePositions(head!, result.position)).toBeGreaterThanOrEqual(0);
        // And it is the head: nothing lies after it.
        expect(await store.readAll({ after: head, maxCount: 1 })).toEqual([]);
        await expect(store.ping()).resolves.toBeUndefined();
      });
    });

    describe('scanAll', () => {
      /** Every adapter here offers it: the subscriber loop relies on it to skip unmatched events. */
      function scan(options: ScanAllOptions): Promise<ScanAllResult> {
        expect(store.scanAll).toBeDefined();
        return store.scanAll!(options);
      }

      /**
       * Scans from `after` in steps of `limit` until the scan has passed `until`, checking
       * each step's events lie after where it started and up to where it says it stopped.
       */
      async function scanPast(
        after: Position | undefined,
        until: Position,
        limit: number,
        filter?: EventFilter,
      ): Promise<{ events: StoredEvent[]; scannedTo: Position | undefined; steps: number }> {
        const events: StoredEvent[] = [];
        let steps = 0;
        while (after === undefined || comparePositions(after, until) < 0) {
          if (++steps > 10_000) throw new Error('scanAll never got past the position asked for');
          const step = await scan({ after, limit, filter });
          if (step.events.length) expect(step.scannedTo).toBeDefined();
          for (const e of step.events) {
            if (after) expect(comparePositions(e.position, after)).toBeGreaterThan(0);
            expect(comparePositions(e.position, step.scannedTo!)).toBeLessThanOrEqual(0);
          }
          if (step.scannedTo && after) expect(comparePositions(step.scannedTo, after)).toBeGreaterThan(0);
          events.push(...step.events);
          if (!step.scannedTo) await delay(20);
          after = step.scannedTo ?? after;
        }
        return { events, scannedTo: after, steps };
      }

      it('returns the matches and a scannedTo past the events the filter rejects', async () => {
        const prefix = uniq();
        const head = await store.headPosition();
        await store.append(
          `${prefix}-other`,
          range(5).map(() => event('Other')),
        );
        await store.append(`${prefix}-wanted`, [event('Wanted')]);
        await store.append(
          `${prefix}-other`,
          range(3).map(() => event('Other')),
        );
        const all = await readAllSettled(`${prefix}-`, 9);
        expect(all.map((e) => e.type)).toEqual([
          ...range(5).map(() => 'Other'),
          'Wanted',
          'Other',
          'Other',
          'Other',
        ]);

        const filter = { streamPrefixes: [`${prefix}-`], eventTypes: ['Wanted'] };
        const scanned = await scanPast(head, all[8].position, 1000, filter);
        expect(scanned.events).toEqual([all[5]]);
        // Looked past the trailing unmatched events, so a reader continues after them.
        expect(comparePositions(scanned.scannedTo!, all[8].position)).toBeGreaterThanOrEqual(0);

        // Nothing matches after the wanted event: the scan still moves past the others.
        const rest = await scanPast(all[5].position, all[8].position, 1000, filter);
        expect(rest.events).toEqual([]);
        expect(comparePositions(rest.scannedTo!, all[8].position)).toBeGreaterThanOrEqual(0);
      });

      it('says `more` when it stopped at the limit and not when it reached the end', async () => {
        const prefix = uniq();
        // One write: its events are contiguous in the global order on every store.
        await store.append(
          `${prefix}-s`,
          range(6).map((i) => event('Step', { i })),
        );
        const all = await readAllSettled(`${prefix}-`, 6);
        const filter = { streamPrefixes: [`${prefix}-`] };

        expect(await scan({ after: all[0].position, limit: 3 })).toEqual({
          events: all.slice(1, 4),
          scannedTo: all[3].position,
          more: true,
        });
        expect(await scan({ after: all[0].position, limit: 3, filter })).toEqual({
          events: all.slice(1, 4),
          scannedTo: all[3].position,
          more: true,
        });
        expect(
          await scan({ after: all[3].position, limit: 2, filter: { ...filter, eventTypes: ['None'] } }),
        ).toEqual({
          events: [],
          scannedTo: all[5].position,
          more: true,
        });

        // At the end: no `more`; once nothing at all lies after, no scannedTo either
        // (other writers, such as EventStoreDB's own bookkeeping, may add events meanwhile).
        let after = all[5].position;
        let last: ScanAllResult | undefined;
        for (let i = 0; i < 200; i++) {
          last = await scan({ after, limit: 1000, filter });
          expect(last.events).toEqual([]);
          expect(last.more).toBe(false);
          if (!last.scannedTo) break;
          after = last.scannedTo;
        }
        expect(last).toEqual({ events: [], more: false });
        expect(last!.scannedTo).toBeUndefined();
      });

      it('continued from scannedTo, yields only later events: none twice, none missed', async () => {
        const prefix = uniq();
        const head = await store.headPosition();
        for (let i = 0; i < 10; i++)
          await store.append(`${prefix}-s-${i % 3}`, [event(i % 3 === 0 ? 'A' : 'B', { i })]);
        const all = await readAllSettled(`${prefix}-`, 10);
        const end = all[9].position;

        const matching = await scanPast(head, end, 3, { streamPrefixes: [`${prefix}-`], eventTypes: ['A'] });
        expect(matching.events).toEqual(all.filter((e) => e.type === 'A'));
        expect(matching.steps).toBeGreaterThanOrEqual(4);
        const every = await scanPast(head, end, 2, { streamPrefixes: [`${prefix}-`] });
        expect(every.events).toEqual(all);
        expect(every.steps).toBeGreaterThanOrEqual(5);
      });
    });

    describe('subscribe', () => {
      it('delivers every event exactly once, in per-stream order, to a subscriber running alongside 8 writers', async () => {
        const prefix = uniq();
        const writers = 8;
        const perWriter = 500;
        const sub = collect(store.subscribe({ filter: { streamPrefixes: [`${prefix}-`] } }));
        await Promise.all(
          range(writers).map(async (w) => {
            let expected: ExpectedRevision = 'no_stream';
            for (let i = 0; i < perWriter; i++) {
              expected = (
                await store.append(`${prefix}-w-${w}`, [event('Written', { w, i })], {
                  expectedRevision: expected,
                })
              ).nextExpectedRevision;
            }
          }),
        );
        await sub.waitFor(writers * perWriter, 30_000);
        await delay(200);
        await sub.stop();

        expect(sub.events).toHaveLength(writers * perWriter);
        expect(new Set(sub.events.map((e) => e.id)).size).toBe(writers * perWriter);
        for (let i = 1; i < sub.events.length; i++)
          expect(comparePositions(sub.events[i - 1].position, sub.events[i].position)).toBeLessThan(0);
        for (let w = 0; w < writers; w++) {
          const ofStream = sub.events.filter((e) => e.streamName === `${prefix}-w-${w}`);
          expect(ofStream.map((e) => Number(e.revision))).toEqual(range(perWriter));
        }
      }, 60_000);

      it('resumes after a saved checkpoint without repeating or skipping', async () => {
        const prefix = uniq();
        const filter = { streamPrefixes: [`${prefix}-`] };
        for (let i = 0; i < 10; i++) await store.append(`${prefix}-s-${i % 2}`, [event('Step', { i })]);
        const first = collect(store.subscribe({ filter }));
        await first.waitFor(4);
        await first.stop();
        const checkpoint = first.events[3].position;

        for (let i = 10; i < 15; i++) await store.append(`${prefix}-s-${i % 2}`, [event('Step', { i })]);
        const second = collect(store.subscribe({ after: checkpoint, filter }));
        await second.waitFor(11);
        await delay(100);
        await second.stop();
        expect(second.events.map((e) => (e.data as { i: number }).i)).toEqual(range(15).slice(4));
      });

      it('filters by type and prefix, catching up and then live', async () => {
        const prefix = uniq();
        await store.append(`${prefix}-a-1`, [event('Wanted', { n: 1 }), event('Other')]);
        await store.append(`${prefix}-b-1`, [event('Wanted', { n: 0 })]);
        const sub = collect(
          store.subscribe({ filter: { streamPrefixes: [`${prefix}-a-`], eventTypes: ['Wanted'] } }),
        );
        await sub.waitFor(1);
        await store.append(`${prefix}-a-2`, [event('Other'), event('Wanted', { n: 2 })]);
        await store.append(`${prefix}-b-2`, [event('Wanted', { n: 0 })]);
        await store.append(`${prefix}-a-1`, [event('Wanted', { n: 3 })]);
        await sub.waitFor(3);
        await delay(100);
        await sub.stop();
        expect(sub.events.map((e) => (e.data as { n: number }).n)).toEqual([1, 2, 3]);
      });

      it('starting after the head position delivers only what comes later', async () => {
        const prefix = uniq();
        const old = await store.append(`${prefix}-s-1`, [event('Old')]);
        const head = await eventually(
          () => store.headPosition(),
          (p) => p !== undefined && comparePositions(p, old.position) >= 0,
        );
        const sub = collect(store.subscribe({ after: head, filter: { streamPrefixes: [`${prefix}-`] } }));
        await store.append(`${prefix}-s-1`, [event('New')]);
        await sub.waitFor(1);
        await delay(100);
        await sub.stop();
        expect(sub.events.map((e) => e.type)).toEqual(['New']);
      });

      it('close() ends a waiting iteration promptly', async () => {
        const sub = collect(store.subscribe({ filter: { streamPrefixes: [`${uniq()}-`] } }));
        await delay(300);
        const started = Date.now();
        await sub.stop();
        // A guard against hanging, not a speed target.
        expect(Date.now() - started).toBeLessThan(10_000);
        expect(sub.events).toEqual([]);
      });
    });
  });
}

async function expectConflict(
  append: Promise<unknown>,
  streamName: string,
  expected: ExpectedRevision,
  actual: bigint | 'no_stream',
): Promise<void> {
  const error = await append.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WrongExpectedRevisionError);
  expect(error).toMatchObject({ streamName, expected, actual });
}
