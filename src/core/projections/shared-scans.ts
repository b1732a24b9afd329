import {
  EventFilter,
  matchesFilter,
  Position,
  ScanAllOptions,
  ScanAllResult,
} from '../event-store/event-store.port';

interface Waiter {
  filter?: EventFilter;
  resolve(result: ScanAllResult): void;
  reject(error: unknown): void;
}

interface Group {
  after?: Position;
  limit: number;
  waiters: Waiter[];
}

/**
 * One scan for the subscriber loops of a process that read from the same position at
 * the same moment. Every member write wakes at least two projections (members and the
 * audit log); once both are caught up they read from the same head, and each ran its
 * own scan of the same events. Reads asked for in one turn of the event loop with the
 * same `after` and `limit` become one scan with the union of their filters, and each
 * gets the events its own filter matches. What a scan looked at (`scannedTo`, `more`)
 * does not depend on its filter (EventStore.scanAll), so each result is exactly what a
 * scan of its own, made at that moment, would have returned.
 */
export class SharedScans {
  private pending = new Map<string, Group>();
  private scheduled = false;

  constructor(private readonly scanAll: (options: ScanAllOptions) => Promise<ScanAllResult>) {}

  scan(options: ScanAllOptions): Promise<ScanAllResult> {
    const key = `${options.after?.commit ?? ''}:${options.after?.prepare ?? ''}:${options.limit}`;
    let group = this.pending.get(key);
    if (!group) {
      group = { after: options.after, limit: options.limit, waiters: [] };
      this.pending.set(key, group);
    }
    const joined = group;
    const result = new Promise<ScanAllResult>((resolve, reject) =>
      joined.waiters.push({ filter: options.filter, resolve, reject }),
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
    const groups = [...this.pending.values()];
    this.pending = new Map();
    for (const group of groups) void this.runGroup(group);
  }

  private async runGroup({ after, limit, waiters }: Group): Promise<void> {
    try {
      const result = await this.scanAll({ after, limit, filter: union(waiters.map((w) => w.filter)) });
      for (const w of waiters)
        w.resolve(
          waiters.length === 1
            ? result
            : { ...result, events: result.events.filter((e) => matchesFilter(e, w.filter)) },
        );
    } catch (error) {
      for (const w of waiters) w.reject(error);
    }
  }
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
