import { createHash } from 'node:crypto';
import type { ClaimEvent, MemberSnapshot, UniqueMemberField } from './member.events';

/** One uniqueness claim: a normalised value of one field in one workspace. */
export interface ClaimKey {
  workspaceId: string;
  field: UniqueMemberField;
  /** SHA-256 of the normalised value, hex: the stream name never carries the value itself. */
  hash: string;
  stream: string;
}

const STREAM_FIELD: Record<UniqueMemberField, string> = {
  email: 'email',
  phone: 'phone',
  externalId: 'externalid',
};

export function hashValue(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

export function claimKey(workspaceId: string, field: UniqueMemberField, value: string): ClaimKey {
  const hash = hashValue(value);
  return { workspaceId, field, hash, stream: `claim-member-${STREAM_FIELD[field]}-${workspaceId}-${hash}` };
}

/** The claims a member holds for what it currently has: one per non-empty unique field. */
export function claimKeysOf(
  member: Pick<MemberSnapshot, 'workspaceId' | 'email' | 'phone' | 'externalId'>,
): ClaimKey[] {
  const out: ClaimKey[] = [];
  for (const field of ['externalId', 'email', 'phone'] as const) {
    const v = member[field];
    if (v) out.push(claimKey(member.workspaceId, field, v));
  }
  return out;
}

/** Does the member (as it stands) still carry the value this claim is for? */
export function memberCarries(
  member: Pick<MemberSnapshot, 'email' | 'phone' | 'externalId'>,
  key: ClaimKey,
): boolean {
  const v = member[key.field];
  return !!v && hashValue(v) === key.hash;
}

export interface ClaimState {
  /** The member holding the claim; null when never claimed or released. */
  holder: number | null;
  /** The member the last event was about: the holder, or the one that released it. */
  last: number | null;
  /** When the last event happened (claim or release). */
  at: string | null;
}

export function foldClaim(events: readonly ClaimEvent[]): ClaimState {
  let state: ClaimState = { holder: null, last: null, at: null };
  for (const e of events) {
    if (e.type === 'MemberValueClaimed')
      state = { holder: e.data.memberId, last: e.data.memberId, at: e.data.claimedAt };
    else if (state.holder === e.data.memberId)
      state = { holder: null, last: e.data.memberId, at: e.data.releasedAt };
  }
  return state;
}
