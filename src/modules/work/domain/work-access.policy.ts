import { grants } from '../../../core/auth/scopes';
import { ForbiddenError, NotFoundError } from '../../../core/http/domain-errors';

/** Who asks, as the command and query paths need it. */
export interface WorkCaller {
  /** Effective scopes in the workspace (credential ∩ role). */
  scopes: readonly string[];
  memberId: number | undefined;
  /** The caller holds the built-in External role (untrusted external member). */
  isExternal: boolean;
  /**
   * The scopes of an API key or OAuth token itself; undefined for a member token (the member
   * itself) and the service's own calls. A scoped credential bounds the self rule: its own
   * assignments only with assignments:read, starting one for itself only with assignments:write.
   */
  credentialScopes?: readonly string[];
}

/** The self rule for `scope`, unless the caller's own credential lacks it (see WorkCaller.credentialScopes). */
function selfBoundBy(caller: WorkCaller, scope: string): boolean {
  return caller.credentialScopes === undefined || grants(caller.credentialScopes, scope);
}

/**
 * Tasks and assignments use the assignments:* scopes (issue 10). Admin-only tasks
 * (`isAdmin`) exist only for holders of assignments:admin: lists leave them out and a
 * read, change or delete of one is a 404, as for a task that does not exist.
 */
export function seesAdminTasks(caller: WorkCaller): boolean {
  return grants(caller.scopes, 'assignments:admin');
}

export function assertMaySeeTask(caller: WorkCaller, task: { isAdmin: boolean }): void {
  if (task.isAdmin && !seesAdminTasks(caller)) throw new NotFoundError('Task not found');
}

/** Making an admin-only task hands out something only admins may see: it needs the same scope. */
export function assertMayCreateTask(caller: WorkCaller, input: { isAdmin?: boolean }): void {
  if (input.isAdmin && !seesAdminTasks(caller))
    throw new ForbiddenError('isAdmin: an admin-only task requires the scope assignments:admin');
}

/**
 * Which assignments a caller sees: every one of the workspace with assignments:read, unless
 * it is an External member, who sees only its own (SPEC "Roles": External members access
 * their own assignments through member-scoped context). Without the scope, its own.
 */
export function assignmentVisibility(caller: WorkCaller): { all: true } | { all: false; memberId: number } {
  if (!caller.isExternal && grants(caller.scopes, 'assignments:read')) return { all: true };
  // Member ids start at 1: 0 is no one's.
  if (!selfBoundBy(caller, 'assignments:read')) return { all: false, memberId: 0 };
  return { all: false, memberId: caller.memberId ?? 0 };
}

/**
 * Starting a workflow (SPEC "Scopes", Workflows: any member can start a workflow without a
 * Member Role Gate): for oneself, any member; for another member, assignments:write. The
 * gate is checked afterwards for the member the assignment is for.
 */
export function assertMayStartFor(caller: WorkCaller, memberId: number): void {
  if (caller.memberId === memberId) {
    if (selfBoundBy(caller, 'assignments:write')) return;
    throw new ForbiddenError('This credential lacks the scope assignments:write');
  }
  if (caller.isExternal || !grants(caller.scopes, 'assignments:write'))
    throw new ForbiddenError(
      'memberId: starting a workflow for another member requires the scope assignments:write',
    );
}
