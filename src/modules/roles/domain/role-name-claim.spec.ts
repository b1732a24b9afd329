import { ClaimTakenError } from '../../../core/claims/claims';
import { fold } from '../../../core/cqrs/decider';
import { ConflictError } from '../../../core/http/domain-errors';
import { MemberRoleEvent, memberRoleDecider } from './member-role';
import { ROLE_NAME_CLAIM, roleNameClaims, roleNameConflict } from './role-name-claim';

const wid = '0190a6c4-0000-7000-8000-000000000001';
const now = '2026-11-21T10:00:00.000Z';
const created = (name: string, builtIn: 'manager' | null = null): MemberRoleEvent => ({
  type: 'MemberRoleCreated',
  data: { roleId: 9, workspaceId: wid, name, permissions: [], builtIn, createdAt: now },
});
const renamed = (name: string): MemberRoleEvent => ({
  type: 'MemberRoleUpdated',
  data: { roleId: 9, workspaceId: wid, name, updatedAt: now },
});
const deleted: MemberRoleEvent = {
  type: 'MemberRoleDeleted',
  data: { roleId: 9, workspaceId: wid, deletedAt: now },
};
const state = (events: MemberRoleEvent[]) => fold(memberRoleDecider, events);
const claim = (value: string) => ({ scope: wid, kind: ROLE_NAME_CLAIM, value });

describe('role name claims', () => {
  it('claims the normalised name of a new custom role, and none for a built-in role', () => {
    expect(roleNameClaims([created(' Field  Sales ')], state([]))).toEqual({
      take: [claim('field sales')],
      release: [],
    });
    expect(roleNameClaims([created('Manager', 'manager')], state([]))).toEqual({ take: [], release: [] });
  });

  it('moves the claim on a rename and frees it on delete or merge', () => {
    const before = state([created('Sales')]);
    expect(roleNameClaims([renamed('Field-Sales')], before)).toEqual({
      take: [claim('field sales')],
      release: [claim('sales')],
    });
    const accessOnly: MemberRoleEvent = {
      type: 'MemberRoleUpdated',
      data: { roleId: 9, workspaceId: wid, permissions: ['chats:read'], updatedAt: now },
    };
    expect(roleNameClaims([accessOnly], before)).toEqual({ take: [], release: [] });
    expect(roleNameClaims([deleted], before)).toEqual({ take: [], release: [claim('sales')] });
  });

  it('tells a live holder (EventStoreDB takeover) from one that no longer carries the name', () => {
    expect(ROLE_NAME_CLAIM.holds([created('Sales')], 'sales', wid)).toBe(true);
    expect(ROLE_NAME_CLAIM.holds([created('Sales'), renamed('Ops')], 'sales', wid)).toBe(false);
    expect(ROLE_NAME_CLAIM.holds([created('Sales'), deleted], 'sales', wid)).toBe(false);
    expect(ROLE_NAME_CLAIM.holds([created('Sales')], 'sales', 'another-workspace')).toBe(false);
    expect(ROLE_NAME_CLAIM.holds([], 'sales', wid)).toBe(false);
  });

  it('words the conflict as before: the role holding the name', () => {
    const error = roleNameConflict(new ClaimTakenError(wid, 'role_name', 'sales', 'memberrole-7'), ' SALES ');
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.message).toBe('name: role 7 of this workspace is already named "SALES"');
  });
});
