import { grants } from '../../../core/auth/scopes';
import { ForbiddenError, NotFoundError } from '../../../core/http/domain-errors';

/** Who asks, as the command path needs it: effective scopes in the workspace and own member id. */
export interface Caller {
  scopes: readonly string[];
  memberId: number | undefined;
}

/**
 * Self-access (SPEC "Scopes", Members: own profile). The guard lets a route marked
 * @SelfAccess through on any credential with a membership; whether the caller may act on
 * this member is decided here, by the handler, once the member is known to exist: the
 * scope, or the caller's own member.
 */
export function assertScopeOrSelf(caller: Caller, scope: string, memberId: number): void {
  if (caller.memberId === memberId) return;
  if (!grants(caller.scopes, scope)) throw new ForbiddenError(`This credential lacks the scope ${scope}`);
}

/**
 * A change of a member (PUT member, revoking its tokens): members:write, or the member
 * itself; an anonymous member is invisible (404) to anyone without members:admin but
 * itself. Returns whether the caller holds members:write (self-access alone may change
 * only its own contact details and notification flags).
 */
export function authoriseMemberChange(
  caller: Caller,
  memberId: number,
  target: { anonymous: boolean },
): { canWrite: boolean } {
  const canWrite = grants(caller.scopes, 'members:write');
  const self = caller.memberId === memberId;
  if (!self && target.anonymous && !grants(caller.scopes, 'members:admin'))
    throw new NotFoundError('Member not found');
  if (!canWrite && !self) throw new ForbiddenError('This credential lacks the scope members:write');
  return { canWrite };
}
