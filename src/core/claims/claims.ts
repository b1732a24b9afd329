import { createHash } from 'node:crypto';
import type { DomainEvent } from '../cqrs/decider';
import type { AppendResult, ExpectedRevision, NewEvent } from '../event-store/event-store.port';

/**
 * Uniqueness in the command path (DESIGN.md, "Uniqueness"): a claim maps (scope, kind,
 * value) to one owner, the stream whose events carry the value. Claims are taken and
 * given up together with the owner's append, never by checking a read model first:
 *
 * - PostgreSQL: a `claims` row with a unique key, written in the transaction that appends
 *   the owner's events (postgres-claims.ts). Both commit or neither does.
 * - EventStoreDB (no multi-stream transaction): a claim stream per value, taken with
 *   `no_stream` before the owner's append (stream-claims.ts). A claim whose owner never
 *   got the value (crash between the two appends) is taken over after a grace period,
 *   behind a fence on the owner's stream; the kind's `holds` answers "does this owner
 *   still carry the value?" from the owner's own events.
 * - In memory, for unit tests (memory-claims.ts).
 *
 * Values are stored hashed: a claim never puts an email or phone number into a stream
 * name or a key column.
 */

/** What a feature declares once per kind of unique value (e.g. role names). */
export interface ClaimKind {
  /** Lower-case letters, digits and `_`; part of claim stream names and keys. */
  readonly name: string;
  /**
   * Whether the owner, as its own events tell (fence events left out), still carries
   * `value` in `scope`. Only EventStoreDB asks it, to tell a crashed or abandoned claim
   * from a live one; on PostgreSQL the claims table is exact.
   */
  holds(ownerEvents: readonly DomainEvent[], value: string, scope: string): boolean;
  /**
   * Claim streams a feature wrote before this mechanism, kept in place on EventStoreDB
   * (history is never rewritten): the kind names the value's existing stream and speaks
   * its event types, so old claims stay binding and new ones land beside them.
   */
  readonly streamFormat?: ClaimStreamFormat;
}

/** A change of a claim stream: the owner took the value, or gave it up. */
export interface ClaimChange {
  taken: boolean;
  owner: string;
  /** ISO time of the change. */
  at: string;
}

export interface ClaimStreamFormat {
  streamName(ref: ClaimRef): string;
  /** A stored event of that stream as a change; undefined for an event that is none. */
  read(event: DomainEvent): ClaimChange | undefined;
  /** The event recording a change. */
  write(ref: ClaimRef, change: ClaimChange): DomainEvent;
}

const KIND_NAME = /^[a-z][a-z0-9_]{0,39}$/;

export function defineClaimKind(kind: ClaimKind): ClaimKind {
  if (!KIND_NAME.test(kind.name)) throw new Error(`Claim kind name "${kind.name}" must match ${KIND_NAME}`);
  return kind;
}

/** One unique value: `scope` is usually the workspace id; `value` already normalised by the feature. */
export interface ClaimRef {
  scope: string;
  kind: ClaimKind;
  value: string;
}

export interface ClaimedAppend {
  /** The owner: the stream appended to, and the owner of every claim taken. */
  stream: string;
  events: readonly NewEvent[];
  expectedRevision: ExpectedRevision;
  /** Values the events give the owner: all taken, or nothing is appended. */
  take?: readonly ClaimRef[];
  /** Values the events take away from the owner: freed with the append. */
  release?: readonly ClaimRef[];
}

/** The claims one append takes and gives up (EventSourcedRepository.handle's `claims` option). */
export interface ClaimPlan {
  take?: readonly ClaimRef[];
  release?: readonly ClaimRef[];
}

export interface Claims {
  /**
   * Appends `events` to `stream` taking and releasing the claims with them. Throws
   * ClaimTakenError (nothing appended, no claim changed) when another owner holds a
   * value, WrongExpectedRevisionError (likewise) when the stream moved.
   */
  append(request: ClaimedAppend): Promise<AppendResult>;
  /**
   * Several owners' appends with their claims, all or nothing: a signup's member, account
   * and token, an import batch of new members. Results in the order of `requests`; each
   * claim is owned by the stream of its request. Only stores with multi-stream
   * transactions offer it (PostgreSQL, memory); on EventStoreDB it is undefined, and the
   * caller appends owner by owner.
   */
  appendMany?(requests: readonly ClaimedAppend[]): Promise<AppendResult[]>;
  /** The owner stream holding the value, if any. */
  ownerOf(scope: string, kind: ClaimKind, value: string): Promise<string | undefined>;
}

export const CLAIMS = Symbol('CLAIMS');

/** Another owner holds the value: features map this to 409 with their own wording. */
export class ClaimTakenError extends Error {
  constructor(
    readonly scope: string,
    readonly kind: string,
    readonly value: string,
    readonly owner: string,
  ) {
    super(`The ${kind} claim on this value is held by ${owner}`);
    this.name = 'ClaimTakenError';
  }
}

/**
 * The event a takeover appends to a dead owner's stream (EventStoreDB), at the revision
 * that showed the owner without the value: a write of that owner still in flight then
 * fails its revision check instead of landing a value someone else now owns.
 * EventSourcedRepository leaves it out when folding state; projections that track the
 * stream revision of a row (If-Match) should move it on.
 */
export const CLAIM_FENCED = 'ClaimFenced';

export interface ClaimFenced {
  type: typeof CLAIM_FENCED;
  data: { kind: string; by: string; fencedAt: string };
}

export function hashClaimValue(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Deterministic order, so two appends taking the same keys never wait on each other in a cycle. */
export function sortClaims(refs: readonly ClaimRef[] = []): ClaimRef[] {
  const key = (r: ClaimRef) => `${r.kind.name}\u0000${r.scope}\u0000${r.value}`;
  return [...refs].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/**
 * Checks a multi-owner write (Claims.appendMany): owners distinct, no value given to two
 * of them. Returns per request the releases that are not taken back in the same write.
 */
export function planMany(requests: readonly ClaimedAppend[]): { take: ClaimRef[]; release: ClaimRef[] }[] {
  const owners = new Set<string>();
  const takenBy = new Map<string, string>();
  return requests.map((r) => {
    if (owners.has(r.stream)) throw new Error(`appendMany: ${r.stream} is given twice`);
    owners.add(r.stream);
    const take = sortClaims(r.take);
    for (const ref of take) {
      const key = `${ref.kind.name}\u0000${ref.scope}\u0000${ref.value}`;
      const other = takenBy.get(key);
      if (other !== undefined) throw new ClaimTakenError(ref.scope, ref.kind.name, ref.value, other);
      takenBy.set(key, r.stream);
    }
    return { take, release: sortClaims(r.release).filter((x) => !take.some((t) => sameClaim(x, t))) };
  });
}

export function sameClaim(a: ClaimRef, b: ClaimRef): boolean {
  return a.kind.name === b.kind.name && a.scope === b.scope && a.value === b.value;
}
