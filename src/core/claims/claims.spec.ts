import { Pool } from 'pg';
import { createTestDatabase, TestDatabase } from '../../../test/support/database';
import { startEventStoreDbStandIn } from '../../../test/support/esdb-standin';
import type { EventStoreDbStandIn } from '../../../test/support/esdb-standin';
import { WrongExpectedRevisionError } from '../event-store/event-store.port';
import { EventStoreDbEventStore } from '../event-store/eventstoredb/eventstoredb-event-store';
import { InMemoryEventStore } from '../event-store/memory/in-memory-event-store';
import { PostgresEventStore } from '../event-store/postgres/postgres-event-store';
import { event, meta, uniq } from '../event-store/testing/event-store.test-helpers';
import { CLAIM_FENCED, ClaimKind, ClaimTakenError, defineClaimKind } from './claims';
import { InMemoryClaims } from './memory-claims';
import { PostgresClaims } from './postgres-claims';
import { claimStreamName, claimTaken, StreamClaims } from './stream-claims';
import { describeClaimsConformance, NAME_CLAIM, named } from './testing/claims.conformance';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describeClaimsConformance(
  'postgres (claims table in the append transaction)',
  async () => {
    const store = new PostgresEventStore({ connectionString: db.url, poolSize: 4 });
    const pool = new Pool({ connectionString: db.url, max: 10 });
    return {
      claims: new PostgresClaims(store, pool),
      store,
      teardown: async () => {
        await store.close();
        await pool.end();
      },
    };
  },
  { atomicMany: true },
);

describeClaimsConformance(
  'eventstoredb stand-in (claim streams)',
  async () => {
    const standIn = await startEventStoreDbStandIn();
    const store = new EventStoreDbEventStore({ connectionString: standIn.connectionString });
    return {
      claims: new StreamClaims(store, { graceMs: 60_000 }),
      store,
      teardown: async () => {
        await store.close();
        await standIn.stop();
      },
    };
  },
  { atomicMany: false },
);

describeClaimsConformance(
  'in memory',
  async () => {
    const store = new InMemoryEventStore();
    return { claims: new InMemoryClaims(store), store, teardown: () => store.close() };
  },
  { atomicMany: true },
);

describe('StreamClaims on the EventStoreDB stand-in: crashes between the claim and the append', () => {
  let standIn: EventStoreDbStandIn;
  let store: EventStoreDbEventStore;
  beforeAll(async () => {
    standIn = await startEventStoreDbStandIn();
    store = new EventStoreDbEventStore({ connectionString: standIn.connectionString });
  });
  afterAll(async () => {
    await store.close();
    await standIn.stop();
  });

  /** What a writer leaves behind when it dies after its claim, before its own append. */
  async function crashAfterClaim(ws: string, owner: string, value: string): Promise<void> {
    const ref = { scope: ws, kind: NAME_CLAIM, value };
    await store.append(claimStreamName(ref), [claimTaken(ref, owner, meta(), new Date())], {
      expectedRevision: 'no_stream',
    });
  }

  it('takes over an orphaned claim after the grace period and fences the dead owner', async () => {
    const claims = new StreamClaims(store, { graceMs: 300 });
    const ws = uniq();
    const ref = { scope: ws, kind: NAME_CLAIM, value: 'orphan' };
    await crashAfterClaim(ws, `${ws}-dead`, 'orphan');
    await claims.append({
      stream: `${ws}-next`,
      events: [named('orphan')],
      expectedRevision: 'no_stream',
      take: [ref],
    });
    expect(await claims.ownerOf(ws, NAME_CLAIM, 'orphan')).toBe(`${ws}-next`);
    // The dead owner's stream was fenced at no_stream: its append, had it only been slow, now fails.
    expect((await store.readStream(`${ws}-dead`)).map((e) => e.type)).toEqual([CLAIM_FENCED]);
    await expect(
      store.append(`${ws}-dead`, [named('orphan')], { expectedRevision: 'no_stream' }),
    ).rejects.toBeInstanceOf(WrongExpectedRevisionError);
  });

  it('waits for a young claim whose owner is still writing, and then refuses the value', async () => {
    const claims = new StreamClaims(store, { graceMs: 60_000, pollMs: 10 });
    const ws = uniq();
    const ref = { scope: ws, kind: NAME_CLAIM, value: 'busy' };
    await crashAfterClaim(ws, `${ws}-slow`, 'busy');
    const attempt = claims.append({
      stream: `${ws}-other`,
      events: [named('busy')],
      expectedRevision: 'no_stream',
      take: [ref],
    });
    // The slow owner's append lands while the other waits on the claim.
    await store.append(`${ws}-slow`, [named('busy')], { expectedRevision: 'no_stream' });
    await expect(attempt).rejects.toBeInstanceOf(ClaimTakenError);
    await expect(attempt).rejects.toMatchObject({ owner: `${ws}-slow` });
    expect(await store.readStream(`${ws}-other`)).toEqual([]);
  });

  it('takes a released value at once, without fencing the owner that gave it up', async () => {
    const claims = new StreamClaims(store, { graceMs: 60_000 });
    const ws = uniq();
    const ref = { scope: ws, kind: NAME_CLAIM, value: 'old' };
    await claims.append({
      stream: `${ws}-a`,
      events: [named('old')],
      expectedRevision: 'no_stream',
      take: [ref],
    });
    await claims.append({ stream: `${ws}-a`, events: [named('new')], expectedRevision: 0n, release: [ref] });
    await claims.append({
      stream: `${ws}-b`,
      events: [named('old')],
      expectedRevision: 'no_stream',
      take: [ref],
    });
    expect(await claims.ownerOf(ws, NAME_CLAIM, 'old')).toBe(`${ws}-b`);
    expect((await store.readStream(`${ws}-a`)).map((e) => e.type)).toEqual(['Named', 'Named']);
  });
});

