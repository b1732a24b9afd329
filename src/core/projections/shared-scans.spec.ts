import type { ScanAllOptions, ScanAllResult, StoredEvent } from '../event-store/event-store.port';
import { matchesFilter } from '../event-store/event-store.port';
import { covers, SharedScans, union } from './shared-scans';

function stored(i: number, type: string, streamName: string): StoredEvent {
  return {
    id: `e${i}`,
    type,
    data: {},
    metadata: {} as StoredEvent['metadata'],
    streamName,
    revision: 0n,
    position: { commit: BigInt(i), prepare: BigInt(i) },
  };
}

const log = [
  stored(1, 'A', 'member-1'),
  stored(2, 'B', 'role-1'),
  stored(3, 'C', 'member-2'),
  stored(4, 'A', 'role-2'),
];

/** scanAll over `log` as the store defines it: look at `limit` events, return those matching. */
function fakeStore() {
  const calls: ScanAllOptions[] = [];
  const scanAll = (o: ScanAllOptions): Promise<ScanAllResult> => {
    calls.push(o);
    const from = log.findIndex((e) => !o.after || e.position.commit > o.after.commit);
    const looked = from < 0 ? [] : log.slice(from, from + o.limit);
    return Promise.resolve({
      events: looked.filter((e) => matchesFilter(e, o.filter)),
      scannedTo: looked.length ? looked[looked.length - 1].position : undefined,
      more: looked.length >= o.limit,
    });
  };
  return { calls, scanAll };
}

