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
import { requestContext, SYSTEM_ACTOR } from './request-context';

export interface HandleOptions<State, Command, Event extends DomainEvent> {
  streamName: string;
  workspaceId: string;
  decider: Decider<State, Command, Event>;
  /**
   * The command, or how to make it from the state just loaded, on every attempt: for a
   * command needing facts found from that state (a member's role as merges moved it).
   */
  command: Command | { from: (state: State) => Command | Promise<Command> };
  /** The state as the caller just loaded it: the first attempt decides on it, without a second read. */
  loaded?: { state: State; revision: bigint | undefined };
  /** Pinned by the client (If-Match): a newer stream is then a 412 instead of a retry. */
  expectedRevision?: bigint;
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

/**
 * The generic command path: load the stream, fold it, decide, append with the revision
 * we read. A lost race is re-decided on fresh state a few times (DESIGN.md, "Shape").
 */
@Injectable()
export class EventSourcedRepository {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Optional() @Inject(CLAIMS) private readonly claimStore?: Claims,
  ) {}

  async load<State, Event extends DomainEvent>(
    streamName: string,
    decider: Pick<Decider<State, never, Event>, 'initialState' | 'evolve'>,
  ): Promise<{ state: State; revision: bigint | undefined; exists: boolean }> {
    const events = await this.store.readStream(streamName);
    let state = decider.initialState();
    // A claim takeover's fence (core/claims) moves the revision but is no event of the aggregate.
    for (const e of events)
      if (e.type !== CLAIM_FENCED) state = decider.evolve(state, { type: e.type, data: e.data } as Event);
    const revision = events.length ? events[events.length - 1].revision : undefined;
    return { state, revision, exists: events.length > 0 };
  }

  async handle<State, Command, Event extends DomainEvent>(
    options: HandleOptions<State, Command, Event>,
  ): Promise<HandleResult<State, Event>> {
    const retries = options.expectedRevision !== undefined ? 0 : (options.maxRetries ?? 3);
    for (let attempt = 0; ; attempt++) {
      const { state, revision } =
        attempt === 0 && options.loaded
          ? options.loaded
          : await this.load(options.streamName, options.decider);
      if (options.expectedRevision !== undefined && revision !== options.expectedRevision)
        throw staleVersion();
      const command = isCommandFrom(options.command) ? await options.command.from(state) : options.command;
      const events = options.decider.decide(command, state);
      if (events.length === 0) return { state, events };
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
        return { state: next, events, append };
      } catch (err) {
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
