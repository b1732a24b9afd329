import { grants, isValidScope } from '../../../core/auth/scopes';
import { ForbiddenError } from '../../../core/http/domain-errors';
import type { FileAccess, SiteAudience } from './role-access';

const MAX_NAMED = 5;

/**
 * No escalation: nobody can put into a role, or move anyone (themselves included) into a
 * role, scopes they do not hold. One rule for every path that changes what someone holds:
 * creating or updating a role, merging a role into another (its members move to the
 * target), setting the workspace default role, inviting, importing or assigning a member
 * with a role. `held` is the caller's effective scopes in the workspace (credential ∩
 * role); `granted` the scopes of the role being written or handed out.
 */
export function scopesNotHeld(held: readonly string[], granted: readonly string[]): string[] {
  return granted.filter((s) => isValidScope(s) && !grants(held, s));
}

/**
 * Refuses (403) unless `held` grants every scope of `granted`. The detail names the field
 * and the scopes the caller lacks, so a client knows what it would need.
 */
export function assertNoEscalation(
  held: readonly string[],
  granted: readonly string[],
  field: string,
  what = 'the role',
): void {
  const missing = scopesNotHeld(held, granted);
  if (!missing.length) return;
  throw new ForbiddenError(
    `${field}: ${what} grants ${named(missing)}, which this credential does not hold; nobody can grant more than they hold`,
  );
}

/**
 * The other direction: nobody takes access away from those who hold more than they do.
 * Changing a member's role or archiving the member needs every scope of the role the member
 * holds now; changing a role (its scopes, name or access) or merging it away needs every
 * scope the role grants now. Otherwise a members:write holder could demote the workspace's
 * Managers to External and lock everyone out.
 */
export function assertMayTakeAway(
  held: readonly string[],
  current: readonly string[],
  field: string,
  what: string,
): void {
  const missing = scopesNotHeld(held, current);
  if (!missing.length) return;
  throw new ForbiddenError(
    `${field}: ${what} grants ${named(missing)}, which this credential does not hold; nobody can change the access of those who hold more than they do`,
  );
}

/** A Manager-sized role would name 70 scopes: the first few say enough. */
function named(missing: readonly string[]): string {
  return missing.length > MAX_NAMED
    ? `${missing.slice(0, MAX_NAMED).join(', ')} and ${missing.length - MAX_NAMED} more`
    : missing.join(', ');
}

/**
 * A role's reach beyond its scopes (Site audience, grants on Files and Folders) is handed
 * out only by those who administer it: writing a non-empty site audience into a role (on
 * create, update, or a merge that copies a duplicate's access) needs sites:admin, file
 * and folder grants files:admin. Otherwise a role editor could give its own role every
 * site and admin on every folder. Clearing access is not a grant and needs neither.
 */
export function assertMayGrantResourceAccess(
  held: readonly string[],
  access: { siteAudience?: SiteAudience; fileAccess?: FileAccess },
  field?: string,
): void {
  const sites = access.siteAudience;
  if (sites && (sites.allSites || sites.siteIds.length) && !grants(held, 'sites:admin'))
    throw new ForbiddenError(
      `${field ?? 'siteAudience'}: granting a role site access needs sites:admin, which this credential does not hold`,
    );
  const files = access.fileAccess;
  if (files && (files.folders.length || files.files.length) && !grants(held, 'files:admin'))
    throw new ForbiddenError(
      `${field ?? 'fileAccess'}: granting a role file or folder access needs files:admin, which this credential does not hold`,
    );
}
