import { ClientBase, DatabaseError, Pool, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import {
  AppendResult,
  EventFilter,
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
} from '../event-store.port';
import { statementName } from '../../database/prepared';
import { PollResult, createPollingSubscription } from '../polling-subscription';
import { PostgresAppendListener, ThrottledNotifier } from './postgres-append-listener';
import {
  AFTER_LAST,
  APPENDED_CHANNEL,
  BEFORE_FIRST,
  CURRENT_REVISION_SQL,
  EventRow,
  HEAD_POSITION_SQL,
  HELD_BACK_SQL,
  NOTIFY_SQL,
  READ_ALL_BACKWARDS_SQL,
  READ_ALL_FORWARDS_SQL,
  READ_STREAM_BACKWARDS_SQL,
  READ_STREAM_FORWARDS_SQL,
  READ_STREAMS_SQL,
  SCAN_ALL_SQL,
  ScanRow,
  createStreamsSql,
  appendGroupSql,
  appendSql,
  claimMode,
  toStoredEvent,
} from './postgres-event-store.sql';

export interface PostgresEventStoreOptions {
  connectionString: string;
  /** A shared pool; the store then leaves closing it to its owner. */
  pool?: Pool;
  /** Size of the pool the store creates when none is given (default 10). */
  poolSize?: number;
  /** Events per catch-up read of a subscription (default 1000). */
  subscriptionBatchSize?: number;
  /** Re-poll interval while an older open transaction holds committed events back (default 100 ms). */
  heldBackPollMs?: number;
  /** Poll interval of a caught-up subscription, should a notification be lost (default 1000 ms). */
  idlePollMs?: number;
  /** Least time between two notifications this store sends to other processes (default 5 ms). */
  notifyIntervalMs?: number;
  /**
   * Group commit (default on): autocommitted appends to distinct streams asked for in one
   * turn of the event loop go to the database as one statement (see `appendGroupSql`).
   */
  groupCommit?: boolean;
}

/** Attempts of an 'any' or 'stream_exists' append that keeps losing races before it gives up. */
const MAX_APPEND_ATTEMPTS = 10;
/** Most appends one group statement carries; more wait for the next. */
const MAX_GROUP = 64;
const SAVEPOINT = 'event_store_append';

interface AppendRow {
  global_position: string;
  transaction_id: string;
  stream_revision: string;
}

interface GroupRow {
  stream_name: string;
  global_position: string | null;
  transaction_id: string | null;
  stream_revision: string | null;
  last: string | null;
}

/**
 * One more data-modifying statement of a `createStreams` (see there). With `merge`, the
 * calls of one group that carry the same `sql` run it once, on their values merged by it
 * (each call's values as it gave them, in the order asked): the same rows it would write
 * for each call, in one statement.
 */
export interface AlsoStatement {
  sql: string;
  values: unknown[];
  merge?: (values: readonly unknown[][]) => unknown[];
}

/** An autocommitted createStreams waiting for its group's statement. */
interface QueuedCreate {
  streams: readonly NewStream[];
  also?: AlsoStatement;
  resolve(results: AppendResult[]): void;
  reject(error: unknown): void;
}

/** An autocommitted append waiting for its group's statement. */
interface QueuedAppend {
  streamName: string;
  events: readonly NewEvent[];
  expected: ExpectedRevision;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
}

/**
 * The default event store. Appends are one autocommitted statement (see
 * postgres-event-store.sql.ts); readers follow (transaction id, global position) below
 * the oldest running transaction, so a slow transaction is never skipped, only waited for.
 */
export class PostgresEventStore implements EventStore {
  readonly kind = 'postgres' as const;

  private readonly pool: Pool;
  private readonly ownsPool: boolean;
  private readonly listener: PostgresAppendListener;
  private readonly notifier: ThrottledNotifier;
  /** Open subscriptions, ended by close() so that none polls a closed pool. */
  private readonly subscriptions = new Set<EventSubscription>();
  private closed = false;
  /** Group commit: appends asked for and not yet sent, in the order asked. */
  private queued: QueuedAppend[] = [];
  private queuedCreates: QueuedCreate[] = [];
  /** Streams with an append in a statement under way: later appends to them wait for it. */
  private readonly busyStreams = new Set<string>();
  private flushScheduled = false;
  /** Group statements under way, and close()'s wait for the queue to drain. */
  private inFlight = 0;
  private drainWaiters: (() => void)[] = [];

  constructor(private readonly options: PostgresEventStoreOptions) {
    this.ownsPool = !options.pool;
    this.pool =
      options.pool ??
      new Pool({
        connectionString: options.connectionString,
        max: options.poolSize ?? 10,
        application_name: 'event-store',
        // An idle open transaction would hold back every subscriber in the cluster.
        idle_in_transaction_session_timeout: 10_000,
      });
    if (this.ownsPool) {
      // An idle client losing its connection must not crash the process; the next query reconnects.
      this.pool.on('error', () => undefined);
    }
    // The server processes of this store's pool: a notification one of them sent was
    // announced in process already (every append, createStreams and committed() fires the
    // local listeners with its types), so the LISTEN connection does not wake every loop
    // of the process again with no types. Connections the pool held before this store
    // was built (a shared pool) are not known: theirs still wake, as before.
    const own = new Set<number>();
    const pidOf = (client: unknown) => (client as { processID?: number }).processID;
    this.pool.on('connect', (client) => {
      const pid = pidOf(client);
      if (pid) own.add(pid);
    });
    this.pool.on('remove', (client) => {
      const pid = pidOf(client);
      if (pid) own.delete(pid);
    });
    this.listener = new PostgresAppendListener(options.connectionString, APPENDED_CHANNEL, (pid) =>
      own.has(pid),
    );
    this.notifier = new ThrottledNotifier(
      () => this.pool.query({ name: 'event_store_notify', text: NOTIFY_SQL }),
      options.notifyIntervalMs ?? 5,
    );
  }

  /**
   * An autocommitted append. With group commit, appends asked for in the same turn of the
   * event loop (concurrent requests) are sent together as one statement in one
   * transaction: each keeps its own expectation and its own outcome (a failed expectation
   * fails only that append, with WrongExpectedRevisionError), and each promise resolves
   * only once the statement has committed. Appends to one stream keep their order: one
   * waits while an earlier append to its stream is queued or under way. A group statement
   * the database refuses as a whole (a concurrent writer took a revision first, a bad
   * value in one append) writes nothing and is retried as one append at a time, so each
   * gets the outcome it would have had alone.
   */
  append(
    streamName: string,
    events: readonly NewEvent[],
    options: { expectedRevision?: ExpectedRevision } = {},
  ): Promise<AppendResult> {
    this.assertOpen();
    if (events.length === 0) return Promise.reject(new Error('append needs at least one event'));
    const expected = options.expectedRevision ?? 'any';
    if (this.options.groupCommit === false) return this.appendAlone(streamName, events, expected);
    return new Promise<AppendResult>((resolve, reject) => {
      this.queued.push({ streamName, events, expected, resolve, reject });
      this.scheduleFlush();
    });
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || (this.queued.length === 0 && this.queuedCreates.length === 0)) return;
    this.flushScheduled = true;
    // After the current turn's I/O callbacks and promise jobs: the appends of requests
    // handled in this turn join one statement.
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    for (;;) {
      const group: QueuedAppend[] = [];
      const waiting: QueuedAppend[] = [];
      for (const queued of this.queued) {
        if (group.length >= MAX_GROUP || this.busyStreams.has(queued.streamName)) waiting.push(queued);
        else {
          group.push(queued);
          this.busyStreams.add(queued.streamName);
        }
      }
      this.queued = waiting;
      if (group.length === 0) break;
      this.send(
        () => this.sendGroup(group),
        group.map((queued) => queued.streamName),
      );
    }
    // New streams: the calls with the same `also` statement (or none) go together.
    for (;;) {
      const groups = new Map<string, QueuedCreate[]>();
      const waiting: QueuedCreate[] = [];
      for (const queued of this.queuedCreates) {
        const key = queued.also?.sql ?? '';
        const group = groups.get(key) ?? [];
        if (group.length >= MAX_GROUP || queued.streams.some((s) => this.busyStreams.has(s.streamName))) {
          waiting.push(queued);
          continue;
        }
        for (const s of queued.streams) this.busyStreams.add(s.streamName);
        group.push(queued);
        groups.set(key, group);
      }
      this.queuedCreates = waiting;
      if (groups.size === 0) break;
      for (const group of groups.values())
        this.send(
          () => this.sendCreates(group),
          group.flatMap((queued) => queued.streams.map((s) => s.streamName)),
        );
    }
  }

  private send(statement: () => Promise<void>, streams: string[]): void {
    this.inFlight++;
    void statement().finally(() => {
      for (const name of streams) this.busyStreams.delete(name);
      this.inFlight--;
      this.scheduleFlush();
      if (this.inFlight === 0 && this.queued.length === 0 && this.queuedCreates.length === 0) {
        for (const w of this.drainWaiters.splice(0)) w();
      }
    });
  }

  private async sendCreates(group: QueuedCreate[]): Promise<void> {
    const alone = (queued: QueuedCreate) =>
      this.createStreamsAlone(queued.streams, queued.also).then(queued.resolve, queued.reject);
    if (group.length === 1) return alone(group[0]);
    const streams = group.flatMap((queued) => queued.streams);
    const first = group[0].also;
    const also = first && {
      sql: first.sql,
      values: first.merge!(group.map((queued) => queued.also!.values)),
    };
    const carry = this.notifier.claim();
    let results: AppendResult[];
    try {
      results = await this.createStreamsWith(this.pool, streams, false, also, carry, false);
    } catch (error) {
      if (carry) this.notifier.settle(false);
      if (!refusedOnSoundConnection(error)) {
        for (const queued of group) queued.reject(error);
        return;
      }
      // Refused as a whole (a stream that exists, a value claimed, by one of the calls):
      // nothing was written; each call alone gets the outcome it would have had.
      await Promise.all(group.map(alone));
      return;
    }
    this.announce(streams, results, carry);
    let at = 0;
    for (const queued of group) {
      queued.resolve(results.slice(at, at + queued.streams.length));
      at += queued.streams.length;
    }
  }

  /** Wakes local subscribers with what a createStreams wrote, and settles the notification. */
  private announce(streams: readonly NewStream[], results: AppendResult[], carry: boolean): void {
    let last = results[0].position;
    for (const r of results) if (comparePositions(r.position, last) > 0) last = r.position;
    this.listener.fire(new Set(streams.flatMap((s) => s.events.map((e) => e.type))), last);
    if (carry) this.notifier.settle(true);
    else this.notifier.request();
  }

  private async sendGroup(group: QueuedAppend[]): Promise<void> {
    if (group.length === 1) {
      const [one] = group;
      await this.appendAlone(one.streamName, one.events, one.expected).then(one.resolve, one.reject);
      return;
    }
    const carry = this.notifier.claim();
    const prepared = group.map((queued) => ({
      queued,
      ids: queued.events.map((e) => e.id ?? uuidv7()),
      data: queued.events.map((e) => JSON.stringify(e.data ?? null)),
      metadata: queued.events.map((e) => JSON.stringify(e.metadata)),
    }));
    const doc = prepared
      .map(({ queued, ids, data, metadata }) => {
        const events = queued.events.map(
          (e, i) =>
            `{"id":${JSON.stringify(ids[i])},"type":${JSON.stringify(e.type)},"data":${data[i]},"metadata":${metadata[i]}}`,
        );
        const mode = claimMode(queued.expected);
        const expected = typeof queued.expected === 'bigint' ? `"${queued.expected.toString()}"` : 'null';
        return `{"s":${JSON.stringify(queued.streamName)},"m":"${mode}","x":${expected},"ev":[${events.join(',')}]}`;
      })
      .join(',');
    let rows: GroupRow[];
    try {
      rows = (
        await autocommitted<GroupRow>(this.pool, {
          name: `event_store_append_group${carry ? '_notify' : ''}`,
          text: appendGroupSql(carry),
          values: [`[${doc}]`],
        })
      ).rows;
    } catch (error) {
      if (carry) this.notifier.settle(false);
      if (!refusedOnSoundConnection(error)) {
        for (const { queued } of prepared) queued.reject(error);
        return;
      }
      // Refused as a whole (a lost race on one stream, a bad value in one append): nothing
      // was written; each append alone gets the outcome it would have had.
      await Promise.all(
        group.map((queued) =>
          this.appendAlone(queued.streamName, queued.events, queued.expected).then(
            queued.resolve,
            queued.reject,
          ),
        ),
      );
      return;
    }
    const byStream = new Map<string, GroupRow[]>();
    for (const row of rows) {
      const of = byStream.get(row.stream_name);
      if (of) of.push(row);
      else byStream.set(row.stream_name, [row]);
    }
    const types = new Set<string>();
    let lastPosition: Position | undefined;
    const outcomes: (() => void)[] = [];
    for (const { queued, ids, data, metadata } of prepared) {
      const of = byStream.get(queued.streamName) ?? [];
      if (of.length === 0 || of[0].global_position === null) {
        const last = of[0]?.last;
        const error = new WrongExpectedRevisionError(
          queued.streamName,
          queued.expected,
          last == null ? 'no_stream' : BigInt(last),
        );
        outcomes.push(() => queued.reject(error));
        continue;
      }
      of.sort((a, b) => (BigInt(a.stream_revision!) < BigInt(b.stream_revision!) ? -1 : 1));
      const stored = of.map((row, i): StoredEvent => ({
        id: ids[i],
        type: queued.events[i].type,
        data: JSON.parse(data[i]) as unknown,
        metadata: JSON.parse(metadata[i]) as StoredEvent['metadata'],
        streamName: queued.streamName,
        revision: BigInt(row.stream_revision!),
        position: { commit: BigInt(row.transaction_id!), prepare: BigInt(row.global_position!) },
      }));
      for (const e of queued.events) types.add(e.type);
      const last = stored[stored.length - 1];
      if (!lastPosition || comparePositions(last.position, lastPosition) > 0) lastPosition = last.position;
      const result = { nextExpectedRevision: last.revision, position: last.position, events: stored };
      outcomes.push(() => queued.resolve(result));
    }
    const wrote = types.size > 0;
    if (wrote) this.listener.fire(types, lastPosition);
    if (carry) this.notifier.settle(wrote);
    else if (wrote) this.notifier.request();
    for (const outcome of outcomes) outcome();
  }

  /** One append in a statement of its own (the group of one, and the group's fallback). */
  private async appendAlone(
    streamName: string,
    events: readonly NewEvent[],
    expected: ExpectedRevision,
  ): Promise<AppendResult> {
    // Other processes are woken by a pg_notify in the append's own statement when the
    // throttle lets it carry one, else by a separate one later (ThrottledNotifier).
    const carry = this.notifier.claim();
    let result: AppendResult;
    try {
      result = await this.appendWith(this.pool, streamName, events, expected, false, carry);
    } catch (error) {
      if (carry) this.notifier.settle(false);
      throw error;
    }
    // Local subscribers need not wait for the notification's round trip; those that handle
    // none of these types need not wake at all (see SubscriberLoop).
    this.listener.fire(new Set(events.map((e) => e.type)), result.position);
    if (carry) this.notifier.settle(true);
    else this.notifier.request();
    return result;
  }

  /**
   * `also`: one more data-modifying statement run as a CTE of the same statement (its
   * parameters from $2), so that it lands with the streams or neither does, in one round
   * trip: new owners' uniqueness claims (core/claims). Its own errors are thrown as they are.
   *
   * With group commit, calls asked for in one turn (without `also`, or with the same
   * `also.sql` and a `merge`) are sent as one statement, as appends are: a refusal of the
   * whole (one of the streams exists, one of the claims is taken) writes nothing and each
   * call is then sent alone, so each gets the outcome it would have had.
   */
  createStreams(streams: readonly NewStream[], also?: AlsoStatement): Promise<AppendResult[]> {
    this.assertOpen();
    if (streams.length === 0) return Promise.resolve([]);
    const names = new Set<string>();
    for (const { streamName, events } of streams) {
      if (events.length === 0)
        return Promise.reject(new Error(`createStreams: ${streamName} needs at least one event`));
      if (names.has(streamName))
        return Promise.reject(new Error(`createStreams: ${streamName} is given twice`));
      names.add(streamName);
    }
    if (this.options.groupCommit === false || (also && !also.merge))
      return this.createStreamsAlone(streams, also);
    return new Promise<AppendResult[]>((resolve, reject) => {
      this.queuedCreates.push({ streams, also, resolve, reject });
      this.scheduleFlush();
    });
  }

  private async createStreamsAlone(
    streams: readonly NewStream[],
    also?: AlsoStatement,
  ): Promise<AppendResult[]> {
    const carry = this.notifier.claim();
    let results: AppendResult[];
    try {
      results = await this.createStreamsWith(this.pool, streams, false, also, carry);
    } catch (error) {
      if (carry) this.notifier.settle(false);
      throw error;
    }
    this.announce(streams, results, carry);
    return results;
  }

  /**
   * Wakes subscribers after a caller's transaction with appended events committed: local
   * ones at once, other processes through the throttled notification, as after an
   * autocommitted append (a pg_notify inside the transaction would serialise its commit
   * on the cluster-wide notify lock, and local waiters would wait for its round trip).
   */
  committed(): void {
    this.listener.fire();
    this.notifier.request();
  }

  /**
   * `createStreams` on a client the caller holds inside its own transaction, for writes
   * that must commit with the new streams (uniqueness claims of a signup or an import
   * batch). Under a savepoint, like appendInTransaction; it does not notify: the caller
   * calls `committed()` once its transaction has committed.
   */
  createStreamsInTransaction(client: ClientBase, streams: readonly NewStream[]): Promise<AppendResult[]> {
    this.assertOpen();
    return this.createStreamsWith(client, streams, true);
  }

  private async createStreamsWith(
    client: Pool | ClientBase,
    streams: readonly NewStream[],
    inTransaction: boolean,
    also?: { sql: string; values: unknown[] },
    notify = false,
    /** false: the server's refusal is thrown as it is (a group's, to be retried call by call). */
    translate = true,
  ): Promise<AppendResult[]> {
    if (streams.length === 0) return [];
    const names = new Set<string>();
    const prepared = streams.map(({ streamName, events }) => {
      if (events.length === 0) throw new Error(`createStreams: ${streamName} needs at least one event`);
      if (names.has(streamName)) throw new Error(`createStreams: ${streamName} is given twice`);
      names.add(streamName);
      return events.map((e, revision) => ({
        id: e.id ?? uuidv7(),
        stream: streamName,
        revision,
        type: e.type,
        data: JSON.stringify(e.data ?? null),
        metadata: JSON.stringify(e.metadata),
      }));
    });
    const docs = prepared
      .flat()
      .map(
        (d) =>
          `{"id":${JSON.stringify(d.id)},"stream":${JSON.stringify(d.stream)},"revision":${d.revision},"type":${JSON.stringify(d.type)},"data":${d.data},"metadata":${d.metadata}}`,
      );
    let rows: (AppendRow & { stream_name: string })[];
    const alsoText = also && createStreamsSql(notify, `also AS (${also.sql})`);
    const query: QueryConfig = alsoText
      ? {
          // Its texts are bounded by the callers' `also` statements (query shapes, no values).
          name: statementName(alsoText),
          text: alsoText,
          values: [`[${docs.join(',')}]`, ...also.values],
        }
      : {
          name: `event_store_create_streams${notify ? '_notify' : ''}`,
          text: createStreamsSql(notify),
          values: [`[${docs.join(',')}]`],
        };
    try {
      rows = inTransaction
        ? await this.queryInSavepoint<AppendRow & { stream_name: string }>(client, query)
        : (await autocommitted<AppendRow & { stream_name: string }>(client, query)).rows;
    } catch (error) {
      if (
        !translate ||
        !(error instanceof DatabaseError) ||
        error.code !== '23505' ||
        error.table !== 'events'
      )
        throw error;
      if (error.constraint === 'events_event_id_key') {
        throw new Error(`An event with this id is already stored (${error.detail ?? 'duplicate event id'})`, {
          cause: error,
        });
      }
      // The detail reads "Key (stream_name, stream_revision)=(<name>, 0) already exists."
      const existing = [...names].find((n) => error.detail?.includes(`=(${n}, 0)`)) ?? streams[0].streamName;
      throw new WrongExpectedRevisionError(
        existing,
        'no_stream',
        await this.currentRevision(client, existing),
      );
    }
    const at = new Map(rows.map((r) => [`${r.stream_name}\u0000${r.stream_revision}`, r]));
    return prepared.map((docsOfStream, s) => {
      const stored = docsOfStream.map((d, i): StoredEvent => {
        const row = at.get(`${d.stream}\u0000${d.revision}`)!;
        return {
          id: d.id,
          type: d.type,
          data: JSON.parse(d.data) as unknown,
          metadata: JSON.parse(d.metadata) as StoredEvent['metadata'],
          streamName: streams[s].streamName,
          revision: BigInt(i),
          position: { commit: BigInt(row.transaction_id), prepare: BigInt(row.global_position) },
        };
      });
      const last = stored[stored.length - 1];
      return { nextExpectedRevision: last.revision, position: last.position, events: stored };
    });
  }

  /**
   * The append, on a client the caller holds inside its own transaction (BEGIN ... COMMIT),
   * for writes that must commit together with the events (uniqueness claims). The
   * notification is sent when the caller commits. The append runs under a savepoint, so a
   * WrongExpectedRevisionError leaves the caller's transaction usable. Keep that
   * transaction short: while it is open, every subscriber waits for it.
   */
  appendInTransaction(
    client: ClientBase,
    streamName: string,
    events: readonly NewEvent[],
    options: { expectedRevision?: ExpectedRevision } = {},
  ): Promise<AppendResult> {
    this.assertOpen();
    return this.appendWith(client, streamName, events, options.expectedRevision ?? 'any', true);
  }

  async readStream(streamName: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> {
    this.assertOpen();
    const backwards = options.direction === 'backwards';
    const from = options.fromRevision ?? (backwards ? AFTER_LAST.prepare : 0n);
    const { rows } = await this.pool.query<EventRow>({
      name: backwards ? 'event_store_read_stream_backwards' : 'event_store_read_stream_forwards',
      text: backwards ? READ_STREAM_BACKWARDS_SQL : READ_STREAM_FORWARDS_SQL,
      values: [streamName, from.toString(), options.maxCount ?? null],
    });
    return rows.map(toStoredEvent);
  }

  async readStreams(streamNames: readonly string[]): Promise<StoredEvent[][]> {
    this.assertOpen();
    const { rows } = await this.pool.query<EventRow>({
      name: 'event_store_read_streams',
      text: READ_STREAMS_SQL,
      values: [[...new Set(streamNames)]],
    });
    const byStream = new Map<string, StoredEvent[]>();
    for (const row of rows) {
      const events = byStream.get(row.stream_name) ?? [];
      byStream.set(row.stream_name, events);
      events.push(toStoredEvent(row));
    }
    return streamNames.map((name) => byStream.get(name)?.slice() ?? []);
  }

  async readAll(options: ReadAllOptions = {}): Promise<StoredEvent[]> {
    this.assertOpen();
    const backwards = options.direction === 'backwards';
    const after = options.after ?? (backwards ? AFTER_LAST : BEFORE_FIRST);
    const { rows } = await this.pool.query<EventRow>({
      name: backwards ? 'event_store_read_all_backwards' : 'event_store_read_all_forwards',
      text: backwards ? READ_ALL_BACKWARDS_SQL : READ_ALL_FORWARDS_SQL,
      values: [
        after.commit.toString(),
        after.prepare.toString(),
        options.filter?.eventTypes ?? null,
        options.filter?.streamPrefixes ?? null,
        options.maxCount ?? null,
      ],
    });
    return rows.map(toStoredEvent);
  }

  subscribe(options: SubscribeOptions = {}): EventSubscription {
    this.assertOpen();
    // While batches come back full the subscription is catching up and will poll again at
    // once anyway, so the held-back question is only asked near the head.
    let catchingUp = false;
    const subscription = createPollingSubscription(
      {
        poll: async (after, limit) => {
          const { full, ...result } = await this.poll(after, limit, options.filter, !catchingUp);
          catchingUp = full;
          return result;
        },
        onAppended: (listener) => this.onAppended(listener),
        ready: () => this.listener.ready(),
      },
      {
        after: options.after,
        batchSize: this.options.subscriptionBatchSize,
        behindPollMs: this.options.heldBackPollMs,
        idlePollMs: this.options.idlePollMs,
        onEnd: () => this.subscriptions.delete(subscription),
      },
    );
    this.subscriptions.add(subscription);
    return subscription;
  }

  onAppended(listener: (eventTypes?: ReadonlySet<string>, position?: Position) => void): () => void {
    if (this.closed) return () => undefined;
    return this.listener.add(listener);
  }

  async headPosition(): Promise<Position | undefined> {
    this.assertOpen();
    const { rows } = await this.pool.query<{ global_position: string; transaction_id: string }>({
      name: 'event_store_head_position',
      text: HEAD_POSITION_SQL,
    });
    if (rows.length === 0) return undefined;
    return { commit: BigInt(rows[0].transaction_id), prepare: BigInt(rows[0].global_position) };
  }

  async ping(): Promise<void> {
    this.assertOpen();
    await this.pool.query('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Appends already asked for are sent and answered before the pool ends.
    if (this.inFlight > 0 || this.queued.length > 0 || this.queuedCreates.length > 0)
      await new Promise<void>((resolve) => this.drainWaiters.push(resolve));
    await Promise.all([...this.subscriptions].map((subscription) => subscription.close()));
    await this.notifier.close();
    await this.listener.close();
    if (this.ownsPool) await this.pool.end();
  }

  /**
   * The port's optional scanAll, also the forwards read a filtered subscription makes.
   * Looks at the next `limit` readable events after `after`, returns those matching the
   * filter, and where the look ended (`scannedTo`, to continue from even when nothing
   * matched) and whether it stopped at `limit` (`more`). Only events below the horizon
   * are looked at, so no later commit can land at or before `scannedTo`.
   */
  async scanAll(options: ScanAllOptions): Promise<ScanAllResult> {
    this.assertOpen();
    const after = options.after ?? BEFORE_FIRST;
    const { rows } = await this.pool.query<ScanRow>({
      name: 'event_store_scan_all',
      text: SCAN_ALL_SQL,
      values: [
        after.commit.toString(),
        after.prepare.toString(),
        options.filter?.eventTypes ?? null,
        options.filter?.streamPrefixes ?? null,
        options.limit,
      ],
    });
    if (rows.length === 0) return { events: [], more: false };
    const end = rows[0];
    const events = rows[0].global_position === null ? [] : rows.map((row) => toStoredEvent(row as EventRow));
    return {
      events,
      scannedTo: { commit: BigInt(end.scanned_transaction_id), prepare: BigInt(end.scanned_global_position) },
      more: end.scanned_count >= options.limit,
    };
  }

  private async poll(
    after: Position | undefined,
    limit: number,
    filter: EventFilter | undefined,
    askHeldBack: boolean,
  ): Promise<PollResult & { full: boolean }> {
    // Asked before the read, not after: an event that was held back here and is released
    // before the read is simply read; had we asked after, a release between the two
    // statements would leave us sleeping the idle interval with that event unread.
    let heldBack = false;
    if (askHeldBack) {
      const { rows } = await this.pool.query<{ held_back: boolean }>({
        name: 'event_store_held_back',
        text: HELD_BACK_SQL,
      });
      heldBack = rows[0]?.held_back === true;
    }
    let scan: ScanAllResult;
    if (filter?.eventTypes || filter?.streamPrefixes) {
      scan = await this.scanAll({ after, limit, filter });
    } else {
      // Unfiltered, every event scanned is delivered: the plain read is the cheaper query.
      const events = await this.readAll({ after, maxCount: limit });
      scan = { events, more: events.length >= limit };
    }
    // A short batch read without the question cannot tell "caught up" from "held back":
    // poll again at once, asking this time.
    return { ...scan, heldBack, more: scan.more || !askHeldBack, full: scan.more };
  }

  private async appendWith(
    client: Pool | ClientBase,
    streamName: string,
    events: readonly NewEvent[],
    expected: ExpectedRevision,
    inTransaction: boolean,
    carry = false,
  ): Promise<AppendResult> {
    if (events.length === 0) throw new Error('append needs at least one event');
    const mode = claimMode(expected);
    const ids = events.map((e) => e.id ?? uuidv7());
    const data = events.map((e) => JSON.stringify(e.data ?? null));
    const metadata = events.map((e) => JSON.stringify(e.metadata));
    const values: unknown[] = [streamName];
    if (typeof expected === 'bigint') values.push(expected.toString());
    const shape = events.length === 1 ? 'single' : 'batch';
    if (shape === 'single') {
      values.push(ids[0], events[0].type, data[0], metadata[0]);
    } else {
      const docs = events.map(
        (e, i) =>
          `{"id":${JSON.stringify(ids[i])},"type":${JSON.stringify(e.type)},"data":${data[i]},"metadata":${metadata[i]}}`,
      );
      values.push(`[${docs.join(',')}]`);
    }
    // In a caller's transaction the notification is sent at its commit; autocommitted,
    // when the throttle lets this append carry it.
    const notify = inTransaction || carry;
    const query: QueryConfig = {
      name: `event_store_append_${mode}_${shape}${notify ? '_notify' : ''}`,
      text: appendSql(mode, shape, notify),
      values,
    };

    for (let attempt = 1; ; attempt++) {
      let rows: AppendRow[];
      try {
        rows = inTransaction
          ? await this.queryInSavepoint(client, query)
          : (await autocommitted<AppendRow>(client, query)).rows;
      } catch (error) {
        if (!(error instanceof DatabaseError) || error.code !== '23505') throw error;
        if (error.constraint === 'events_event_id_key') {
          throw new Error(
            `An event with this id is already stored (${error.detail ?? 'duplicate event id'})`,
            { cause: error },
          );
        }
        // A concurrent append took the revisions between our read of the stream and our insert.
        if ((mode === 'any' || mode === 'stream_exists') && attempt < MAX_APPEND_ATTEMPTS) {
          await new Promise((resolve) => setTimeout(resolve, Math.random() * attempt));
          continue;
        }
        throw new WrongExpectedRevisionError(
          streamName,
          expected,
          await this.currentRevision(client, streamName),
        );
      }
      if (rows.length === 0) {
        throw new WrongExpectedRevisionError(
          streamName,
          expected,
          await this.currentRevision(client, streamName),
        );
      }

      rows.sort((a, b) => (BigInt(a.stream_revision) < BigInt(b.stream_revision) ? -1 : 1));
      const stored = rows.map((row, i): StoredEvent => ({
        id: ids[i],
        type: events[i].type,
        // What a reader will get back: the JSON form, not the caller's objects.
        data: JSON.parse(data[i]) as unknown,
        metadata: JSON.parse(metadata[i]) as StoredEvent['metadata'],
        streamName,
        revision: BigInt(row.stream_revision),
        position: { commit: BigInt(row.transaction_id), prepare: BigInt(row.global_position) },
      }));
      const last = stored[stored.length - 1];
      return { nextExpectedRevision: last.revision, position: last.position, events: stored };
    }
  }

  private async queryInSavepoint<Row extends AppendRow = AppendRow>(
    client: Pool | ClientBase,
    query: QueryConfig,
  ): Promise<Row[]> {
    await client.query(`SAVEPOINT ${SAVEPOINT}`);
    try {
      const { rows } = await client.query<Row>(query);
      await client.query(`RELEASE SAVEPOINT ${SAVEPOINT}`);
      return rows;
    } catch (error) {
      await client.query(`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`).catch(() => undefined);
      throw error;
    }
  }

  private async currentRevision(
    client: Pool | ClientBase,
    streamName: string,
  ): Promise<bigint | 'no_stream'> {
    const { rows } = await client.query<{ last_revision: string | null }>({
      name: 'event_store_current_revision',
      text: CURRENT_REVISION_SQL,
      values: [streamName],
    });
    const last = rows[0]?.last_revision;
    return last == null ? 'no_stream' : BigInt(last);
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('PostgresEventStore is closed');
  }
}

/**
 * A statement outside any caller's transaction. pg-pool's own `query` ends the connection
 * after any error, so each lost append race or taken claim (refused by the server, the
 * connection still sound) cost a new connection, its fork and its authentication; here
 * the connection goes back to the pool unless the error says it is broken.
 */
async function autocommitted<R extends QueryResultRow>(
  client: Pool | ClientBase,
  query: QueryConfig,
): Promise<QueryResult<R>> {
  if (!(client instanceof Pool)) return client.query<R>(query);
  const connection = await client.connect();
  try {
    const result = await connection.query<R>(query);
    connection.release();
    return result;
  } catch (error) {
    connection.release(refusedOnSoundConnection(error) ? undefined : (error as Error));
    throw error;
  }
}

/** A server's refusal of one statement (not a connection failure, shutdown or internal error). */
function refusedOnSoundConnection(error: unknown): boolean {
  return error instanceof DatabaseError && !!error.code && !/^(08|57|58|XX)/.test(error.code);
}
