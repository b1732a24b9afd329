import type { ScanAllOptions, ScanAllResult, StoredEvent } from '../event-store/event-store.port';
import { matchesFilter } from '../event-store/event-store.port';
import { SharedScans, union } from './shared-scans';

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
