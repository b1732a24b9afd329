import type { DomainEvent } from '../../cqrs/decider';
import { EventStore, WrongExpectedRevisionError } from '../../event-store/event-store.port';
import { event, range, uniq } from '../../event-store/testing/event-store.test-helpers';
import { ClaimKind, Claims, ClaimTakenError, defineClaimKind } from '../claims';

/**
 * The behaviour every claims adapter shares, whatever the store. A test owner stream
 * carries a value through `Named {value}` events; `holds` reads the last one.
 */
export const NAME_CLAIM: ClaimKind = defineClaimKind({
  name: 'test_name',
  holds(events: readonly DomainEvent[], value: string): boolean {
    const named = events.filter((e) => e.type === 'Named');
    return (named[named.length - 1]?.data as { value?: string } | undefined)?.value === value;
  },
});

export const named = (value: string | null) => event('Named', { value });

export interface ClaimsFixture {
  claims: Claims;
  store: EventStore;
  teardown(): Promise<void>;
}

export interface ClaimsConformanceOptions {
  /** Whether the adapter appends several owners atomically (appendMany): not on EventStoreDB. */
  atomicMany: boolean;
}

export function describeClaimsConformance(
  name: string,
  factory: () => Promise<ClaimsFixture>,
  options: ClaimsConformanceOptions,
): void {
  describe(`Claims conformance: ${name}`, () => {
    let claims: Claims;
    let store: EventStore;
    let teardown: () => Promise<void>;
    beforeAll(async () => {
      ({ claims, store, teardown } = await factory());
    });
    afterAll(() => teardown?.());

    const scope = () => uniq();

    it('gives one value to exactly one of 20 concurrent owners, and writes only its stream', async () => {
      const ws = scope();
      const owners = range(20).map((i) => `${ws}-owner-${i}`);
      const outcomes = await Promise.allSettled(
        owners.map((stream) =>
          claims.append({
            stream,
            events: [named('sales')],
            expectedRevision: 'no_stream',
            take: [{ scope: ws, kind: NAME_CLAIM, value: 'sales' }],
          }),
        ),
      );
      const won = owners.filter((_, i) => outcomes[i].status === 'fulfilled');
      expect(won).toHaveLength(1);
      const errors = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
      expect(errors).toHaveLength(19);
      for (const error of errors) {
        expect(error).toBeInstanceOf(ClaimTakenError);
        expect(error).toMatchObject({ kind: 'test_name', value: 'sales', owner: won[0], scope: ws });
      }
      const written = [];
      for (const stream of owners) if ((await store.readStream(stream)).length) written.push(stream);
      expect(written).toEqual(won);
      expect(await claims.ownerOf(ws, NAME_CLAIM, 'sales')).toBe(won[0]);
    });

    it('frees a released value for the next owner, and lets an owner keep what it holds', async () => {
      const ws = scope();
      const ref = { scope: ws, kind: NAME_CLAIM, value: 'ops' };
      const a = `${ws}-a`;
      const b = `${ws}-b`;
      await claims.append({ stream: a, events: [named('ops')], expectedRevision: 'no_stream', take: [ref] });
      // Taking again what one holds is no conflict.
      await claims.append({ stream: a, events: [named('ops')], expectedRevision: 0n, take: [ref] });
      await expect(
        claims.append({ stream: b, events: [named('ops')], expectedRevision: 'no_stream', take: [ref] }),
      ).rejects.toMatchObject({ owner: a });
      await claims.append({ stream: a, events: [named(null)], expectedRevision: 1n, release: [ref] });
      expect(await claims.ownerOf(ws, NAME_CLAIM, 'ops')).toBeUndefined();
      await claims.append({ stream: b, events: [named('ops')], expectedRevision: 'no_stream', take: [ref] });
      expect(await claims.ownerOf(ws, NAME_CLAIM, 'ops')).toBe(b);
      // Same value in another scope, or of another kind, is another claim.
      const other = scope();
      await claims.append({
        stream: `${other}-c`,
        events: [named('ops')],
        expectedRevision: 'no_stream',
        take: [{ scope: other, kind: NAME_CLAIM, value: 'ops' }],
      });
      expect(await claims.ownerOf(other, NAME_CLAIM, 'ops')).toBe(`${other}-c`);
    });

    it('appends nothing and changes no claim when one value is taken', async () => {
      const ws = scope();
      const held = { scope: ws, kind: NAME_CLAIM, value: 'held' };
      const free = { scope: ws, kind: NAME_CLAIM, value: 'free' };
      const mine = { scope: ws, kind: NAME_CLAIM, value: 'mine' };
      await claims.append({
        stream: `${ws}-a`,
        events: [named('held')],
        expectedRevision: 'no_stream',
        take: [held],
      });
      await claims.append({
        stream: `${ws}-b`,
        events: [named('mine')],
        expectedRevision: 'no_stream',
        take: [mine],
      });
      const failed = claims.append({
        stream: `${ws}-b`,
        events: [named('free+held')],
        expectedRevision: 0n,
        take: [free, held],
        release: [mine],
      });
      await expect(failed).rejects.toBeInstanceOf(ClaimTakenError);
      await expect(failed).rejects.toMatchObject({ value: 'held', owner: `${ws}-a` });
      expect((await store.readStream(`${ws}-b`)).map((e) => e.data)).toEqual([{ value: 'mine' }]);
      expect(await claims.ownerOf(ws, NAME_CLAIM, 'free')).toBeUndefined();
      expect(await claims.ownerOf(ws, NAME_CLAIM, 'mine')).toBe(`${ws}-b`);
    });

    it('takes no claim when the append loses on its expected revision', async () => {
      const ws = scope();
      const ref = { scope: ws, kind: NAME_CLAIM, value: 'late' };
      await store.append(`${ws}-a`, [named(null)]);
      await expect(
        claims.append({
          stream: `${ws}-a`,
          events: [named('late')],
          expectedRevision: 'no_stream',
          take: [ref],
        }),
      ).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      expect(await claims.ownerOf(ws, NAME_CLAIM, 'late')).toBeUndefined();
      await claims.append({
        stream: `${ws}-b`,
        events: [named('late')],
        expectedRevision: 'no_stream',
        take: [ref],
      });
      expect(await claims.ownerOf(ws, NAME_CLAIM, 'late')).toBe(`${ws}-b`);
    });

    describe('appendMany', () => {
      const ref = (ws: string, value: string) => ({ scope: ws, kind: NAME_CLAIM, value });
      const written = async (stream: string) => (await store.readStream(stream)).map((e) => e.data);

      if (!options.atomicMany) {
        it('is not offered: the store has no multi-stream transaction', () => {
          expect(claims.appendMany).toBeUndefined();
        });
        return;
      }

      it('creates several owners with their claims in one write, results in request order', async () => {
        const ws = scope();
        const results = await claims.appendMany!([
          { stream: `${ws}-a`, events: [named('a1')], expectedRevision: 'no_stream', take: [ref(ws, 'a1')] },
          {
            stream: `${ws}-b`,
            events: [named('b1'), named('b1')],
            expectedRevision: 'no_stream',
            take: [ref(ws, 'b1'), ref(ws, 'b2')],
          },
          { stream: `${ws}-c`, events: [named(null)], expectedRevision: 'no_stream' },
        ]);
        expect(results.map((r) => r.events.map((e) => e.streamName))).toEqual([
          [`${ws}-a`],
          [`${ws}-b`, `${ws}-b`],
          [`${ws}-c`],
        ]);
        expect(results.map((r) => r.nextExpectedRevision)).toEqual([0n, 1n, 0n]);
        expect(await written(`${ws}-b`)).toEqual([{ value: 'b1' }, { value: 'b1' }]);
        expect(await claims.ownerOf(ws, NAME_CLAIM, 'a1')).toBe(`${ws}-a`);
        expect(await claims.ownerOf(ws, NAME_CLAIM, 'b2')).toBe(`${ws}-b`);
      });

      it('moves a value from an existing owner to a new one in the same write', async () => {
        const ws = scope();
        const old = `${ws}-old`;
        await claims.append({
          stream: old,
          events: [named('v')],
          expectedRevision: 'no_stream',
          take: [ref(ws, 'v')],
        });
        await claims.appendMany!([
          { stream: old, events: [named(null)], expectedRevision: 0n, release: [ref(ws, 'v')] },
          { stream: `${ws}-new`, events: [named('v')], expectedRevision: 'no_stream', take: [ref(ws, 'v')] },
        ]);
        expect(await claims.ownerOf(ws, NAME_CLAIM, 'v')).toBe(`${ws}-new`);
        expect(await written(old)).toEqual([{ value: 'v' }, { value: null }]);
      });

      it('writes no stream and changes no claim when one value is taken', async () => {
        const ws = scope();
        await claims.append({
          stream: `${ws}-x`,
          events: [named('held')],
          expectedRevision: 'no_stream',
          take: [ref(ws, 'held')],
        });
        await claims.append({
          stream: `${ws}-y`,
          events: [named('y')],
          expectedRevision: 'no_stream',
          take: [ref(ws, 'y')],
        });
        const failed = claims.appendMany!([
          { stream: `${ws}-y`, events: [named(null)], expectedRevision: 0n, release: [ref(ws, 'y')] },
          {
            stream: `${ws}-a`,
            events: [named('free')],
            expectedRevision: 'no_stream',
            take: [ref(ws, 'free')],
          },
          {
            stream: `${ws}-b`,
            events: [named('held')],
            expectedRevision: 'no_stream',
            take: [ref(ws, 'held')],
          },
        ]);
        await expect(failed).rejects.toBeInstanceOf(ClaimTakenError);
        await expect(failed).rejects.toMatchObject({ value: 'held', owner: `${ws}-x` });
        expect(await written(`${ws}-a`)).toEqual([]);
        expect(await written(`${ws}-b`)).toEqual([]);
        expect(await written(`${ws}-y`)).toEqual([{ value: 'y' }]);
        expect(await claims.ownerOf(ws, NAME_CLAIM, 'free')).toBeUndefined();
        expect(await claims.ownerOf(ws, NAME_CLAIM, 'y')).toBe(`${ws}-y`);
      });

      it('names the holder when new owners meet a value already held, and writes nothing', async () => {
        const ws = scope();
        await claims.append({
          stream: `${ws}-x`,
          events: [named('held')],
          expectedRevision: 'no_stream',
          take: [ref(ws, 'held')],
        });
        const failed = claims.appendMany!([
          {
            stream: `${ws}-a`,
            events: [named('free')],
            expectedRevision: 'no_stream',
            take: [ref(ws, 'free')],
          },
          {
            stream: `${ws}-b`,
            events: [named('held')],
            expectedRevision: 'no_stream',
            take: [ref(ws, 'other'), ref(ws, 'held')],
          },
        ]);
        await expect(failed).rejects.toBeInstanceOf(ClaimTakenError);
        await expect(failed).rejects.toMatchObject({ value: 'held', owner: `${ws}-x` });
        expect(await written(`${ws}-a`)).toEqual([]);
        expect(await written(`${ws}-b`)).toEqual([]);
        expect(await claims.ownerOf(ws, NAME_CLAIM, 'free')).toBeUndefined();
        expect(await claims.ownerOf(ws, NAME_CLAIM, 'other')).toBeUndefined();
        expect(await claims.ownerOf(ws, NAME_CLAIM, 'held')).toBe(`${ws}-x`);
      });

      it('writes nothing and takes no claim when one stream already exists', async () => {
        const ws = scope();
        await store.append(`${ws}-b`, [named(null)]);
        await expect(
          claims.appendMany!([
            { stream: `${ws}-a`, events: [named('v')], expectedRevision: 'no_stream', take: [ref(ws, 'v')] },
            { stream: `${ws}-b`, events: [named('w')], expectedRevision: 'no_stream', take: [ref(ws, 'w')] },
          ]),
        ).rejects.toBeInstanceOf(WrongExpectedRevisionError);
        expect(await written(`${ws}-a`)).toEqual([]);
        expect(await claims.ownerOf(ws, NAME_CLAIM, 'v')).toBeUndefined();
        expect(await claims.ownerOf(ws, NAME_CLAIM, 'w')).toBeUndefined();
      });

      it('of 20 concurrent writes sharing one value, exactly one lands, whole', async () => {
        const ws = scope();
        const outcomes = await Promise.allSettled(
          range(20).map((i) =>
            claims.appendMany!([
              {
                stream: `${ws}-own-${i}`,
                events: [named(`own-${i}`)],
                expectedRevision: 'no_stream',
                take: [ref(ws, `own-${i}`)],
              },
              {
                stream: `${ws}-shared-${i}`,
                events: [named('shared')],
                expectedRevision: 'no_stream',
                take: [ref(ws, 'shared')],
              },
            ]),
          ),
        );
        const won = range(20).filter((i) => outcomes[i].status === 'fulfilled');
        expect(won).toHaveLength(1);
        for (const o of outcomes)
          if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(ClaimTakenError);
        expect(await claims.ownerOf(ws, NAME_CLAIM, 'shared')).toBe(`${ws}-shared-${won[0]}`);
        for (const i of range(20)) {
          const landed = i === won[0];
          expect((await written(`${ws}-own-${i}`)).length).toBe(landed ? 1 : 0);
          expect(await claims.ownerOf(ws, NAME_CLAIM, `own-${i}`)).toBe(
            landed ? `${ws}-own-${i}` : undefined,
          );
        }
      });
    });
  });
}
