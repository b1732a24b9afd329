import { grants } from '../../../core/auth/scopes';
import type { Principal } from '../../../core/auth/principal';
import { NotFoundError } from '../../../core/http/domain-errors';
import type { Caller } from '../commands/member-input';
import type { MemberVisibility } from '../queries/member.queries';

export function callerOf(p: Principal): Caller {
  return { scopes: p.effectiveScopes, memberId: p.membership?.memberId };
}

/** Anonymous members are visible with members:admin; a member always sees itself. */
export function visibilityOf(p: Principal): MemberVisibility {
  return { anonymous: grants(p.effectiveScopes, 'members:admin'), selfId: p.membership?.memberId };
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
