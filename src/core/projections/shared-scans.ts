import {
  comparePositions,
  EventFilter,
  matchesFilter,
  Position,
  ScanAllOptions,
  ScanAllResult,
  StoredEvent,
} from '../event-store/event-store.port';

/** Scans remembered for reads that start inside them (see `served`). */
const RECENT_SCANS = 4;

interface Scanned {
  after?: Position;
  scannedTo: Position;
  filter?: EventFilter;
  events: StoredEvent[];
}

interface Running {
  after?: Position;
  limit: number;
  filter?: EventFilter;
  done: Promise<ScanAllResult>;
}

interface Waiter {
  after?: Position;
  filter?: EventFilter;
  resolve(result: ScanAllResult): void;
  reject(error: unknown): void;
}

/**
 * One scan for the subscriber loops of a process that read from (about) the same position
 * at the same moment. Every member write wakes at least two projections (members and the
 * audit log); once both are caught up they read from the same head, and each ran its
 * own scan of the same events. Reads asked for in one turn of the event loop with the
 * same `limit` and positions less than half a `limit` apart become one scan, from the
 * earliest of them, with the union of their filters, and each gets the events its own
 * filter matches after its own position. What a scan looked at (`scannedTo`, `more`)
 * does not depend on its filter (EventStore.scanAll), and what lies below its end is
 * final, so each result is what a scan of its own would have returned, cut at the shared
 * scan's end: a read then simply reads on from there. (Loops drift apart by the events
 * one of them was not woken for, such as a reactor that handles no `DataTypeCreated`
 * and the projections that do: they then read the same events in two scans, one event
 * apart, until they meet again.) A read whose position the shared scan did not pass
 * scans again on its own.
 */
export class SharedScans {
  private pending = new Map<number, Waiter[]>();
  private scheduled = false;
  /** The last scans that found events, newest last, and those under way (see `served`). */
  private recent: Scanned[] = [];
  private running: Running[] = [];

  constructor(private readonly scanAll: (options: ScanAllOptions) => Promise<ScanAllResult>) {}

  scan(options: ScanAllOptions): Promise<ScanAllResult> {
    const answer = served(this.recent, options);
    if (answer) return Promise.resolve(answer);
    // A scan under way from at or a little before this position, for what this read wants:
    // wait for it and take this read's part, should it reach past this position.
    const under = this.running.find(
      (r) =>
        r.limit === options.limit &&
        covers(r.filter, options.filter) &&
        within(r.after, options.after, r.limit),
    );
    if (under)
      return under.done.then(
        () => served(this.recent, options) ?? this.queue(options),
        () => this.queue(options),
      );
    return this.queue(options);
  }

  private queue(options: ScanAllOptions): Promise<ScanAllResult> {
    let waiters = this.pending.get(options.limit);
    if (!waiters) {
      waiters = [];
      this.pending.set(options.limit, waiters);
    }
    const joined = waiters;
    const result = new Promise<ScanAllResult>((resolve, reject) =>
      joined.push({ after: options.after, filter: options.filter, resolve, reject }),
    );
    if (!this.scheduled) {
      this.scheduled = true;
      // After the current turn's promise jobs: loops woken by one append ask in that turn.
      setImmediate(() => this.run());
    }
    return result;
  }

  private run(): void {
    this.scheduled = false;
    const pending = this.pending;
    this.pending = new Map();
    for (const [limit, waiters] of pending)
      for (const group of near(waiters, limit)) void this.runGroup(group, limit);
  }

  private async runGroup(waiters: Waiter[], limit: number): Promise<void> {
    const after = waiters[0].after;
    const filter = union(waiters.map((w) => w.filter));
    const done = this.scanAll({ after, limit, filter });
    const running: Running = { after, limit, filter, done };
    this.running.push(running);
    let result: ScanAllResult;
    try {
      result = await done;
    } catch (error) {
      for (const w of waiters) w.reject(error);
      return;
    } finally {
      this.running = this.running.filter((r) => r !== running);
    }
    const { scannedTo } = result;
    // Kept before anyone waiting on `done` looks (their callbacks run after this one).
    if (scannedTo && result.events.length) {
      this.recent.push({ after, scannedTo, filter, events: result.events });
      if (this.recent.length > RECENT_SCANS) this.recent.shift();
    }
    const later: Waiter[] = [];
    for (const w of waiters) {
      if (samePosition(w.after, after)) {
        w.resolve(
          waiters.length === 1
            ? result
            : { ...result, events: result.events.filter((e) => matchesFilter(e, w.filter)) },
        );
        continue;
      }
      const from = w.after!;
      // Nothing readable after the earliest position: nothing after the later ones either.
      if (!scannedTo) w.resolve({ events: [], more: false });
      else if (comparePositions(from, scannedTo) >= 0) later.push(w);
      else
        w.resolve({
          ...result,
          events: result.events.filter(
            (e) => comparePositions(e.position, from) > 0 && matchesFilter(e, w.filter),
          ),
        });
    }
    if (later.length) await this.runGroup(later, limit);
  }
}

