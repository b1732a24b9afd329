import { grants } from '../../../core/auth/scopes';
import { ForbiddenError, NotFoundError } from '../../../core/http/domain-errors';
import type { Visibility } from './data-type.events';

/**
 * Who may see and change records (SPEC "Scopes", Data records and special cases 5-7).
 * The guard lets record routes through on any membership (@SelfAccess beside the scope);
 * these rules decide, in the handlers, once the record and its type are known:
 *
 * - an admin-only type's records need records:admin, whoever owns them;
 * - records:admin reads and changes every record;
 * - one's own records (memberId = self) are read and edited without any role scope;
 *   deleting them, like writing unowned records, needs records:write (rule 7). A scoped
 *   credential (API key, OAuth token) still bounds this: its own scopes must name
 *   records at that level, so an app granted `workspace:read` does not read the person's
 *   records (PHI) through the self rule;
 * - unowned records (no memberId) are read with records:read, written with records:write;
 * - another member's records are read with a read or write grant from that member, and
 *   edited or deleted with a write grant (rule 5); creating one needs records:write.
 */
export interface RecordCaller {
  /** Effective scopes in the workspace (credential ∩ role; none for member tokens). */
  scopes: readonly string[];
  memberId: number | undefined;
  /**
   * The credential's own scopes, before the role intersection, when it carries any (API
   * keys, OAuth tokens); undefined for a member token, which acts as the member itself.
   */
  credentialScopes?: readonly string[];
}

/** Whether the self rule reaches this far for the credential (see credentialScopes). */
const selfAllowed = (caller: RecordCaller, level: 'read' | 'write'): boolean =>
  caller.credentialScopes === undefined || grants(caller.credentialScopes, `records:${level}`);

/** One's own record: true when the self rule allows it, a 403 when the credential's scopes stop it. */
function ownRecord(caller: RecordCaller, memberId: number | null, level: 'read' | 'write'): boolean {
  if (memberId === null || memberId !== caller.memberId) return false;
  if (selfAllowed(caller, level)) return true;
  throw new ForbiddenError(`This credential lacks the scope records:${level}`);
}

/** A sharing grant the caller holds: the owner's records (of one type, or all) to the grantee. */
export interface HeldGrant {
  ownerMemberId: number;
  access: 'read' | 'write';
  dataTypeId: number | null;
}

export interface RecordTarget {
  memberId: number | null;
  dataTypeId: number;
  visibility: Visibility;
}

export const isRecordsAdmin = (caller: RecordCaller): boolean => grants(caller.scopes, 'records:admin');

const grantFor = (held: readonly HeldGrant[], r: RecordTarget, write: boolean): boolean =>
  held.some(
    (g) =>
      g.ownerMemberId === r.memberId &&
      (g.dataTypeId === null || g.dataTypeId === r.dataTypeId) &&
      (!write || g.access === 'write'),
  );

/**
 * Whether the caller sees the type at all: every member sees workspace-wide forms; an
 * admin-only one is seen with datatypes:read (its schema) or records:admin (its records).
 * A type the caller does not see answers as one that does not exist, on every route that
 * names it (the type's own, its records', a grant's dataTypeId, signup's data), so its id
 * cannot be probed.
 */
export function seesDataType(caller: RecordCaller, visibility: Visibility): boolean {
  return visibility !== 'admin_only' || grants(caller.scopes, 'datatypes:read') || isRecordsAdmin(caller);
}

/**
 * Admin-only types: every record operation needs records:admin (special case 6); a caller
 * that does not even see the type gets the 404 of a type that does not exist.
 */
export function assertTypeRecordsAccess(caller: RecordCaller, visibility: Visibility): void {
  if (!seesDataType(caller, visibility)) throw new NotFoundError('Data type not found');
  if (visibility === 'admin_only' && !isRecordsAdmin(caller))
    throw new ForbiddenError('The records of an admin-only data type need the scope records:admin');
}

export function assertMayRead(caller: RecordCaller, r: RecordTarget, held: readonly HeldGrant[]): void {
  assertTypeRecordsAccess(caller, r.visibility);
  if (isRecordsAdmin(caller)) return;
  if (ownRecord(caller, r.memberId, 'read')) return;
  if (r.memberId === null) {
    if (grants(caller.scopes, 'records:read')) return;
    throw new ForbiddenError('This credential lacks the scope records:read');
  }
  if (grantFor(held, r, false)) return;
  throw new ForbiddenError("Reading another member's records needs the scope records:admin or a read grant");
}

export function assertMayEdit(caller: RecordCaller, r: RecordTarget, held: readonly HeldGrant[]): void {
  assertTypeRecordsAccess(caller, r.visibility);
  if (isRecordsAdmin(caller)) return;
  if (ownRecord(caller, r.memberId, 'write')) return;
  if (r.memberId === null) {
    if (grants(caller.scopes, 'records:write')) return;
    throw new ForbiddenError('This credential lacks the scope records:write');
  }
  if (grantFor(held, r, true)) return;
  throw new ForbiddenError("Editing another member's records needs the scope records:admin or a write grant");
}

