import { CLAIM_FENCED, ClaimKind, ClaimTakenError, defineClaimKind } from '../claims/claims';
import { InMemoryClaims } from '../claims/memory-claims';
import { InMemoryEventStore } from '../event-store/memory/in-memory-event-store';
import { event } from '../event-store/testing/event-store.test-helpers';
import { Decider } from './decider';
import { EventSourcedRepository } from './event-sourced-repository';

/** A tiny aggregate with a unique name, to hold the repository's claim path to its promises. */
type Named = { type: 'Named'; data: { name: string } };
type State = { name: string | null; changes: number };
const decider: Decider<State, { name: string }, Named> = {
  initialState: () => ({ name: null, changes: 0 }),
  evolve: (s, e) => ({ name: e.data.name, changes: s.changes + 1 }),
  decide: (c, s) => (c.name === s.name ? [] : [{ type: 'Named', data: { name: c.name } }]),
};
const NAME: ClaimKind = defineClaimKind({ name: 'spec_name', holds: () => true });
const ws = '0190a6c4-0000-7000-8000-000000000001';
const claimsOf = (events: Named[], before: State) => ({
  take: events.map((e) => ({ scope: ws, kind: NAME, value: e.data.name })),
  release: before.name ? [{ scope: ws, kind: NAME, value: before.name }] : [],
});

describe('EventSourcedRepository with claims', () => {
  let store: InMemoryEventStore;
  let claims: InMemoryClaims;
  let repo: EventSourcedRepository;
  beforeEach(() => {
    store = new InMemoryEventStore();
    claims = new InMemoryClaims(store);
    repo = new EventSourcedRepository(store, claims);
  });
  afterEach(() => store.close());

  const rename = (stream: string, name: string) =>
    repo.handle({ streamName: stream, workspaceId: ws, decider, command: { name }, claims: claimsOf });

  it('takes the claims the decided events carry and releases those they drop, with the append', async () => {
    await rename('thing-1', 'alpha');
    expect(await claims.ownerOf(ws, NAME, 'alpha')).toBe('thing-1');
    await rename('thing-1', 'beta');
    expect(await claims.ownerOf(ws, NAME, 'alpha')).toBeUndefined();
    expect(await claims.ownerOf(ws, NAME, 'beta')).toBe('thing-1');
  });

  it('appends nothing when a claim is held by another stream', async () => {
    await rename('thing-1', 'alpha');
    await expect(rename('thing-2', 'alpha')).rejects.toBeInstanceOf(ClaimTakenError);
    expect(await store.readStream('thing-2')).toEqual([]);
  });

  it("folds state without a takeover's fence, but appends after it", async () => {
    await rename('thing-1', 'alpha');
    await store.append('thing-1', [event(CLAIM_FENCED, { kind: 'spec_name', by: 'x', fencedAt: '' })]);
    const { state, revision } = await repo.load('thing-1', decider);
    expect(state).toEqual({ name: 'alpha', changes: 1 });
    expect(revision).toBe(1n);
    await rename('thing-1', 'gamma');
    expect((await store.readStream('thing-1')).map((e) => e.type)).toEqual(['Named', CLAIM_FENCED, 'Named']);
  });

  it('appends several streams with their claims in one write, stamped with the workspace', async () => {
    expect(repo.canAppendClaimedMany).toBe(true);
    expect(new EventSourcedRepository(store).canAppendClaimedMany).toBe(false);
    await rename('thing-1', 'alpha');
    await repo.appendClaimedMany(ws, [
      {
        streamName: 'thing-1',
        events: [{ type: 'Named', data: { name: 'beta' } }],
        expectedRevision: 0n,
        plan: claimsOf([{ type: 'Named', data: { name: 'beta' } }], { name: 'alpha', changes: 1 }),
      },
      {
        streamName: 'thing-2',
        events: [{ type: 'Named', data: { name: 'alpha' } }],
        expectedRevision: 'no_stream',
        plan: { take: [{ scope: ws, kind: NAME, value: 'alpha' }] },
      },
    ]);
    expect(await claims.ownerOf(ws, NAME, 'alpha')).toBe('thing-2');
    expect(await claims.ownerOf(ws, NAME, 'beta')).toBe('thing-1');
    const [second] = await store.readStream('thing-2');
    expect(second.metadata.workspaceId).toBe(ws);
  });

  it('makes the command from the state of each attempt, and decides first on the state the caller loaded', async () => {
    await rename('thing-1', 'alpha');
    const seen: (string | null)[] = [];
    const loaded = await repo.load('thing-1', decider);
    // A write lands between the caller's read and its append: the retry sees it and decides again.
    await rename('thing-1', 'beta');
    const result = await repo.handle({
      streamName: 'thing-1',
      workspaceId: ws,
      decider,
      loaded,
      command: {
        from: (state: State) => {
          seen.push(state.name);
          return { name: `${state.name}-2` };
        },
      },
      claims: claimsOf,
    });
    expect(seen).toEqual(['alpha', 'beta']);
    expect(result.state.name).toBe('beta-2');
    expect(await claims.ownerOf(ws, NAME, 'beta-2')).toBe('thing-1');
  });
});