describe('StreamClaims with a kind that keeps its earlier claim streams', () => {
  let standIn: EventStoreDbStandIn;
  let store: EventStoreDbEventStore;
  beforeAll(async () => {
    standIn = await startEventStoreDbStandIn();
    store = new EventStoreDbEventStore({ connectionString: standIn.connectionString });
  });
  afterAll(async () => {
    await store.close();
    await standIn.stop();
  });

  type Old = { holder: string; when: string };
  /** The format a feature wrote before core claims: its own stream name and event types. */
  const OLD_KIND: ClaimKind = defineClaimKind({
    name: 'test_old',
    holds: (events, value) => NAME_CLAIM.holds(events, value, ''),
    streamFormat: {
      streamName: (ref) => `old-claim-${ref.scope}-${ref.value}`,
      read: (e) => {
        const { holder, when } = e.data as Old;
        if (e.type === 'OldClaimed') return { taken: true, owner: holder, at: when };
        if (e.type === 'OldReleased') return { taken: false, owner: holder, at: when };
        return undefined;
      },
      write: (_ref, change) => ({
        type: change.taken ? 'OldClaimed' : 'OldReleased',
        data: { holder: change.owner, when: change.at },
      }),
    },
  });

  it('honours a claim written in the old format, and writes new changes in it', async () => {
    const claims = new StreamClaims(store, { graceMs: 60_000 });
    const ws = uniq();
    const ref = { scope: ws, kind: OLD_KIND, value: 'kept' };
    const oldStream = `old-claim-${ws}-kept`;
    // Written before the move: the owner carries the value, the claim is its old event.
    await store.append(`${ws}-a`, [named('kept')]);
    await store.append(oldStream, [
      event('OldClaimed', { holder: `${ws}-a`, when: new Date().toISOString() }),
    ]);
    expect(await claims.ownerOf(ws, OLD_KIND, 'kept')).toBe(`${ws}-a`);
    await expect(
      claims.append({
        stream: `${ws}-b`,
        events: [named('kept')],
        expectedRevision: 'no_stream',
        take: [ref],
      }),
    ).rejects.toMatchObject({ owner: `${ws}-a` });
    await claims.append({ stream: `${ws}-a`, events: [named(null)], expectedRevision: 0n, release: [ref] });
    await claims.append({
      stream: `${ws}-b`,
      events: [named('kept')],
      expectedRevision: 'no_stream',
      take: [ref],
    });
    expect(await claims.ownerOf(ws, OLD_KIND, 'kept')).toBe(`${ws}-b`);
    expect((await store.readStream(oldStream)).map((e) => [e.type, (e.data as Old).holder])).toEqual([
      ['OldClaimed', `${ws}-a`],
      ['OldReleased', `${ws}-a`],
      ['OldClaimed', `${ws}-b`],
    ]);
    expect(await store.readStream(claimStreamName({ scope: ws, kind: NAME_CLAIM, value: 'kept' }))).toEqual(
      [],
    );
  });
});

describe('PostgresClaims: a new owner with its claims', () => {
  let store: PostgresEventStore;
  let pool: Pool;
  let claims: PostgresClaims;
  beforeAll(() => {
    store = new PostgresEventStore({ connectionString: db.url, poolSize: 2 });
    pool = new Pool({ connectionString: db.url, max: 2 });
    claims = new PostgresClaims(store, pool);
  });
  afterAll(async () => {
    await store.close();
    await pool.end();
  });

  it('is written in the one statement that creates its stream, with no transaction of its own', async () => {
    const ws = uniq();
    const ref = { scope: ws, kind: NAME_CLAIM, value: 'solo' };
    const connect = jest.spyOn(pool, 'connect');
    const result = await claims.append({
      stream: `${ws}-a`,
      events: [named('solo'), named('solo')],
      expectedRevision: 'no_stream',
      take: [ref, ref],
    });
    expect(connect).not.toHaveBeenCalled();
    expect(result.nextExpectedRevision).toBe(1n);
    expect(result.events.map((e) => [e.streamName, e.revision])).toEqual([
      [`${ws}-a`, 0n],
      [`${ws}-a`, 1n],
    ]);
    expect(await claims.ownerOf(ws, NAME_CLAIM, 'solo')).toBe(`${ws}-a`);
    // A conflict still names the holder (through the transaction) and writes nothing.
    await expect(
      claims.append({
        stream: `${ws}-b`,
        events: [named('solo')],
        expectedRevision: 'no_stream',
        take: [ref],
      }),
    ).rejects.toMatchObject({ owner: `${ws}-a`, value: 'solo' });
    expect(await store.readStream(`${ws}-b`)).toEqual([]);
    connect.mockRestore();
  });
});