describe('SharedScans', () => {
  it('answers reads from one position in one turn with one scan, each with what its own scan returns', async () => {
    const store = fakeStore();
    const shared = new SharedScans(store.scanAll);
    const filters = [{ eventTypes: ['A'] }, undefined, { streamPrefixes: ['role-'] }, { eventTypes: ['C'] }];
    const results = await Promise.all(filters.map((filter) => shared.scan({ limit: 3, filter })));
    expect(store.calls).toHaveLength(1);
    const alone = fakeStore();
    const expected = await Promise.all(filters.map((filter) => alone.scanAll({ limit: 3, filter })));
    expect(results).toEqual(expected);
    expect(results.map((r) => r.events.map((e) => e.id))).toEqual([
      ['e1'],
      ['e1', 'e2', 'e3'],
      ['e2'],
      ['e3'],
    ]);
  });

  it('scans separately from different positions or limits', async () => {
    const store = fakeStore();
    const shared = new SharedScans(store.scanAll);
    const [a, b, c] = await Promise.all([
      shared.scan({ limit: 2 }),
      shared.scan({ limit: 2, after: { commit: 2n, prepare: 2n } }),
      shared.scan({ limit: 1 }),
    ]);
    expect(store.calls).toHaveLength(3);
    expect(a.events.map((e) => e.id)).toEqual(['e1', 'e2']);
    expect(b.events.map((e) => e.id)).toEqual(['e3', 'e4']);
    expect(c).toMatchObject({ more: true, scannedTo: { commit: 1n } });
  });

  it('shares one scan between reads from nearby positions, each getting what lies after its own', async () => {
    const store = fakeStore();
    const shared = new SharedScans(store.scanAll);
    const at = (i: number) => ({ commit: BigInt(i), prepare: BigInt(i) });
    const [a, b, c] = await Promise.all([
      shared.scan({ limit: 6, after: at(1), filter: { eventTypes: ['A', 'C'] } }),
      shared.scan({ limit: 6, after: at(2) }),
      shared.scan({ limit: 6, after: at(3), filter: { eventTypes: ['A'] } }),
    ]);
    expect(store.calls).toHaveLength(1);
    expect(store.calls[0]).toMatchObject({ after: at(1), limit: 6 });
    expect(a.events.map((e) => e.id)).toEqual(['e3', 'e4']);
    expect(b.events.map((e) => e.id)).toEqual(['e3', 'e4']);
    expect(c.events.map((e) => e.id)).toEqual(['e4']);
    for (const r of [a, b, c]) expect(r).toMatchObject({ scannedTo: at(4), more: false });
  });

  it('scans again for a read the shared scan did not pass', async () => {
    const store = fakeStore();
    const shared = new SharedScans(store.scanAll);
    const at = (i: number) => ({ commit: BigInt(i), prepare: BigInt(i) });
    const [early, late] = await Promise.all([
      shared.scan({ limit: 4, after: at(0) }),
      shared.scan({ limit: 4, after: at(1) }),
    ]);
    // Both asked in one turn, less than half a limit apart: one scan from 0, which stops at 4 (the
    // limit) past the later read's position, so no second scan.
    expect(store.calls).toHaveLength(1);
    expect(early.events.map((e) => e.id)).toEqual(['e1', 'e2', 'e3', 'e4']);
    expect(late).toMatchObject({ more: true, scannedTo: at(4) });
    expect(late.events.map((e) => e.id)).toEqual(['e2', 'e3', 'e4']);

    const short = fakeStore();
    const alone = new SharedScans((o) =>
      short.scanAll({ ...o, limit: o.after?.prepare === 0n ? 1 : o.limit }),
    );
    const [first, second] = await Promise.all([
      alone.scan({ limit: 4, after: at(0) }),
      alone.scan({ limit: 4, after: at(1) }),
    ]);
    // The shared scan ended at 1, where the later read starts: it gets a scan of its own.
    expect(short.calls.map((o) => o.after)).toEqual([at(0), at(1)]);
    expect(first.events.map((e) => e.id)).toEqual(['e1']);
    expect(second.events.map((e) => e.id)).toEqual(['e2', 'e3', 'e4']);
  });

  it('answers a later read inside a range a recent scan looked at from that scan, reading on from its end', async () => {
    const store = fakeStore();
    const shared = new SharedScans(store.scanAll);
    const at = (i: number) => ({ commit: BigInt(i), prepare: BigInt(i) });
    const first = await shared.scan({ limit: 3, after: at(0) });
    expect(first.events.map((e) => e.id)).toEqual(['e1', 'e2', 'e3']);
    expect(store.calls).toHaveLength(1);
    // A turn later, from inside the range (a reactor following the projections): no scan,
    // the events after its position, and `more` so that it reads on at once.
    const later = await shared.scan({ limit: 3, after: at(1), filter: { eventTypes: ['C'] } });
    expect(store.calls).toHaveLength(1);
    expect(later).toEqual({ events: [log[2]], scannedTo: at(3), more: true });
    // From the range's end, a scan of the store.
    const next = await shared.scan({ limit: 3, after: at(3) });
    expect(store.calls).toHaveLength(2);
    expect(next.events.map((e) => e.id)).toEqual(['e4']);

    // A range scanned for some types only answers no read for others.
    const narrow = fakeStore();
    const only = new SharedScans(narrow.scanAll);
    await only.scan({ limit: 3, after: at(0), filter: { eventTypes: ['A'] } });
    const other = await only.scan({ limit: 3, after: at(0), filter: { eventTypes: ['A', 'B'] } });
    expect(narrow.calls).toHaveLength(2);
    expect(other.events.map((e) => e.id)).toEqual(['e1', 'e2']);
  });

  it('lets a read wait for a scan under way from its position and answers it from that scan', async () => {
    const store = fakeStore();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const shared = new SharedScans(async (o) => {
      await gate;
      return store.scanAll(o);
    });
    const at = (i: number) => ({ commit: BigInt(i), prepare: BigInt(i) });
    const first = shared.scan({ limit: 3, after: at(0) });
    await new Promise((resolve) => setImmediate(resolve));
    const second = shared.scan({ limit: 3, after: at(0), filter: { eventTypes: ['B'] } });
    release();
    expect((await first).events.map((e) => e.id)).toEqual(['e1', 'e2', 'e3']);
    expect((await second).events.map((e) => e.id)).toEqual(['e2']);
    expect(store.calls).toHaveLength(1);
  });

  it('tells which filters a scanned filter covers', () => {
    expect(covers(undefined, { eventTypes: ['A'] })).toBe(true);
    expect(covers({ eventTypes: ['A'] }, undefined)).toBe(false);
    expect(covers({ eventTypes: ['A', 'B'] }, { eventTypes: ['B'] })).toBe(true);
    expect(covers({ eventTypes: ['A'] }, { eventTypes: ['A', 'B'] })).toBe(false);
    expect(covers({ eventTypes: ['A'] }, { streamPrefixes: ['m-'] })).toBe(false);
    expect(covers({ streamPrefixes: ['m-'] }, { eventTypes: ['A'], streamPrefixes: ['m-'] })).toBe(true);
  });

  it('fails every read of a scan that fails', async () => {
    const shared = new SharedScans(() => Promise.reject(new Error('down')));
    const reads = [shared.scan({ limit: 5 }), shared.scan({ limit: 5, filter: { eventTypes: ['A'] } })];
    for (const r of reads) await expect(r).rejects.toThrow('down');
  });

  it('unites filters into one that matches whatever any of them matches', () => {
    expect(union([{ eventTypes: ['A'] }, { eventTypes: ['B', 'A'] }])).toEqual({ eventTypes: ['A', 'B'] });
    expect(union([{ eventTypes: ['A'] }, undefined])).toBeUndefined();
    expect(union([{ eventTypes: ['A'] }, { streamPrefixes: ['role-'] }])).toBeUndefined();
    expect(
      union([
        { eventTypes: ['A'], streamPrefixes: ['m-'] },
        { eventTypes: ['B'], streamPrefixes: ['r-'] },
      ]),
    ).toEqual({ eventTypes: ['A', 'B'], streamPrefixes: ['m-', 'r-'] });
  });
});
