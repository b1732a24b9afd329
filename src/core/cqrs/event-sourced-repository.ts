import { Inject, Injectable, Optional } from '@nestjs/common';
import { v7 as uuidv7 } from 'uuid';
import { CLAIM_FENCED, ClaimPlan, Claims, CLAIMS } from '../claims/claims';
import {
  AppendResult,
  EVENT_STORE,
  EventMetadata,
  EventStore,
  ExpectedRevision,
  NewEvent,
  StoredEvent,
  WrongExpectedRevisionError,
} from '../event-store/event-store.port';
import { PreconditionFailedError } from '../http/domain-errors';
import { Decider, DomainEvent } from './decider';
import { SharedStreamReads } from './shared-stream-reads';
import { requestContext, SYSTEM_ACTOR } from './request-context';

/** Lost races a write re-decides by default before it answers 409 (see HandleOptions.maxRetries). */
export const DEFAULT_MAX_RETRIES = 15;
export interface HandleOptions<State, Command, Event extends DomainEvent> {
  streamName: string;
  workspaceId: string;
  decider: Decider<State, Command, Event>;
  /**
   * The command, or how to make it from the state just loaded, on every attempt: for a
   * command needing facts found from that state (a member's role as merges moved it).
   */
  command: Command | { from: (state: State) => Command | Promise<Command> };
  /**
   * The state as the caller just loaded it: the first attempt decides on it, without a
   * second read. One served from the cache (`cached`, see `cachedFirst`) is not retried
   * here when it proves stale: the whole command is run again on fresh state.
   */
  loaded?: { state: State; revision: bigint | undefined; cached?: boolean };
  /** Pinned by the client (If-Match): a newer stream is then a 412 instead of a retry. */
  expectedRevision?: bigint;
  /**
   * Lost races re-decided before giving up (409). Each round of racing writers has one
   * winner, so DEFAULT_MAX_RETRIES lets that many + 1 concurrent writers of one stream all
   * land (a client's concurrent PUTs without If-Match are each applied, last one wins).
   */
  maxRetries?: number;
  /**
   * The unique values the decided events give the stream and take from it (core/claims):
   * taken atomically with the append, so a value held elsewhere fails the write with
   * ClaimTakenError and appends nothing.
   */
  claims?: (events: Event[], state: State) => ClaimPlan;
}

export interface HandleResult<State, Event extends DomainEvent> {
  state: State;
  events: Event[];
  append?: AppendResult;
}

/** How many aggregates' states a process keeps (least recently used dropped first). */
export const AGGREGATE_CACHE_SIZE = 10_000;

/**
 * A state served from the cache could not be confirmed (the stream had moved on, or the
 * command decided nothing or failed on it): `cachedFirst` runs the command again on fresh
 * state. Never leaves `cachedFirst`.
 */
class CachedStateUnconfirmed extends Error {
  constructor(readonly reason: unknown) {
    super('a cached aggregate state could not be confirmed');
  }
}

interface CacheEntry {
  decider: unknown;
  state: unknown;
  revision: bigint;
}

/** How `cachedFirst`'s command loads its aggregates. */
export interface CachedLoader {
  load<State, Event extends DomainEvent>(
    streamName: string,
    decider: Pick<Decider<State, never, Event>, 'initialState' | 'evolve'>,
  ): Promise<{ state: State; revision: bigint | undefined; exists: boolean; cached: boolean }>;
}

/**
 * The generic command path: load the stream, fold it, decide, append with the revision
 * we read. A lost race is re-decided on fresh state a few times (DESIGN.md, "Shape").
 *
 * It also keeps, per process, the state of the aggregates it last loaded or appended to,
 * with their revision (AGGREGATE_CACHE_SIZE of them), for the deciders a `cachedFirst`
 * command uses (or `remember` was given). Only a command run through
 * `cachedFirst` decides on such a state, and only as far as its append: the append
 * expects the cached revision, so a stream another process (or another path) has moved
 * on fails its revision check and nothing is written; so does anything else that goes
 * wrong on a cached state, and the whole command (its checks included) is run again on
 * states read from the store.
 */
@Injectable()
export class EventSourcedRepository {
  private readonly cache = new Map<string, CacheEntry>();
  /** Deciders whose aggregates are kept: those a `cachedFirst` command loaded or `remember` was given. */
  private readonly cachedDeciders = new WeakSet<object>();

