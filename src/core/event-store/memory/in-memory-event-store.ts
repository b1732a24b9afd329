import { v7 as uuidv7 } from 'uuid';
import {
  AppendResult,
  EventStore,
  EventSubscription,
  ExpectedRevision,
  NewEvent,
  NewStream,
  Position,
  ReadAllOptions,
  ReadStreamOptions,
  ScanAllOptions,
  ScanAllResult,
  StoredEvent,
  SubscribeOptions,
  WrongExpectedRevisionError,
  comparePositions,
  matchesFilter,
} from '../event-store.port';
import { createPollingSubscription } from '../polling-subscription';

/**
 * For unit tests only. Mirrors the PostgreSQL adapter's observable behaviour: data
 * goes through JSON (so a Date comes back as an ISO string, as it would from jsonb),
 * duplicate event ids are rejected, and an append is all-or-nothing.
 * Positions: commit = prepare = the global sequence, from 1.
 */
export class InMemoryEventStore implements EventStore {
  readonly kind = 'memory' as const;

  private readonly log: StoredEvent[] = [];
  private readonly streams = new Map<string, StoredEvent[]>();
  private readonly eventIds = new Set<string>();
  private readonly listeners = new Set<() => void>();
  private readonly subscriptions = new Set<EventSubscription>();
  private closed = false;

  async append(
    streamName: string,
    events: readonly NewEvent[],
    options: { expectedRevision?: ExpectedRevision } = {},
  ): Promise<AppendResult> {
    this.assertOpen();
    if (events.length === 0) throw new Error('append needs at least one event');
    const expected = options.expectedRevision ?? 'any';
    const stream = this.streams.get(streamName);
    const current = stream && stream.length > 0 ? BigInt(stream.length - 1) : undefined;
    const actual = current ?? 'no_stream';
    const ok =
      expected === 'any' ||
      (expected === 'no_stream' && current === undefined) ||
      (expected === 'stream_exists' && current !== undefined) ||
      (typeof expected === 'bigint' && current === expected);
    if (!ok) throw new WrongExpectedRevisionError(streamName, expected, actual);

    // Validate everything before storing anything, so a failed append leaves no trace.
    const ids = events.map((e) => e.id ?? uuidv7());
    const batchIds = new Set<string>();
    for (const id of ids) {
      if (this.eventIds.has(id) || batchIds.has(id)) throw new Error(`Event id ${id} is already stored`);
      batchIds.add(id);
    }
    const prepared = events.map((e, i) => ({
      id: ids[i],
      type: e.type,
      data: roundTrip(e.data ?? null),
      metadata: roundTrip(e.metadata),
    }));

    const target = stream ?? [];
    const stored: StoredEvent[] = prepared.map((e, i) => {
      const sequence = BigInt(this.log.length + i + 1);
      return {
        ...e,
        streamName,
        revision: BigInt(target.length + i),
        position: { commit: sequence, prepare: sequence },
      };
    });
    for (const event of stored) {
      this.log.push(event);
      target.push(event);
      this.eventIds.add(event.id);
    }
    this.streams.set(streamName, target);
    // Wake listeners after this call returns, as a real store's notification would.
    queueMicrotask(() => this.listeners.forEach((l) => l()));

    const last = stored[stored.length - 1];
    return { nextExpectedRevision: last.revision, position: last.position, events: stored.map(copy) };
  }

  async createStreams(streams: readonly NewStream[]): Promise<AppendResult[]> {
    this.assertOpen();
    const names = new Set<string>();
    const ids = new Set<string>();
    for (const { streamName, events } of streams) {
      if (events.length === 0) throw new Error(`createStreams: ${streamName} needs at least one event`);
      if (names.has(streamName)) throw new Error(`createStreams: ${streamName} is given twice`);
      names.add(streamName);
      const existing = this.streams.get(streamName);
      if (existing?.length)
        throw new WrongExpectedRevisionError(streamName, 'no_stream', BigInt(existing.length - 1));
      for (const e of events) {
        if (!e.id) continue;
        if (this.eventIds.has(e.id) || ids.has(e.id)) throw new Error(`Event id ${e.id} is already stored`);
        ids.add(e.id);
      }
    }
    // Everything is checked; each append below runs to completion synchronously, so no
    // other call interleaves and all streams land together.
    const results = streams.map((s) =>
      this.append(s.streamName, s.events, { expectedRevision: 'no_stream' }),
    );
    return Promise.all(results);
  }