export function assertMayDelete(caller: RecordCaller, r: RecordTarget, held: readonly HeldGrant[]): void {
  assertTypeRecordsAccess(caller, r.visibility);
  if (isRecordsAdmin(caller)) return;
  const foreign = r.memberId !== null && r.memberId !== caller.memberId;
  if (foreign) {
    if (grantFor(held, r, true)) return;
    throw new ForbiddenError(
      "Deleting another member's records needs the scope records:admin or a write grant",
    );
  }
  if (!grants(caller.scopes, 'records:write'))
    throw new ForbiddenError('This credential lacks the scope records:write');
}

/** A new record: one's own with no scope; unowned or another member's with records:write (rule 5). */
export function assertMayCreate(
  caller: RecordCaller,
  memberId: number | null,
  visibility: Visibility,
  field = 'memberId',
): void {
  assertTypeRecordsAccess(caller, visibility);
  if (isRecordsAdmin(caller) || grants(caller.scopes, 'records:write')) return;
  if (ownRecord(caller, memberId, 'write')) return;
  throw new ForbiddenError(
    memberId === null
      ? `This credential lacks the scope records:write (a record without ${field} belongs to nobody; send your own member id to keep one of yours)`
      : `${field}: creating a record for another member needs the scope records:write`,
  );
}

/** What a list shows the caller: everything, or its own, unowned (records:read) and granted owners' records. */
export function listScope(
  caller: RecordCaller,
  dataTypeId: number,
  held: readonly HeldGrant[],
): { all: true } | { all: false; selfId: number | null; unowned: boolean; owners: number[] } {
  if (isRecordsAdmin(caller)) return { all: true };
  return {
    all: false,
    selfId: selfAllowed(caller, 'read') ? (caller.memberId ?? null) : null,
    unowned: grants(caller.scopes, 'records:read'),
    owners: [
      ...new Set(
        held.filter((g) => g.dataTypeId === null || g.dataTypeId === dataTypeId).map((g) => g.ownerMemberId),
      ),
    ],
  };
}

/**
 * Schema management of an admin-only type: its owner and holders of datatypes:admin
 * (special case 6); a workspace-wide type follows the route's datatypes scope alone.
 */
export function assertMayManageSchema(
  caller: RecordCaller,
  type: { visibility: Visibility; ownerMemberId: number | null },
): void {
  if (type.visibility !== 'admin_only' || grants(caller.scopes, 'datatypes:admin')) return;
  if (type.ownerMemberId !== null && type.ownerMemberId === caller.memberId) return;
  throw new ForbiddenError(
    "An admin-only data type's schema is managed by its owner and holders of the scope datatypes:admin",
  );
}

/** Making a type admin-only hides its records from everyone but records:admin: only datatypes:admin or its owner. */
export function assertMaySetVisibility(
  caller: RecordCaller,
  type: { ownerMemberId: number | null } | undefined,
): void {
  if (grants(caller.scopes, 'datatypes:admin')) return;
  if (type && type.ownerMemberId !== null && type.ownerMemberId === caller.memberId) return;
  if (!type) return;
  throw new ForbiddenError(
    'visibility: changing it needs the scope datatypes:admin or being the owner of the type',
  );
}

/**
 * Who manages a grant: records:admin, or the owner sharing their own records; the grantee
 * may also give it up. A write grant lets the grantee delete the owner's records too
 * (assertMayDelete), which the owner itself does only with records:write: an owner without
 * it shares for read only, never giving more than it holds.
 */
export function assertMayGrant(caller: RecordCaller, ownerMemberId: number, access: string): void {
  if (isRecordsAdmin(caller)) return;
  if (caller.memberId !== undefined && ownRecord(caller, ownerMemberId, 'write')) {
    if (access === 'write' && !grants(caller.scopes, 'records:write'))
      throw new ForbiddenError(
        'access: sharing your records for write (which lets the grantee delete them) needs the scope records:write, as deleting them yourself does',
      );
    return;
  }
  throw new ForbiddenError(
    "ownerMemberId: sharing another member's records needs the scope records:admin; members share their own",
  );
}

export function assertMayRevoke(
  caller: RecordCaller,
  grant: { ownerMemberId: number; granteeMemberId: number },
): void {
  if (isRecordsAdmin(caller)) return;
  if (caller.memberId !== undefined && [grant.ownerMemberId, grant.granteeMemberId].includes(caller.memberId))
    return;
  throw new ForbiddenError(
    'Revoking this grant needs the scope records:admin, or being its owner or grantee',
  );
}
