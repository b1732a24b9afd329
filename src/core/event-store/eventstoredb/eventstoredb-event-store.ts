import {
  ANY,
  BACKWARDS,
  END,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  StreamNotFoundError,
  WrongExpectedVersionError,
  jsonEvent,
} from '@eventstore/db-client';
import type {
  AppendExpectedRevision,
  AppendResult as ClientAppendResult,
  JSONType,
  ResolvedEvent,
} from '@eventstore/db-client';
import { v7 as uuidv7, validate as isUuid } from 'uuid';
import {
  AppendResult,
  EventFilter,
  EventMetadata,
  EventStore,
  EventSubscription,
  ExpectedRevision,
  NewEvent,
  Position,
  ReadAllOptions,
  ReadStreamOptions,
  ScanAllOptions,
  ScanAllResult,
  StoredEvent,
  SubscribeOptions,
  WrongExpectedRevisionError,
  matchesFilter,
} from '../event-store.port';
import { AppendNotifier } from './eventstoredb-append-notifier';
import {
  NO_POSITION,
  isStrictlyAfter,
  isStrictlyBefore,
  ourEvent,
  serverFilter,
  toStoredEvent,
} from './eventstoredb-mapping';
import { EventStoreDbSubscription } from './eventstoredb-subscription';

/** $all is read in pages of this many events when the result is filtered here. */
const MAX_PAGE = 1000;
const PING_TIMEOUT_MS = 5000;

/**
 * The EventStoreDB adapter (production, EVENT_STORE=eventstoredb). Streams map one to
 * one, our event id is the EventStoreDB event id, data and our metadata are its JSON
 * data and JSON metadata, positions are its {commit, prepare} log positions.
 *
 * Two things the 6.2.1 client cannot do are done here instead:
 * - readAll takes no server-side filter, so filtered reads page through $all and filter
 *   in the adapter (subscriptions do filter on the server). scanAll reads the same way
 *   but stops after a number of events looked at and says where, so a batch reader of
 *   rare event types need not read the same unmatched tail of $all again.
 * - an append reports one position for the whole write, not per event, so the events of
 *   a multi-event append are read back by revision to hand out the exact positions that
 *   readAll and subscriptions will show (a projection's read-your-writes wait compares
 *   them). A single-event write's position is that event's, so it needs no read-back.
 */
export class EventStoreDbEventStore implements EventStore {
  readonly kind = 'eventstoredb' as const;

  private readonly client: EventStoreDBClient;
  private readonly notifier: AppendNotifier;
  private readonly subscriptions = new Set<EventStoreDbSubscription>();
  private closed = false;

  constructor(options: { connectionString: string }) {
    this.client = EventStoreDBClient.connectionString(options.connectionString);
    this.notifier = new AppendNotifier(this.client);
  }

  async append(
    streamName: string,
    events: readonly NewEvent[],
    options: { expectedRevision?: ExpectedRevision } = {},
  ): Promise<AppendResult> {
    this.assertOpen();
    if (events.length === 0) throw new Error('append needs at least one event');
    const expected = options.expectedRevision ?? 'any';
    const proposed = events.map((e) => {
      // EventStoreDB keys events by uuid and hands them back in lower case.
      const id = (e.id ?? uuidv7()).toLowerCase();
      if (!isUuid(id)) throw new Error(`Event id ${id} is not a uuid`);
      return jsonEvent({
        id,
        type: e.type,
        data: (e.data ?? null) as JSONType,
        metadata: e.metadata as unknown as JSONType,
      });
    });

    let written: ClientAppendResult;
    try {
      written = await this.client.appendToStream(streamName, proposed, {
        expectedRevision: toClientExpected(expected),
      });
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        throw new WrongExpectedRevisionError(streamName, expected, error.actualVersion);
      }
      throw error;
    }