/**
 * A read that starts inside a range a recent scan looked at, for events that scan's filter
 * let through, is answered from it: the events after the read's position up to the scan's
 * end, with `more`, so that the loop reads on from there at once. Such a range is final
 * (the scan looked only below the store's horizon; whatever commits later sorts after it),
 * so the answer is what a scan of the store would find in it. A reactor, whose batches end
 * at other moments than the projections', so takes the events the projections read a
 * moment before (with their data) instead of reading them again.
 */
function served(recent: readonly Scanned[], options: ScanAllOptions): ScanAllResult | undefined {
  const { after, filter } = options;
  for (let i = recent.length - 1; i >= 0; i--) {
    const r = recent[i];
    if (!covers(r.filter, filter)) continue;
    // Inside: at or after the scan's start, before its end.
    if (r.after && (!after || comparePositions(after, r.after) < 0)) continue;
    if (after && comparePositions(after, r.scannedTo) >= 0) continue;
    const events = r.events.filter(
      (e) => (!after || comparePositions(e.position, after) > 0) && matchesFilter(e, filter),
    );
    return { events, scannedTo: r.scannedTo, more: true };
  }
  return undefined;
}

/** Whether every event `wanted` matches is one `scanned` matched. */
export function covers(scanned: EventFilter | undefined, wanted: EventFilter | undefined): boolean {
  if (!scanned) return true;
  if (!wanted) return false;
  const all = (outer: readonly string[] | undefined, inner: readonly string[] | undefined) =>
    !outer || (!!inner && inner.every((x) => outer.includes(x)));
  return all(scanned.eventTypes, wanted.eventTypes) && all(scanned.streamPrefixes, wanted.streamPrefixes);
}

/** Whether `later` is at `start` or less than half a `limit` of global positions after it. */
function within(start: Position | undefined, later: Position | undefined, limit: number): boolean {
  if (!start) return !later;
  if (!later || comparePositions(later, start) < 0) return false;
  return later.prepare - start.prepare < BigInt(Math.max(1, Math.floor(limit / 2)));
}

/**
 * The waiters in groups sorted by position, each starting at its earliest and taking those
 * less than half a `limit` of global positions after it (about as many events: a shared
 * scan of `limit` events then most likely reaches past all of them).
 */
function near(waiters: Waiter[], limit: number): Waiter[][] {
  const sorted = [...waiters].sort((a, b) =>
    !a.after ? (!b.after ? 0 : -1) : !b.after ? 1 : comparePositions(a.after, b.after),
  );
  const span = BigInt(Math.max(1, Math.floor(limit / 2)));
  const groups: Waiter[][] = [];
  for (const w of sorted) {
    const group = groups[groups.length - 1];
    const start = group?.[0].after;
    if (
      group &&
      (samePosition(start, w.after) || (start && w.after && w.after.prepare - start.prepare < span))
    )
      group.push(w);
    else groups.push([w]);
  }
  return groups;
}

function samePosition(a: Position | undefined, b: Position | undefined): boolean {
  return a === b || (!!a && !!b && comparePositions(a, b) === 0);
}

/** The filter matching every event one of `filters` matches (undefined: all events). */
export function union(filters: (EventFilter | undefined)[]): EventFilter | undefined {
  if (filters.length === 1) return filters[0];
  let eventTypes: Set<string> | undefined = new Set();
  let streamPrefixes: Set<string> | undefined = new Set();
  for (const f of filters) {
    if (!f) return undefined;
    if (!f.eventTypes) eventTypes = undefined;
    else f.eventTypes.forEach((t) => eventTypes?.add(t));
    if (!f.streamPrefixes) streamPrefixes = undefined;
    else f.streamPrefixes.forEach((p) => streamPrefixes?.add(p));
  }
  if (!eventTypes && !streamPrefixes) return undefined;
  return {
    ...(eventTypes ? { eventTypes: [...eventTypes] } : {}),
    ...(streamPrefixes ? { streamPrefixes: [...streamPrefixes] } : {}),
  };
}
