import { Inject, Injectable } from '@nestjs/common';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import {
  EVENT_STORE,
  EventStore,
  WrongExpectedRevisionError,
} from '../../../core/event-store/event-store.port';
import { ClaimKey, ClaimState, foldClaim, memberCarries } from '../domain/claim';
import { memberStream } from '../domain/identity.events';
import { memberDecider } from '../domain/member';
import type { ClaimEvent, MemberValueClaimed, MemberValueReleased } from '../domain/member.events';

/**
 * How long a claim whose holder does not (yet) carry the value counts as a write in
 * flight. Claim-then-append takes milliseconds; past this the holder is presumed to
 * have crashed or failed, and the claim may be taken over behind a fence.
 */
export const CLAIM_GRACE_MS = 5_000;
const POLL_MS = 20;

export type AcquireResult = { acquired: true; fresh: boolean } | { acquired: false; holder: number };

type Verdict =
  { kind: 'live' } | { kind: 'pending' } | { kind: 'dead'; fence?: { revision: bigint | undefined } };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Uniqueness of member email, phone and externalId per workspace, enforced in the
 * command path with claim streams (DESIGN.md, "Uniqueness"). The first claim of a
 * value appends with 'no_stream', so of twenty racing requests exactly one wins on
 * either event store.
 *
 * A claim is only as good as its member: it counts while the member it names is
 * active and carries the value, whatever the claim stream says (a release can race
 * with the same member taking the value back). Any other claim (holder never created
 * after a crash, value changed, member archived, claim released) is taken over with
 * the claim's revision, but only after a fence on that member's stream, appended at
 * the revision that showed it without the value: a write of that member still in
 * flight then fails its revision check instead of landing a value now owned by
 * someone else. Crashes never leave a value blocked, and no timing makes two
 * members hold it. A young unconfirmed claim is waited for, so writes in flight win.
 */
@Injectable()
export class ClaimService {
  constructor(
    private readonly repo: EventSourcedRepository,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  /** Takes the claim for `memberId`, or says which live member holds it. */
  async acquire(key: ClaimKey, memberId: number): Promise<AcquireResult> {
    // Most values are new: try the winning append first and read only when it loses.
    if (await this.tryAppend(key, this.claimed(key, memberId), 'no_stream'))
      return { acquired: true, fresh: true };
    for (;;) {
      const { claim, revision } = await this.read(key);
      if (claim.holder === memberId) return { acquired: true, fresh: false };
      if (claim.last !== null && claim.last !== memberId) {
        const verdict = await this.verdict(key, claim);
        if (verdict.kind === 'live') return { acquired: false, holder: claim.last };
        if (verdict.kind === 'pending') {
          await sleep(POLL_MS);
          continue;
        }
        if (verdict.fence && !(await this.fence(key, claim.last, verdict.fence.revision))) continue;
      }
      if (await this.tryAppend(key, this.claimed(key, memberId), revision ?? 'no_stream'))
        return { acquired: true, fresh: true };
    }
  }

  /** The live member carrying the value, waiting out a claim still in flight. */
  async holder(key: ClaimKey): Promise<number | undefined> {
    for (;;) {
      const { claim } = await this.read(key);
      if (claim.last === null) return undefined;
      const verdict = await this.verdict(key, claim);
      if (verdict.kind === 'live') return claim.last;
      if (verdict.kind === 'dead') return undefined;
      await sleep(POLL_MS);
    }
  }

  /** Hygiene after a value is given up; correctness does not depend on it (see class comment). */
  async release(key: ClaimKey, memberId: number): Promise<void> {
    const { claim, revision } = await this.read(key);
    if (claim.holder !== memberId || revision === undefined) return;
    const released: MemberValueReleased = {
      type: 'MemberValueReleased',
      data: {
        workspaceId: key.workspaceId,
        field: key.field,
        memberId,
        releasedAt: new Date().toISOString(),
      },
    };
    await this.tryAppend(key, released, revision);
  }

  async releaseAll(keys: readonly ClaimKey[], memberId: number): Promise<void> {
    await Promise.all(keys.map((k) => this.release(k, memberId).catch(() => undefined)));
  }

  /** The event that takes a claim (bulk creation writes it together with the member). */
  claimed(key: ClaimKey, memberId: number): MemberValueClaimed {
    return {
      type: 'MemberValueClaimed',
      data: { workspaceId: key.workspaceId, field: key.field, memberId, claimedAt: new Date().toISOString() },
    };
  }

  private async read(key: ClaimKey): Promise<{ claim: ClaimState; revision: bigint | undefined }> {
    const events = await this.store.readStream(key.stream);
    const claim = foldClaim(events.map((e) => ({ type: e.type, data: e.data }) as ClaimEvent));
    return { claim, revision: events.length ? events[events.length - 1].revision : undefined };
  }

  private async verdict(key: ClaimKey, claim: ClaimState): Promise<Verdict> {
    const { state, revision } = await this.repo.load(memberStream(claim.last!), memberDecider);
    // A fenced, never-created member can no longer appear; an archived one cannot change.
    if (state.fenced && !state.exists) return { kind: 'dead' };
    if (state.member?.status === 'archived') return { kind: 'dead' };
    if (state.member && memberCarries(state.member, key)) return { kind: 'live' };
    const released = claim.holder === null;
    if (!released && Date.now() - Date.parse(claim.at ?? '') < CLAIM_GRACE_MS) return { kind: 'pending' };
    return { kind: 'dead', fence: { revision } };
  }

  /** Moves the holder's stream on, so a write it still has in flight fails its revision check. */
  private async fence(key: ClaimKey, holder: number, revision: bigint | undefined): Promise<boolean> {
    const [event] = memberDecider.decide(
      {
        type: 'FenceMember',
        memberId: holder,
        workspaceId: key.workspaceId,
        reason: revision === undefined ? 'orphan_claim' : 'stale_claim',
        now: new Date().toISOString(),
      },
      memberDecider.initialState(),
    );
    try {
      await this.repo.append(memberStream(holder), key.workspaceId, [event], revision ?? 'no_stream');
      return true;
    } catch (err) {
      if (err instanceof WrongExpectedRevisionError) return false;
      throw err;
    }
  }

  private async tryAppend(
    key: ClaimKey,
    event: ClaimEvent,
    expected: bigint | 'no_stream',
  ): Promise<boolean> {
    try {
      await this.repo.append(key.stream, key.workspaceId, [event], expected);
      return true;
    } catch (err) {
      if (err instanceof WrongExpectedRevisionError) return false;
      throw err;
    }
  }
}
