import type { Principal } from '../../../core/auth/principal';
import { NotFoundError } from '../../../core/http/domain-errors';
import type { Caller } from '../commands/member-input';
import { memberVisibility } from '../domain/member-access.policy';
import type { MemberVisibility } from '../queries/member.queries';

export function callerOf(p: Principal): Caller {
  return {
    scopes: p.effectiveScopes,
    memberId: p.membership?.memberId,
    credentialScopes: p.credential.kind === 'member_token' ? undefined : p.credential.scopes,
  };
}

/** What the caller sees of members: the domain's rule (member-access.policy.ts). */
export function visibilityOf(p: Principal): MemberVisibility {
  return memberVisibility(callerOf(p));
}

/** Path ids that are not positive integers name no member: 404, as for an unknown id. */
export function memberIdOf(raw: string): number {
  if (!/^[1-9]\d{0,9}$/.test(raw) || Number(raw) > 2_147_483_647) throw new NotFoundError('Member not found');
  return Number(raw);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function invitationIdOf(raw: string): string {
  if (!UUID.test(raw)) throw new NotFoundError('Invitation not found');
  return raw.toLowerCase();
}
