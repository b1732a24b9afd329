import { grants } from '../../../core/auth/scopes';
import type { Principal } from '../../../core/auth/principal';
import { ForbiddenError } from '../../../core/http/domain-errors';

/**
 * Who may read a workspace (GET /w/{wid}): a credential holding workspace:read there, or
 * a member token bound to it. A member token is a member-level credential for one member
 * of one workspace; that member already sees the workspace's id and name (GET /w, GET
 * /me), and its time zone and features are what a member's client needs to behave, so
 * the token reads the same body an operator does. It writes nothing there (PUT needs
 * workspace:admin, which a member token never carries). The guard has already checked
 * that the token is bound to this workspace and its member is active (else 404).
 */
export function assertCanReadWorkspace(p: Principal, workspaceId: string): void {
  if (grants(p.effectiveScopes, 'workspace:read')) return;
  if (p.credential.kind === 'member_token' && p.credential.workspaceId === workspaceId) return;
  throw new ForbiddenError('This credential lacks the scope workspace:read');
}

/**
 * Which workspaces GET /w lists: those of the account, narrowed for a credential bound to
 * one workspace (a member token; an OAuth access token, bound to the workspace chosen at
 * consent) to that one: it must not reveal the account's other workspaces.
 */
export function listedWorkspaceOf(p: Principal): string | undefined {
  if (p.credential.kind === 'member_token') return p.credential.workspaceId ?? '';
  return p.credential.workspaceId;
}
