import { v7 as uuidv7 } from 'uuid';
import type { DomainEvent } from '../cqrs/decider';
import {
  AppendResult,
  EventMetadata,
  EventStore,
  ExpectedRevision,
  NewEvent,
  WrongExpectedRevisionError,
} from '../event-store/event-store.port';
import {
  CLAIM_FENCED,
  ClaimChange,
  ClaimedAppend,
  ClaimKind,
  ClaimRef,
  Claims,
  ClaimTakenError,
  hashClaimValue,
  sameClaim,
  sortClaims,
} from './claims';

/** Event types of a claim stream (internal: they never leave the service). */
export const CLAIM_TAKEN = 'ClaimTaken';
export const CLAIM_RELEASED = 'ClaimReleased';

interface ClaimStreamEvent {
  type: typeof CLAIM_TAKEN | typeof CLAIM_RELEASED;
  data: { scope: string; kind: string; owner: string; at: string };
}

interface ClaimState {
  /** The owner holding the claim; null when never taken or released. */
  holder: string | null;
  /** The owner the last event was about: the holder, or the one that released it. */
  last: string | null;
  at: string | null;
  revision: bigint | undefined;
}

type Verdict = { kind: 'live' } | { kind: 'pending' } | { kind: 'dead'; fenceAt?: bigint | 'no_stream' };

export interface StreamClaimsOptions {
  /**
   * How long a claim whose owner does not (yet) carry the value counts as a write in
   * flight. Claim-then-append takes milliseconds; past this the owner is presumed to have
   * crashed, and the claim is taken over behind a fence.
   */
  graceMs?: number;
  pollMs?: number;
}

export const DEFAULT_CLAIM_GRACE_MS = 5_000;

/** The claim stream of a value; its name carries a hash, never the value. */
export function claimStreamName(ref: Pick<ClaimRef, 'scope' | 'kind' | 'value'>): string {
  if (ref.kind.streamFormat) return ref.kind.streamFormat.streamName(ref);
  return `claim-${ref.kind.name}-${hashClaimValue(`${ref.scope}\u0000${ref.value}`)}`;
}

/** A claim stream's event as a change, in the kind's own format if it has one. */
function readChange(ref: ClaimRef, event: DomainEvent): ClaimChange | undefined {
  if (ref.kind.streamFormat) return ref.kind.streamFormat.read(event);
  if (event.type !== CLAIM_TAKEN && event.type !== CLAIM_RELEASED) return undefined;
  const { owner, at } = event.data as ClaimStreamEvent['data'];
  return { taken: event.type === CLAIM_TAKEN, owner, at };
}

/** The event that takes a claim (exported so a test can leave one behind as a crashed writer would). */
export function claimTaken(ref: ClaimRef, owner: string, metadata: EventMetadata, at: Date): NewEvent {
  return claimEvent(CLAIM_TAKEN, ref, owner, metadata, at);
}

