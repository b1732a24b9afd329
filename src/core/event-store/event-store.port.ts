/**
 * The event store port. Every write in the service appends here; projections and
 * reactors follow the global order through readAll/subscribe. Three adapters
 * implement it (PostgreSQL, EventStoreDB, in-memory) and one conformance spec
 * (event-store.conformance.ts) holds them to the same behaviour.
 */

/**
 * A point in the global order. Compared lexicographically (commit, then prepare).
 * PostgreSQL: commit = the appending transaction's id (xid8), prepare = global sequence.
 * EventStoreDB: its own commit/prepare log positions.
 */
export interface Position {
  commit: bigint;
  prepare: bigint;
}

/** `assistant`: a chat's assistant acting as its workflow's agent member (`memberId`). */
export type ActorKind = 'member' | 'api_key' | 'member_token' | 'oauth' | 'assistant' | 'system' | 'operator';

export interface Actor {
  kind: ActorKind;
  /** Account uuid, member id, or a system component name. */
  id: string;
  memberId?: number;
  accountUuid?: string;
  /** The API key that acted (kind api_key): an auditor can tell an account's keys apart. */
  keyId?: string;
  /** The member token or OAuth access token that acted (kinds member_token, oauth). */
  tokenId?: string;
  /** The OAuth client (app) the token was issued to (kind oauth). */
  clientId?: string;
}

export interface EventMetadata {
  workspaceId: string;
  actor: Actor;
  correlationId: string;
  causationId?: string;
  occurredAt: string;
  schemaVersion: number;
}

export interface StoredEvent<T extends string = string, D = unknown> {
  /** uuid v7 */
  id: string;
  type: T;
  /** Plain JSON: no class instances, no Dates (ISO strings). */
  data: D;
  metadata: EventMetadata;
  streamName: string;
  revision: bigint;
  position: Position;
}

export interface NewEvent<T extends string = string, D = unknown> {
  /** Optional: generated (uuid v7) when absent. */
  id?: string;
  type: T;
  data: D;
  metadata: EventMetadata;
}

/**
 * 'any': append whatever the stream holds. 'no_stream': the stream must not exist.
 * 'stream_exists': it must hold at least one event. bigint: its last revision must be exactly this.
 */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | bigint;

export interface NewStream {
  streamName: string;
  events: readonly NewEvent[];
}

export interface AppendResult {
  /** Revision of the last appended event: pass it as the next expected revision. */
  nextExpectedRevision: bigint;
  /** Position of the last appended event. */
  position: Position;
  events: StoredEvent[];
}

export interface EventFilter {
  /** Only these event types. */
  eventTypes?: readonly string[];
  /** Only streams whose name starts with one of these. */
  streamPrefixes?: readonly string[];
}

export interface ReadStreamOptions {
  direction?: 'forwards' | 'backwards';
  /** Inclusive. Forwards default: 0; backwards default: the end. */
  fromRevision?: bigint;
  maxCount?: number;
}

export interface ReadAllOptions {
  direction?: 'forwards' | 'backwards';
  /** Exclusive: events strictly after (forwards) or before (backwards) this position. */
  after?: Position;
  maxCount?: number;
  filter?: EventFilter;
}

export interface ScanAllOptions {
  /** Exclusive: events strictly after this position; absent means from the first event. */
  after?: Position;
  /** How many events to look at, matching or not. */
  limit: number;
  filter?: EventFilter;
}

export interface ScanAllResult {
  /** The events looked at that match the filter, in global order. */
  events: StoredEvent[];
  /** Position of the last event looked at; undefined when nothing was looked at. */
  scannedTo?: Position;
  /** Whether the scan stopped at `limit` (more may follow), not at the end. */
  more: boolean;
}

export interface SubscribeOptions {
  /** Exclusive checkpoint; absent means from the first event. */
  after?: Position;
  filter?: EventFilter;
}

/** Catch up from the checkpoint, then live, in global order, until closed. */
export interface EventSubscription extends AsyncIterable<StoredEvent> {
  close(): Promise<void>;
}