    const last = written.nextExpectedRevision;
    if (events.length === 1 && written.position) {
      // A write of one event is reported at that event's own position: no read-back.
      const [only] = proposed;
      const position = { commit: written.position.commit, prepare: written.position.prepare };
      return {
        nextExpectedRevision: last,
        position,
        events: [
          {
            id: only.id,
            type: only.type,
            // As a reader will get them back: through JSON.
            data: JSON.parse(JSON.stringify(only.data)) as unknown,
            metadata: JSON.parse(JSON.stringify(only.metadata)) as EventMetadata,
            streamName,
            revision: last,
            position,
          },
        ],
      };
    }
    const stored = await this.readStream(streamName, {
      fromRevision: last - BigInt(events.length) + 1n,
      maxCount: events.length,
    });
    if (stored.length !== events.length || stored.some((e, i) => e.id !== proposed[i].id)) {
      throw new Error(
        `Appended to ${streamName} up to revision ${last}, but reading those revisions back returned other events`,
      );
    }
    if (written.position && stored.some((e) => e.position.commit === NO_POSITION)) {
      // Servers before 22.6 give no positions on stream reads: fall back to the write's.
      for (const event of stored) event.position = written.position;
    }
    return { nextExpectedRevision: last, position: stored[stored.length - 1].position, events: stored };
  }

  async readStream(streamName: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> {
    this.assertOpen();
    if (options.maxCount !== undefined && options.maxCount <= 0) return [];
    const backwards = options.direction === 'backwards';
    const read = this.client.readStream(streamName, {
      direction: backwards ? BACKWARDS : FORWARDS,
      fromRevision: options.fromRevision ?? (backwards ? END : START),
      maxCount: options.maxCount ?? Number.MAX_SAFE_INTEGER,
    });
    const events: StoredEvent[] = [];
    try {
      for await (const resolved of read as AsyncIterable<ResolvedEvent>) {
        if (resolved.event) events.push(toStoredEvent(resolved.event));
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    return events;
  }

  async readAll(options: ReadAllOptions = {}): Promise<StoredEvent[]> {
    this.assertOpen();
    const { events } = await this.scan({
      after: options.after,
      backwards: options.direction === 'backwards',
      filter: options.filter,
      wanted: options.maxCount ?? Number.POSITIVE_INFINITY,
      limit: Number.POSITIVE_INFINITY,
    });
    return events;
  }

  /**
   * Looks at up to `limit` events of $all after `after`. System events and ones of other
   * shapes are never returned but count as looked at, so `scannedTo` moves past them too.
   */
  async scanAll(options: ScanAllOptions): Promise<ScanAllResult> {
    this.assertOpen();
    if (options.limit <= 0) return { events: [], more: false };
    const scanned = await this.scan({
      after: options.after,
      backwards: false,
      filter: options.filter,
      wanted: Number.POSITIVE_INFINITY,
      limit: options.limit,
    });
    return { events: scanned.events, scannedTo: scanned.scannedTo, more: scanned.looked >= options.limit };
  }

  subscribe(options: SubscribeOptions = {}): EventSubscription {
    this.assertOpen();
    const source = this.client.subscribeToAll({
      fromPosition: options.after ?? START,
      filter: serverFilter(options.filter),
    });
    const subscription = new EventStoreDbSubscription(source, options, (closed) =>
      this.subscriptions.delete(closed),
    );
    this.subscriptions.add(subscription);
    return subscription;
  }

  onAppended(listener: () => void): () => void {
    this.assertOpen();
    return this.notifier.add(listener);
  }

  async headPosition(): Promise<Position | undefined> {
    const [newest] = await this.readAll({ direction: 'backwards', maxCount: 1 });
    return newest?.position;
  }

  async ping(): Promise<void> {
    this.assertOpen();
    const read = this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        read.cancel().catch(() => undefined);
        reject(new Error(`EventStoreDB did not answer within ${PING_TIMEOUT_MS} ms`));
      }, PING_TIMEOUT_MS);
    });
    try {
      await Promise.race([drain(read), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.notifier.close();
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    await this.client.dispose();
  }

  /**
   * The page loop behind readAll and scanAll: pages through $all from `after` (exclusive),
   * filtering here, until `wanted` events matched, `limit` events were looked at, or $all
   * ends. Every event with a position counts as looked at, ours or not.
   */
  private async scan(options: {
    after: Position | undefined;
    backwards: boolean;
    filter: EventFilter | undefined;
    wanted: number;
    limit: number;
  }): Promise<{ events: StoredEvent[]; scannedTo?: Position; looked: number }> {
    const { backwards, filter, wanted, limit } = options;
    const events: StoredEvent[] = [];
    let looked = 0;
    let scannedTo: Position | undefined;
    // The last position looked at, ours or not. Reading forwards from a position includes
    // the event there, so each page would repeat the previous one's last event: events
    // not strictly beyond the cursor are skipped, which also makes `after` exclusive.
    let cursor: Position | undefined = options.after;

    scanning: while (events.length < wanted && looked < limit) {
      const need = Math.min(wanted - events.length, limit - looked);
      const pageSize = Math.min(MAX_PAGE, Math.max(32, need + 1));
      const page = await this.readAllPage(cursor ?? (backwards ? END : START), backwards, pageSize);
      let moved = false;
      for (const resolved of page) {
        const position = resolved.event?.position;
        if (!position) continue;
        if (backwards ? !isStrictlyBefore(position, cursor) : !isStrictlyAfter(position, cursor)) continue;
        cursor = { commit: position.commit, prepare: position.prepare };
        scannedTo = cursor;
        moved = true;
        looked++;
        const event = ourEvent(resolved);
        if (event && matchesFilter(event, filter)) events.push(event);
        if (events.length >= wanted || looked >= limit) break scanning;
      }
      if (page.length < pageSize || !moved) break;
    }
    return { events, scannedTo, looked };
  }

  private async readAllPage(
    from: Position | typeof START | typeof END,
    backwards: boolean,
    maxCount: number,
  ): Promise<ResolvedEvent[]> {
    const read = this.client.readAll({
      direction: backwards ? BACKWARDS : FORWARDS,
      fromPosition: from,
      maxCount,
    });
    const page: ResolvedEvent[] = [];
    for await (const resolved of read as AsyncIterable<ResolvedEvent>) page.push(resolved);
    return page;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('The EventStoreDB event store is closed');
  }
}

function toClientExpected(expected: ExpectedRevision): AppendExpectedRevision {
  switch (expected) {
    case 'any':
      return ANY;
    case 'no_stream':
      return NO_STREAM;
    case 'stream_exists':
      return STREAM_EXISTS;
    default:
      return expected;
  }
}

async function drain(read: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of read) {
    // Only the answer matters.
  }
}
