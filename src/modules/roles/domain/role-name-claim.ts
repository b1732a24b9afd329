import { ClaimPlan, ClaimRef, ClaimTakenError, defineClaimKind } from '../../../core/claims/claims';
import { fold } from '../../../core/cqrs/decider';
import { ConflictError } from '../../../core/http/domain-errors';
import { MemberRoleEvent, memberRoleDecider, MemberRoleState } from './member-role';
import { normalizeRoleName } from './role-aliases';

/**
 * Custom role names are unique per workspace up to case, blanks, `_` and `-` (Roles
 * rule 5): each custom role holds a core claim (scope: the workspace, value: the
 * normalised name) taken with the event that gives it the name and released with the one
 * that takes it away. Built-in roles hold none: only their exact names are reserved,
 * which the decider checks, so a custom "manager" can sit beside Manager until merged.
 */
export const ROLE_NAME_CLAIM = defineClaimKind({
  name: 'role_name',
  holds(events, value, scope) {
    const role = fold(memberRoleDecider, events as MemberRoleEvent[]);
    return (
      role.status === 'active' &&
      role.builtIn === null &&
      role.workspaceId === scope &&
      normalizeRoleName(role.name) === value
    );
  },
});

const claimOf = (workspaceId: string, name: string): ClaimRef => ({
  scope: workspaceId,
  kind: ROLE_NAME_CLAIM,
  value: normalizeRoleName(name),
});

/** The claims the decided events take and give up, given the role before them. */
export function roleNameClaims(events: readonly MemberRoleEvent[], before: MemberRoleState): ClaimPlan {
  const take: ClaimRef[] = [];
  const release: ClaimRef[] = [];
  let name = before.status === 'active' && before.builtIn === null ? before.name : undefined;
  for (const e of events) {
    const ws = e.data.workspaceId;
    if (e.type === 'MemberRoleCreated' && e.data.builtIn === null) {
      name = e.data.name;
      take.push(claimOf(ws, name));
    } else if (e.type === 'MemberRoleUpdated' && e.data.name !== undefined && name !== undefined) {
      release.push(claimOf(ws, name));
      name = e.data.name;
      take.push(claimOf(ws, name));
    } else if ((e.type === 'MemberRoleDeleted' || e.type === 'MemberRolesMerged') && name !== undefined) {
      release.push(claimOf(ws, name));
      name = undefined;
    }
  }
  return { take, release };
}

/** The 409 of a name another custom role of the workspace holds (owner: `memberrole-<id>`). */
export function roleNameConflict(error: ClaimTakenError, name: string): ConflictError {
  const holder = /^memberrole-(\d+)$/.exec(error.owner)?.[1] ?? error.owner;
  return new ConflictError(`name: role ${holder} of this workspace is already named "${name.trim()}"`);
}