  readStreams(streamNames: readonly string[]): Promise<StoredEvent[][]> {
    return Promise.all(streamNames.map((name) => this.readStream(name)));
  }

  async readStream(streamName: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> {
    this.assertOpen();
    const stream = this.streams.get(streamName) ?? [];
    const max = options.maxCount ?? Number.POSITIVE_INFINITY;
    if (options.direction === 'backwards') {
      const from = options.fromRevision ?? BigInt(stream.length - 1);
      const out: StoredEvent[] = [];
      for (let i = Math.min(Number(from), stream.length - 1); i >= 0 && out.length < max; i--)
        out.push(copy(stream[i]));
      return out;
    }
    const from = Number(options.fromRevision ?? 0n);
    const out: StoredEvent[] = [];
    for (let i = Math.max(from, 0); i < stream.length && out.length < max; i++) out.push(copy(stream[i]));
    return out;
  }

  async readAll(options: ReadAllOptions = {}): Promise<StoredEvent[]> {
    this.assertOpen();
    return this.readAllSync(options).map(copy);
  }

  async scanAll(options: ScanAllOptions): Promise<ScanAllResult> {
    this.assertOpen();
    const after = options.after;
    const events: StoredEvent[] = [];
    let scannedTo: StoredEvent | undefined;
    let looked = 0;
    const start = after ? Math.max(0, Number(after.prepare)) : 0;
    for (let i = start; i < this.log.length && looked < options.limit; i++) {
      const e = this.log[i];
      if (after && comparePositions(e.position, after) <= 0) continue;
      looked++;
      scannedTo = e;
      if (matchesFilter(e, options.filter)) events.push(copy(e));
    }
    return {
      events,
      scannedTo: scannedTo && { ...scannedTo.position },
      more: options.limit > 0 && looked >= options.limit,
    };
  }

  subscribe(options: SubscribeOptions = {}): EventSubscription {
    this.assertOpen();
    const subscription = createPollingSubscription(
      {
        poll: async (after, limit) => ({
          events: this.readAllSync({ after, maxCount: limit, filter: options.filter }).map(copy),
          heldBack: false,
        }),
        onAppended: (listener) => this.onAppended(listener),
      },
      { after: options.after, onEnd: () => this.subscriptions.delete(subscription) },
    );
    this.subscriptions.add(subscription);
    return subscription;
  }

  onAppended(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  async headPosition(): Promise<Position | undefined> {
    this.assertOpen();
    const last = this.log[this.log.length - 1];
    return last ? { ...last.position } : undefined;
  }

  async ping(): Promise<void> {
    this.assertOpen();
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.subscriptions].map((subscription) => subscription.close()));
    this.listeners.clear();
  }

  private readAllSync(options: ReadAllOptions): StoredEvent[] {
    const max = options.maxCount ?? Number.POSITIVE_INFINITY;
    const after = options.after;
    const out: StoredEvent[] = [];
    if (options.direction === 'backwards') {
      for (let i = this.log.length - 1; i >= 0 && out.length < max; i--) {
        const e = this.log[i];
        if (after && comparePositions(e.position, after) >= 0) continue;
        if (matchesFilter(e, options.filter)) out.push(e);
      }
      return out;
    }
    // Sequences are dense from 1, so a checkpoint maps straight to an array index.
    const start = after ? Math.max(0, Number(after.prepare)) : 0;
    for (let i = start; i < this.log.length && out.length < max; i++) {
      const e = this.log[i];
      if (after && comparePositions(e.position, after) <= 0) continue;
      if (matchesFilter(e, options.filter)) out.push(e);
    }
    return out;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('InMemoryEventStore is closed');
  }
}

function roundTrip<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** Readers get their own objects, so a consumer mutating an event cannot rewrite history. */
function copy(e: StoredEvent): StoredEvent {
  return {
    id: e.id,
    type: e.type,
    data: roundTrip(e.data),
    metadata: roundTrip(e.metadata),
    streamName: e.streamName,
    revision: e.revision,
    position: { ...e.position },
  };
}
