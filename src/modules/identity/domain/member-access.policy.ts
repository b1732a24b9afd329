import { grants } from '../../../core/auth/scopes';
import { ForbiddenError, NotFoundError } from '../../../core/http/domain-errors';

/** Who asks, as the command path needs it: effective scopes in the workspace and own member id. */
export interface Caller {
  scopes: readonly string[];
  memberId: number | undefined;
  /**
   * The scopes of an API key or OAuth token itself; undefined for a member token (the member
   * itself) and for the service's own calls. A scoped credential bounds the self rule: it
   * reaches its member's own profile only when it names the scope the route needs.
   */
  credentialScopes?: readonly string[];
}

/** The caller is this member, and its credential may act on it for `scope` (see Caller.credentialScopes). */
function actsAsSelf(caller: Caller, memberId: number, scope: string): boolean {
  if (caller.memberId !== memberId) return false;
  return caller.credentialScopes === undefined || grants(caller.credentialScopes, scope);
}

/**
 * Which members a caller sees: anonymous members (no name, email or phone) only with
 * members:admin; its own member always. Queries filter by it, so a hidden member is a 404.
 */
export function memberVisibility(caller: Caller): { anonymous: boolean; selfId?: number } {
  return { anonymous: grants(caller.scopes, 'members:admin'), selfId: caller.memberId };
}

/**
 * Self-access (SPEC "Scopes", Members: own profile). The guard lets a route marked
 * @SelfAccess through on any credential with a membership; whether the caller may act on
 * this member is decided here, by the handler, once the member is known to exist: the
 * scope, or the caller's own member (an API key or OAuth token only when its own scopes
 * name the scope: an app granted workspace:read never reads the person's profile).
 */
export function assertScopeOrSelf(caller: Caller, scope: string, memberId: number): void {
  if (actsAsSelf(caller, memberId, scope)) return;
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
  if (caller.memberId !== memberId && target.anonymous && !grants(caller.scopes, 'members:admin'))
    throw new NotFoundError('Member not found');
  if (!canWrite && !actsAsSelf(caller, memberId, 'members:write'))
    throw new ForbiddenError('This credential lacks the scope members:write');
  return { canWrite };
}

/**
 * Fields only holders of members:write may change, even on their own record (an agent's
 * model and instructions are its operators' to set, never its own).
 */
const OPERATOR_FIELDS = ['memberRoleId', 'externalId', 'agentModel', 'agentInstructions'] as const;
type OperatorField = (typeof OPERATOR_FIELDS)[number];

/**
 * Self-access changes contact details and notification flags only: without members:write,
 * a change of the role or the external id (to another value than it has) is a 403.
 */
export function assertSelfChangeAllowed(
  canWrite: boolean,
  changes: Partial<Record<OperatorField, unknown>>,
  current: Partial<Record<OperatorField, unknown>>,
): void {
  if (canWrite) return;
  for (const field of OPERATOR_FIELDS)
    if (changes[field] !== undefined && changes[field] !== (current[field] ?? null))
      throw new ForbiddenError(`${field}: changing it requires the scope members:write`);
}

/**
 * A signup that finds an existing member answers with a member token of that member: its
 * own profile, chats and records. Signing in the people every signup makes (holding at most
 * what the workspace's default role grants) is the operator's business; signing in one who
 * holds more than that needs every scope of it the caller lacks would be acting as those
 * who hold more than the caller (a `members:write` key reading the workspace owner's own
 * records, rewriting its profile). `memberRole` and `defaultRole` are the scopes the
 * member's role and the default role grant now.
 */
export function assertMaySignIn(
  held: readonly string[],
  memberRole: readonly string[],
  defaultRole: readonly string[],
): void {
  const beyond = memberRole.filter((s) => !grants(held, s) && !grants(defaultRole, s));
  if (!beyond.length) return;
  const named =
    beyond.length > 5 ? `${beyond.slice(0, 5).join(', ')} and ${beyond.length - 5} more` : beyond.join(', ');
  throw new ForbiddenError(
    `member: this member's role grants ${named}, which this credential does not hold; a signup cannot sign in those who hold more than the caller`,
  );
}