  private readonly sharedReads: SharedStreamReads;

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Optional() @Inject(CLAIMS) private readonly claimStore?: Claims,
  ) {
    this.sharedReads = new SharedStreamReads((streamName) => this.store.readStream(streamName));
  }

  async load<State, Event extends DomainEvent>(
    streamName: string,
    decider: Pick<Decider<State, never, Event>, 'initialState' | 'evolve'>,
  ): Promise<{ state: State; revision: bigint | undefined; exists: boolean }> {
    return this.fold(streamName, decider, await this.store.readStream(streamName));
  }

  /**
   * `load`, for a stream many requests read at once (a data type every record write of the
   * type reads): callers asking while a read of the stream is in flight share the next
   * read, sent when that one returns. Every caller still gets a read sent after it asked,
   * so it sees every write committed before it asked, as with `load`: concurrent callers
   * cost one statement per round trip instead of one each. The events are shared by the
   * callers' folds, which must not change them (deciders never do).
   */
  async loadShared<State, Event extends DomainEvent>(
    streamName: string,
    decider: Pick<Decider<State, never, Event>, 'initialState' | 'evolve'>,
  ): Promise<{ state: State; revision: bigint | undefined; exists: boolean }> {
    return this.fold(streamName, decider, await this.sharedReads.read(streamName));
  }

  private fold<State, Event extends DomainEvent>(
    streamName: string,
    decider: Pick<Decider<State, never, Event>, 'initialState' | 'evolve'>,
    events: readonly StoredEvent[],
  ): { state: State; revision: bigint | undefined; exists: boolean } {
    let state = decider.initialState();
    // A claim takeover's fence (core/claims) moves the revision but is no event of the aggregate.
    for (const e of events)
      if (e.type !== CLAIM_FENCED) state = decider.evolve(state, { type: e.type, data: e.data } as Event);
    const revision = events.length ? events[events.length - 1].revision : undefined;
    if (revision !== undefined && this.cachedDeciders.has(decider))
      this.remember(streamName, decider, state, revision);
    return { state, revision, exists: events.length > 0 };
  }

  /**
   * Runs `command` with aggregates loaded from this process's cache where it holds them;
   * when it throws after any cached state was served (a revision check failed on it, an
   * If-Match or a no-op could not be confirmed on it, a check refused it), those streams
   * are dropped from the cache and `command` runs again, loading everything from the
   * store. `command` must append at most once, through `handle` with `loaded` from the
   * loader, as its last step: a second run must never follow a write of the first.
   */
  async cachedFirst<T>(command: (loader: CachedLoader) => Promise<T>): Promise<T> {
    const served: string[] = [];
    try {
      return await command({
        load: async (streamName, decider) => {
          const hit = this.cache.get(streamName);
          if (hit && hit.decider === decider) {
            // Most recently used last: the oldest entries are dropped first.
            this.cache.delete(streamName);
            this.cache.set(streamName, hit);
            served.push(streamName);
            return {
              state: hit.state as never,
              revision: hit.revision,
              exists: true,
              cached: true,
            };
          }
          this.cachedDeciders.add(decider);
          return { ...(await this.load(streamName, decider)), cached: false };
        },
      });
    } catch (err) {
      if (!served.length) throw err instanceof CachedStateUnconfirmed ? err.reason : err;
      for (const s of served) this.cache.delete(s);
      return command({
        load: async (streamName, decider) => ({ ...(await this.load(streamName, decider)), cached: false }),
      });
    }
  }

  /**
   * Keeps a state this process just read or wrote, for `cachedFirst`; from then on the
   * aggregates of `decider` are kept whenever they are loaded or appended to (the
   * aggregates no `cachedFirst` command uses are never held in memory).
   */
  remember<State>(
    streamName: string,
    decider: Pick<Decider<State, never, DomainEvent>, 'initialState' | 'evolve' | 'cacheable'>,
    state: State,
    revision: bigint,
  ): void {
    this.cachedDeciders.add(decider);
    this.cache.delete(streamName);
    // A state the decider calls too large to keep is not kept (nor any older one of the stream).
    if (decider.cacheable && !decider.cacheable(state)) return;
    if (this.cache.size >= AGGREGATE_CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(streamName, { decider, state, revision });
  }

  /** How many aggregate states the cache holds (specs). */
  get cachedAggregates(): number {
    return this.cache.size;
  }

  async handle<State, Command, Event extends DomainEvent>(
    options: HandleOptions<State, Command, Event>,
  ): Promise<HandleResult<State, Event>> {
    const retries = options.expectedRevision !== undefined ? 0 : (options.maxRetries ?? DEFAULT_MAX_RETRIES);
    for (let attempt = 0; ; attempt++) {
      const cached = attempt === 0 && options.loaded?.cached === true;
      const { state, revision } =
        attempt === 0 && options.loaded
          ? options.loaded
          : await this.load(options.streamName, options.decider);
      let command: Command;
      let events: Event[];
      try {
        if (options.expectedRevision !== undefined && revision !== options.expectedRevision)
          throw staleVersion();
        command = isCommandFrom(options.command) ? await options.command.from(state) : options.command;
        events = options.decider.decide(command, state);
      } catch (err) {
        throw cached ? new CachedStateUnconfirmed(err) : err;
      }
      // Nothing to write is only true of the stream as it stands: confirm it on a fresh read.
      if (events.length === 0) {
        if (cached) throw new CachedStateUnconfirmed(undefined);
        return { state, events };
      }
      try {
        const plan = options.claims?.(events, state);
        const append = plan
          ? await this.appendClaimed(
              options.streamName,
              options.workspaceId,
              events,
              revision ?? 'no_stream',
              plan,
            )
          : await this.append(options.streamName, options.workspaceId, events, revision ?? 'no_stream');
        const next = events.reduce((s, e) => options.decider.evolve(s, e), state);
        if (this.cachedDeciders.has(options.decider))
          this.remember(options.streamName, options.decider, next, append.nextExpectedRevision);
        return { state: next, events, append };
      } catch (err) {
        if (cached) throw new CachedStateUnconfirmed(err);
        if (!(err instanceof WrongExpectedRevisionError)) throw err;
        if (options.expectedRevision !== undefined) throw staleVersion();
        if (attempt < retries) continue;
        throw err;
      }
    }
  }

  /** Appends domain events with the envelope metadata of the current request or job. */
  async append(
    streamName: string,
    workspaceId: string,
    events: readonly DomainEvent[],
    expectedRevision: ExpectedRevision,
  ): Promise<AppendResult> {
    const result = await this.store.append(
      streamName,
      events.map((e) => toNewEvent(e, workspaceId)),
      { expectedRevision },
    );
    requestContext.current()?.appended.push(result);
    return result;
  }

  /** Appends domain events taking and releasing uniqueness claims with them (core/claims). */
  async appendClaimed(
    streamName: string,
    workspaceId: string,
    events: readonly DomainEvent[],
    expectedRevision: ExpectedRevision,
    plan: ClaimPlan,
  ): Promise<AppendResult> {
    if (!this.claimStore) throw new Error('No claims adapter is provided (CLAIMS)');
    const result = await this.claimStore.append({
      stream: streamName,
      events: events.map((e) => toNewEvent(e, workspaceId)),
      expectedRevision,
      take: plan.take,
      release: plan.release,
    });
    requestContext.current()?.appended.push(result);
    return result;
  }

  /** Whether several owners' claimed appends can land in one atomic write (not EventStoreDB). */
  get canAppendClaimedMany(): boolean {
    return typeof this.claimStore?.appendMany === 'function';
  }

  /**
   * Several streams' domain events with the claims each takes and releases, all or nothing
   * (Claims.appendMany): the streams of one signup, or a batch of imported members. Only
   * where `canAppendClaimedMany`.
   */
  async appendClaimedMany(
    workspaceId: string,
    appends: readonly {
      streamName: string;
      events: readonly DomainEvent[];
      expectedRevision: ExpectedRevision;
      plan?: ClaimPlan;
    }[],
  ): Promise<AppendResult[]> {
    if (!this.claimStore?.appendMany)
      throw new Error(`The ${this.store.kind} event store cannot append several streams atomically`);
    const results = await this.claimStore.appendMany(
      appends.map((a) => ({
        stream: a.streamName,
        events: a.events.map((e) => toNewEvent(e, workspaceId)),
        expectedRevision: a.expectedRevision,
        take: a.plan?.take,
        release: a.plan?.release,
      })),
    );
    requestContext.noteAppended(results);
    return results;
  }
}

function isCommandFrom<State, Command>(
  command: Command | { from: (state: State) => Command | Promise<Command> },
): command is { from: (state: State) => Command | Promise<Command> } {
  return typeof (command as { from?: unknown } | null)?.from === 'function';
}

/** A write pinned by the client (If-Match) met a newer version of its stream. */
export function staleVersion(): PreconditionFailedError {
  return new PreconditionFailedError(
    'If-Match: the resource has changed since that version; reload it and try again',
  );
}

export function eventMetadata(workspaceId: string, schemaVersion = 1): EventMetadata {
  const ctx = requestContext.current();
  return {
    workspaceId,
    actor: ctx?.actor ?? SYSTEM_ACTOR,
    correlationId: ctx?.requestId ?? uuidv7(),
    ...(ctx?.causationId ? { causationId: ctx.causationId } : {}),
    occurredAt: new Date().toISOString(),
    schemaVersion,
  };
}

export function toNewEvent(e: DomainEvent, workspaceId: string): NewEvent {
  return { id: uuidv7(), type: e.type, data: e.data, metadata: eventMetadata(workspaceId) };
}

export type { StoredEvent };
