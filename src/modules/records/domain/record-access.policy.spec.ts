import { ForbiddenError, NotFoundError } from '../../../core/http/domain-errors';
import {
  assertMayCreate,
  assertMayDelete,
  assertMayEdit,
  assertMayGrant,
  assertMayManageSchema,
  assertMayRead,
  assertMayRevoke,
  assertTypeRecordsAccess,
  HeldGrant,
  listScope,
  RecordCaller,
  seesDataType,
} from './record-access.policy';

const self: RecordCaller = { scopes: [], memberId: 1 };
const reader: RecordCaller = { scopes: ['records:read'], memberId: 1 };
const writer: RecordCaller = { scopes: ['records:write'], memberId: 1 };
const admin: RecordCaller = { scopes: ['records:admin'], memberId: 1 };
const own = { memberId: 1, dataTypeId: 4, visibility: 'workspace' as const };
const others = { memberId: 2, dataTypeId: 4, visibility: 'workspace' as const };
const unowned = { memberId: null, dataTypeId: 4, visibility: 'workspace' as const };
const secret = { memberId: 1, dataTypeId: 4, visibility: 'admin_only' as const };
const readGrant: HeldGrant[] = [{ ownerMemberId: 2, access: 'read', dataTypeId: null }];
const writeGrantOtherType: HeldGrant[] = [{ ownerMemberId: 2, access: 'write', dataTypeId: 5 }];
const writeGrant: HeldGrant[] = [{ ownerMemberId: 2, access: 'write', dataTypeId: 4 }];

const allowed = (fn: () => void) => {
  try {
    fn();
    return true;
  } catch (e) {
    if (e instanceof ForbiddenError || e instanceof NotFoundError) return false;
    throw e;
  }
};

describe('record access policy', () => {
  it('lets members read and edit their own records, and delete them with records:write', () => {
    expect(allowed(() => assertMayRead(self, own, []))).toBe(true);
    expect(allowed(() => assertMayEdit(self, own, []))).toBe(true);
    expect(allowed(() => assertMayDelete(self, own, []))).toBe(false);
    expect(allowed(() => assertMayDelete(writer, own, []))).toBe(true);
  });

  it("needs records:admin or a grant for another member's records", () => {
    for (const caller of [self, reader, writer]) {
      expect(allowed(() => assertMayRead(caller, others, []))).toBe(false);
      expect(allowed(() => assertMayEdit(caller, others, []))).toBe(false);
    }
    expect(allowed(() => assertMayRead(self, others, readGrant))).toBe(true);
    expect(allowed(() => assertMayEdit(self, others, readGrant))).toBe(false);
    expect(allowed(() => assertMayEdit(self, others, writeGrantOtherType))).toBe(false);
    expect(allowed(() => assertMayEdit(self, others, writeGrant))).toBe(true);
    expect(allowed(() => assertMayDelete(self, others, writeGrant))).toBe(true);
    expect(allowed(() => assertMayRead(admin, others, []))).toBe(true);
    expect(allowed(() => assertMayDelete(admin, others, []))).toBe(true);
  });

  it('reads unowned records with records:read and writes them with records:write', () => {
    expect(allowed(() => assertMayRead(self, unowned, []))).toBe(false);
    expect(allowed(() => assertMayRead(reader, unowned, []))).toBe(true);
    expect(allowed(() => assertMayEdit(reader, unowned, []))).toBe(false);
    expect(allowed(() => assertMayEdit(writer, unowned, []))).toBe(true);
  });

  it("creates one's own record freely, another member's or an unowned one with records:write", () => {
    expect(allowed(() => assertMayCreate(self, 1, 'workspace'))).toBe(true);
    expect(allowed(() => assertMayCreate(self, 2, 'workspace'))).toBe(false);
    expect(allowed(() => assertMayCreate(self, null, 'workspace'))).toBe(false);
    expect(allowed(() => assertMayCreate(writer, 2, 'workspace'))).toBe(true);
  });

  it("keeps an admin-only type's records to records:admin, own ones included", () => {
    for (const caller of [self, reader, writer]) {
      expect(allowed(() => assertMayRead(caller, secret, []))).toBe(false);
      expect(allowed(() => assertMayCreate(caller, 1, 'admin_only'))).toBe(false);
    }
    expect(allowed(() => assertMayEdit(admin, secret, []))).toBe(true);
  });

  it('lists everything for records:admin; else own, unowned with records:read, and granted owners of this type', () => {
    expect(listScope(admin, 4, [])).toEqual({ all: true });
    expect(listScope(reader, 4, [...readGrant, ...writeGrantOtherType])).toEqual({
      all: false,
      selfId: 1,
      unowned: true,
      owners: [2],
    });
    expect(listScope(self, 4, writeGrantOtherType)).toEqual({
      all: false,
      selfId: 1,
      unowned: false,
      owners: [],
    });
  });

  it("manages an admin-only type's schema by its owner or datatypes:admin", () => {
    const type = { visibility: 'admin_only' as const, ownerMemberId: 9 };
    expect(allowed(() => assertMayManageSchema({ scopes: ['datatypes:write'], memberId: 1 }, type))).toBe(
      false,
    );
    expect(allowed(() => assertMayManageSchema({ scopes: ['datatypes:write'], memberId: 9 }, type))).toBe(
      true,
    );
    expect(allowed(() => assertMayManageSchema({ scopes: ['datatypes:admin'], memberId: 1 }, type))).toBe(
      true,
    );
    expect(
      allowed(() => assertMayManageSchema({ scopes: [], memberId: 1 }, { ...type, visibility: 'workspace' })),
    ).toBe(true);
  });

  it('grants: records:admin for anyone, members share their own; the grantee may give one up', () => {
    expect(allowed(() => assertMayGrant(self, 1, 'read'))).toBe(true);
    expect(allowed(() => assertMayGrant(writer, 2, 'read'))).toBe(false);
    expect(allowed(() => assertMayGrant(admin, 2, 'write'))).toBe(true);
    // A write grant lets the grantee delete: the owner gives it only holding records:write.
    expect(allowed(() => assertMayGrant(self, 1, 'write'))).toBe(false);
    expect(allowed(() => assertMayGrant(writer, 1, 'write'))).toBe(true);
    expect(allowed(() => assertMayRevoke(self, { ownerMemberId: 2, granteeMemberId: 1 }))).toBe(true);
    expect(allowed(() => assertMayRevoke(self, { ownerMemberId: 2, granteeMemberId: 3 }))).toBe(false);
  });
});