function claimEvent(
  type: ClaimStreamEvent['type'],
  ref: ClaimRef,
  owner: string,
  metadata: EventMetadata,
  at: Date,
): NewEvent {
  const change: ClaimChange = { taken: type === CLAIM_TAKEN, owner, at: at.toISOString() };
  const event: DomainEvent = ref.kind.streamFormat
    ? ref.kind.streamFormat.write(ref, change)
    : { type, data: { scope: ref.scope, kind: ref.kind.name, owner, at: change.at } };
  return { id: uuidv7(), ...event, metadata: { ...metadata, occurredAt: change.at } };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Claims as streams, for stores without multi-stream transactions (EventStoreDB). The
 * claim is appended before the owner's events: the first taker of a value appends with
 * `no_stream`, so of twenty racing takers exactly one wins; the others read the claim
 * and ask the kind whether its owner carries the value:
 *
 * - it does: the value is taken (ClaimTakenError);
 * - it does not, but the claim is younger than the grace period: a write in flight,
 *   waited for;
 * - it does not and the claim was released: free, taken at the claim stream's revision;
 * - it does not and the grace period is over (the owner crashed between its claim and its
 *   append, or gave the value up without releasing it): taken over, after a ClaimFenced
 *   appended to the owner's stream at the revision that showed it without the value, so
 *   that a write of the owner still in flight fails instead of landing a value now owned
 *   by someone else. No timing makes two owners hold one value.
 *
 * A claim is only as good as its owner's stream, so releases are hygiene: they let the
 * next taker skip the grace period.
 */
export class StreamClaims implements Claims {
  private readonly graceMs: number;
  private readonly pollMs: number;

  constructor(
    private readonly store: EventStore,
    options: StreamClaimsOptions = {},
  ) {
    this.graceMs = options.graceMs ?? DEFAULT_CLAIM_GRACE_MS;
    this.pollMs = options.pollMs ?? 20;
  }

  async append(request: ClaimedAppend): Promise<AppendResult> {
    const take = sortClaims(request.take);
    const release = sortClaims(request.release).filter((r) => !take.some((t) => sameClaim(r, t)));
    const metadata = request.events[0]?.metadata;
    const options = { expectedRevision: request.expectedRevision };
    if (!metadata || (!take.length && !release.length))
      return this.store.append(request.stream, request.events, options);
    const fresh: ClaimRef[] = [];
    let result: AppendResult;
    try {
      for (const ref of take) if (await this.acquire(ref, request.stream, metadata)) fresh.push(ref);
      result = await this.store.append(request.stream, request.events, options);
    } catch (error) {
      // Nothing of ours landed: give back what this call took (a crash here is what the takeover is for).
      await Promise.all(
        fresh.map((ref) => this.release(ref, request.stream, metadata).catch(() => undefined)),
      );
      throw error;
    }
    await Promise.all(
      release.map((ref) => this.release(ref, request.stream, metadata).catch(() => undefined)),
    );
    return result;
  }

  async ownerOf(scope: string, kind: ClaimKind, value: string): Promise<string | undefined> {
    const ref = { scope, kind, value };
    for (;;) {
      const claim = await this.read(ref);
      if (claim.last === null) return undefined;
      const verdict = await this.verdict(ref, claim);
      if (verdict.kind === 'live') return claim.last;
      if (verdict.kind === 'dead') return undefined;
      await sleep(this.pollMs);
    }
  }

  /** Takes the claim for `owner`; true when this call appended it, false when it already held it. */
  private async acquire(ref: ClaimRef, owner: string, metadata: EventMetadata): Promise<boolean> {
    const stream = claimStreamName(ref);
    // Most values are new: try the winning append first and read only when it loses.
    if (await this.tryAppend(stream, claimTaken(ref, owner, metadata, new Date()), 'no_stream')) return true;
    for (;;) {
      const claim = await this.read(ref);
      if (claim.holder === owner) return false;
      if (claim.last !== null && claim.last !== owner) {
        const verdict = await this.verdict(ref, claim);
        if (verdict.kind === 'live')
          throw new ClaimTakenError(ref.scope, ref.kind.name, ref.value, claim.last);
        if (verdict.kind === 'pending') {
          await sleep(this.pollMs);
          continue;
        }
        if (
          verdict.fenceAt !== undefined &&
          !(await this.fence(ref, claim.last, verdict.fenceAt, owner, metadata))
        )
          continue;
      }
      const expected = claim.revision ?? 'no_stream';
      if (await this.tryAppend(stream, claimTaken(ref, owner, metadata, new Date()), expected)) return true;
    }
  }

  private async release(ref: ClaimRef, owner: string, metadata: EventMetadata): Promise<void> {
    const claim = await this.read(ref);
    if (claim.holder !== owner || claim.revision === undefined) return;
    const event = claimEvent(CLAIM_RELEASED, ref, owner, metadata, new Date());
    await this.tryAppend(claimStreamName(ref), event, claim.revision);
  }

  private async read(ref: ClaimRef): Promise<ClaimState> {
    const events = await this.store.readStream(claimStreamName(ref));
    const state: ClaimState = { holder: null, last: null, at: null, revision: undefined };
    for (const e of events) {
      const change = readChange(ref, { type: e.type, data: e.data });
      if (change?.taken) Object.assign(state, { holder: change.owner, last: change.owner, at: change.at });
      else if (change && state.holder === change.owner)
        Object.assign(state, { holder: null, last: change.owner, at: change.at });
      state.revision = e.revision;
    }
    return state;
  }

  private async verdict(ref: ClaimRef, claim: ClaimState): Promise<Verdict> {
    const events = await this.store.readStream(claim.last!);
    const own: DomainEvent[] = events
      .filter((e) => e.type !== CLAIM_FENCED)
      .map((e) => ({ type: e.type, data: e.data }));
    if (ref.kind.holds(own, ref.value, ref.scope)) return { kind: 'live' };
    // A release is written after the append that gave the value up, and taking it back
    // needs a new claim: no write of the releaser can be in flight with this value.
    if (claim.holder === null) return { kind: 'dead' };
    if (Date.now() - Date.parse(claim.at ?? '') < this.graceMs) return { kind: 'pending' };
    return { kind: 'dead', fenceAt: events.length ? events[events.length - 1].revision : 'no_stream' };
  }

  /** Moves the dead owner's stream on, so a write it still has in flight fails its revision check. */
  private async fence(
    ref: ClaimRef,
    deadOwner: string,
    at: bigint | 'no_stream',
    by: string,
    metadata: EventMetadata,
  ): Promise<boolean> {
    const now = new Date().toISOString();
    const event: NewEvent = {
      id: uuidv7(),
      type: CLAIM_FENCED,
      data: { kind: ref.kind.name, by, fencedAt: now },
      metadata: { ...metadata, occurredAt: now },
    };
    return this.tryAppend(deadOwner, event, at);
  }

  private async tryAppend(stream: string, event: NewEvent, expected: ExpectedRevision): Promise<boolean> {
    try {
      await this.store.append(stream, [event], { expectedRevision: expected });
      return true;
    } catch (err) {
      if (err instanceof WrongExpectedRevisionError) return false;
      throw err;
    }
  }
}
