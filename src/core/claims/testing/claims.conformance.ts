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

export function describeClaimsConformance(name: string, factory: () => Promise<ClaimsFixture>): void {
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
  });
}