describe('the self rule under a scoped credential', () => {
  // An API key or OAuth token whose own scopes name no records scope (role: Manager).
  const chatsKey: RecordCaller = { scopes: ['chats:read'], memberId: 1, credentialScopes: ['chats:read'] };
  const readKey: RecordCaller = { scopes: ['records:read'], memberId: 1, credentialScopes: ['records:read'] };
  // A key naming records:write for a member whose role holds no records scope (External).
  const externalKey: RecordCaller = { scopes: [], memberId: 1, credentialScopes: ['records:write'] };

  it('needs the credential to name records at the level asked for', () => {
    expect(allowed(() => assertMayRead(chatsKey, own, []))).toBe(false);
    expect(allowed(() => assertMayEdit(chatsKey, own, []))).toBe(false);
    expect(allowed(() => assertMayCreate(chatsKey, 1, 'workspace'))).toBe(false);
    expect(allowed(() => assertMayGrant(chatsKey, 1, 'read'))).toBe(false);
    expect(listScope(chatsKey, 4, [])).toMatchObject({ all: false, selfId: null });
    expect(allowed(() => assertMayRead(readKey, own, []))).toBe(true);
    expect(allowed(() => assertMayEdit(readKey, own, []))).toBe(false);
    expect(allowed(() => assertMayEdit(externalKey, own, []))).toBe(true);
    expect(allowed(() => assertMayCreate(externalKey, 1, 'workspace'))).toBe(true);
    expect(allowed(() => assertMayRead(externalKey, others, []))).toBe(false);
  });

  it('answers an admin-only type a caller does not see as absent (404), one it sees but may not use as 403', () => {
    const schemaReader: RecordCaller = { scopes: ['datatypes:read', 'records:write'], memberId: 1 };
    expect(seesDataType(self, 'admin_only')).toBe(false);
    expect(seesDataType(writer, 'admin_only')).toBe(false);
    expect(seesDataType(self, 'workspace')).toBe(true);
    expect(seesDataType(schemaReader, 'admin_only')).toBe(true);
    expect(seesDataType(admin, 'admin_only')).toBe(true);
    expect(() => assertTypeRecordsAccess(self, 'admin_only')).toThrow(NotFoundError);
    expect(() => assertTypeRecordsAccess(writer, 'admin_only')).toThrow('Data type not found');
    expect(() => assertMayCreate(self, 1, 'admin_only')).toThrow(NotFoundError);
    expect(() => assertTypeRecordsAccess(schemaReader, 'admin_only')).toThrow(ForbiddenError);
    expect(() => assertTypeRecordsAccess(admin, 'admin_only')).not.toThrow();
  });
});