export interface EventStore {
  readonly kind: 'postgres' | 'eventstoredb' | 'memory';
  append(
    streamName: string,
    events: readonly NewEvent[],
    options?: { expectedRevision?: ExpectedRevision },
  ): Promise<AppendResult>;
  /**
   * Optional capability: creates several new streams in one atomic write, each as if
   * appended with 'no_stream'. If any of them already exists, nothing is written and a
   * WrongExpectedRevisionError names one that exists. Results come in the order given.
   * PostgreSQL and the in-memory store have it; EventStoreDB has no multi-stream
   * transaction, so callers fall back to one append per stream there.
   */
  createStreams?(streams: readonly NewStream[]): Promise<AppendResult[]>;
  /** Events of one stream; an absent stream reads as []. */
  readStream(streamName: string, options?: ReadStreamOptions): Promise<StoredEvent[]>;
  /**
   * Optional capability: several whole streams read at once (PostgreSQL: one statement, so
   * one snapshot of them all), each forwards as readStream reads it, in the order given;
   * an absent stream reads as []. Callers without it read the streams one by one.
   */
  readStreams?(streamNames: readonly string[]): Promise<StoredEvent[][]>;
  readAll(options?: ReadAllOptions): Promise<StoredEvent[]>;
  /**
   * Optional capability: looks at up to `limit` readable events after `after` in global
   * order and returns those matching the filter, where it stopped looking (`scannedTo`,
   * undefined when it looked at nothing) and whether it stopped at `limit` (`more`).
   * Events the filter rejects (and, on EventStoreDB, its own system events) still count
   * as looked at and move `scannedTo`, so a reader of rare event types can continue
   * from there instead of reading the same unmatched tail again. Nothing readable later
   * can land at or before `scannedTo`.
   */
  scanAll?(options: ScanAllOptions): Promise<ScanAllResult>;
  subscribe(options?: SubscribeOptions): EventSubscription;
  /**
   * Calls the listener (possibly spuriously, possibly coalesced) when new events may
   * be readable; lets batch readers sleep between polls. Returns an unsubscribe.
   * `eventTypes`, when given, are the types of the events this call announces (an append
   * in this process); without it (another process's append, a reconnect) they may be of
   * any type. `position`, when given with them, is the position of the last event this
   * call announces: a reader that has looked at every event up to it has seen them all.
   */
  onAppended(listener: (eventTypes?: ReadonlySet<string>, position?: Position) => void): () => void;
  /** Position of the newest readable event, or undefined for an empty store. */
  headPosition(): Promise<Position | undefined>;
  /** Answers whether the store is reachable (health). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export const EVENT_STORE = Symbol('EVENT_STORE');

export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly streamName: string,
    readonly expected: ExpectedRevision,
    readonly actual: bigint | 'no_stream',
  ) {
    super(`Stream ${streamName} was expected at ${String(expected)} but is at ${String(actual)}`);
    this.name = 'WrongExpectedRevisionError';
  }
}

export function comparePositions(a: Position, b: Position): number {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1;
  if (a.prepare !== b.prepare) return a.prepare < b.prepare ? -1 : 1;
  return 0;
}

/** Text form used in checkpoints, query strings and JSON: "<commit>-<prepare>". */
export function encodePosition(p: Position): string {
  return `${p.commit}-${p.prepare}`;
}

export function decodePosition(s: string): Position | undefined {
  const m = /^(\d{1,20})-(\d{1,20})$/.exec(s);
  if (!m) return undefined;
  return { commit: BigInt(m[1]), prepare: BigInt(m[2]) };
}

export function matchesFilter(event: { type: string; streamName: string }, filter?: EventFilter): boolean {
  if (!filter) return true;
  if (filter.eventTypes && !filter.eventTypes.includes(event.type)) return false;
  if (filter.streamPrefixes && !filter.streamPrefixes.some((p) => event.streamName.startsWith(p)))
    return false;
  return true;
}
