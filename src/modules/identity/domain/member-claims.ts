import { createHash } from 'node:crypto';
import { ClaimKind, ClaimPlan, ClaimRef, defineClaimKind } from '../../../core/claims/claims';
import type { DomainEvent } from '../../../core/cqrs/decider';
import { memberStream } from './identity.events';
import { memberDecider } from './member';
import type {
  ClaimEvent,
  MemberEvent,
  MemberSnapshot,
  MemberValueClaimed,
  MemberValueReleased,
  UniqueMemberField,
} from './member.events';

/**
 * Member email, phone and externalId are unique per workspace through core claims
 * (core/claims, README "Uniqueness"): scope = workspace id, owner = the member stream.
 *
 * On EventStoreDB the claims stay in the streams identity wrote before core claims
 * existed, `claim-member-<field>-<wid>-<sha256(value)>` with MemberValueClaimed /
 * MemberValueReleased events (streamFormat), so every claim taken before the move stays
 * binding and history is not rewritten. On PostgreSQL they are rows of `claims`.
 */
const STREAM_FIELD: Record<UniqueMemberField, string> = {
  email: 'email',
  phone: 'phone',
  externalId: 'externalid',
};

const hash = (value: string) => createHash('sha256').update(value).digest('hex');

/** The member id of an owner stream (`member-<id>`). */
export function memberIdOf(owner: string): number {
  return Number(owner.slice('member-'.length));
}

function kindFor(field: UniqueMemberField, name: string): ClaimKind {
  return defineClaimKind({
    name,
    // A claim counts while its member exists, is not archived and still carries the value.
    holds(events: readonly DomainEvent[], value: string, scope: string): boolean {
      const { member } = (events as readonly MemberEvent[]).reduce(
        memberDecider.evolve,
        memberDecider.initialState(),
      );
      return (
        !!member && member.status !== 'archived' && member.workspaceId === scope && member[field] === value
      );
    },
    streamFormat: {
      streamName: (ref) => `claim-member-${STREAM_FIELD[field]}-${ref.scope}-${hash(ref.value)}`,
      read(event) {
        const e = event as ClaimEvent;
        if (e.type === 'MemberValueClaimed')
          return { taken: true, owner: memberStream(e.data.memberId), at: e.data.claimedAt };
        if (e.type === 'MemberValueReleased')
          return { taken: false, owner: memberStream(e.data.memberId), at: e.data.releasedAt };
        return undefined;
      },
      write(ref, change): MemberValueClaimed | MemberValueReleased {
        const base = { workspaceId: ref.scope, field, memberId: memberIdOf(change.owner) };
        return change.taken
          ? { type: 'MemberValueClaimed', data: { ...base, claimedAt: change.at } }
          : { type: 'MemberValueReleased', data: { ...base, releasedAt: change.at } };
      },
    },
  });
}

export const MEMBER_CLAIM_KINDS: Record<UniqueMemberField, ClaimKind> = {
  email: kindFor('email', 'member_email'),
  phone: kindFor('phone', 'member_phone'),
  externalId: kindFor('externalId', 'member_external_id'),
};

/** The field a member claim kind is about. */
export function fieldOfKind(kind: string): UniqueMemberField {
  const field = (Object.keys(MEMBER_CLAIM_KINDS) as UniqueMemberField[]).find(
    (f) => MEMBER_CLAIM_KINDS[f].name === kind,
  );
  if (!field) throw new Error(`Not a member claim kind: ${kind}`);
  return field;
}

export function memberClaim(workspaceId: string, field: UniqueMemberField, value: string): ClaimRef {
  return { scope: workspaceId, kind: MEMBER_CLAIM_KINDS[field], value };
}

/** The claims a member holds for what it carries: one per non-empty unique field; none once archived. */
export function memberClaimsOf(
  member: Pick<MemberSnapshot, 'workspaceId' | 'email' | 'phone' | 'externalId' | 'status'> | null,
): ClaimRef[] {
  if (!member || member.status === 'archived') return [];
  return (['externalId', 'email', 'phone'] as const).flatMap((field) => {
    const value = member[field];
    return value ? [memberClaim(member.workspaceId, field, value)] : [];
  });
}

/** What a change of a member takes and gives up: the values it gains, and those it drops. */
export function memberClaimPlan(before: MemberSnapshot | null, after: MemberSnapshot | null): ClaimPlan {
  const had = memberClaimsOf(before);
  const has = memberClaimsOf(after);
  const same = (a: ClaimRef, b: ClaimRef) => a.kind === b.kind && a.value === b.value;
  return {
    take: has.filter((r) => !had.some((h) => same(r, h))),
    release: had.filter((r) => !has.some((h) => same(r, h))),
  };
}
