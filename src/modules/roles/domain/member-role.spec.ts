import { ALL_SCOPES } from '../../../core/auth/scopes';
import {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  ValidationError,
} from '../../../core/http/domain-errors';
import { deciderSpec } from '../../../core/testing/decider-spec';
import { BUILT_IN_ROLES, BuiltInRoleKey } from './built-in-roles';
import {
  MemberRoleCommand,
  MemberRoleEvent,
  memberRoleDecider,
  MergeTarget,
  RoleHolder,
} from './member-role';
import { EMPTY_FILE_ACCESS, EMPTY_SITE_AUDIENCE } from './role-access';

const spec = deciderSpec(memberRoleDecider);
const wid = '0190a6c4-0000-7000-8000-000000000001';
const otherWid = '0190a6c4-0000-7000-8000-000000000002';
const now = '2026-11-21T10:00:00.000Z';

function created(
  roleId: number,
  name: string,
  builtIn: BuiltInRoleKey | null = null,
  permissions: string[] = [],
): MemberRoleEvent {
  return {
    type: 'MemberRoleCreated',
    data: { roleId, workspaceId: wid, name, permissions, builtIn, createdAt: now },
  };
}
const builtIn = (key: BuiltInRoleKey, roleId: number) => {
  const r = BUILT_IN_ROLES.find((b) => b.key === key)!;
  return created(roleId, r.name, key, [...r.permissions]);
};
const target = (roleId: number, builtInKey: BuiltInRoleKey | null, name = 'x'): MergeTarget => ({
  roleId,
  workspaceId: wid,
  name,
  builtIn: builtInKey,
});
const person = (memberId: number, hasAccount = true): RoleHolder => ({
  memberId,
  kind: 'person',
  hasAccount,
});
const agent = (memberId: number): RoleHolder => ({ memberId, kind: 'agent', hasAccount: true });

function merge(
  over: Partial<Extract<MemberRoleCommand, { type: 'MergeMemberRole' }>> = {},
): MemberRoleCommand {
  return {
    type: 'MergeMemberRole',
    roleId: 20,
    workspaceId: wid,
    target: target(1, 'manager', 'Manager'),
    resourceAccess: 'copy',
    holders: [],
    invitationIds: [],
    isWorkspaceDefault: false,
    now,
    ...over,
  };
}

describe('built-in roles', () => {
  it('grant exactly the spec scopes', () => {
    const scopes = Object.fromEntries(BUILT_IN_ROLES.map((r) => [r.name, [...r.permissions].sort()]));
    expect(scopes).toEqual({
      Manager: [...ALL_SCOPES].sort(),
      'Platform Support': [...ALL_SCOPES].sort(),
      User: ['agents:read', 'devices:write', 'dm:read', 'dm:write'],
      Agent: [],
      External: [],
    });
    expect(ALL_SCOPES).toHaveLength(72);
  });

  it('lists every grantable scope: each namespace in spec order at read, write and admin', () => {
    expect(ALL_SCOPES.slice(0, 4)).toEqual(['agents:read', 'agents:write', 'agents:admin', 'analytics:read']);
    expect(ALL_SCOPES).toEqual(
      expect.arrayContaining(['members:read', 'members:write', 'members:admin', 'workspace:admin']),
    );
    expect(ALL_SCOPES.at(-1)).toBe('workspace:admin');
    expect(new Set(ALL_SCOPES).size).toBe(72);
  });
});

describe('member role decider: create and update', () => {
  it("creates a custom role with the caller's scope order, repeats dropped, and empty access", () => {
    spec
      .given([])
      .when({
        type: 'CreateMemberRole',
        roleId: 9,
        workspaceId: wid,
        name: ' Analyst ',
        permissions: ['records:read', 'chats:read', 'chats:read'],
        now,
      })
      .then([
        {
          type: 'MemberRoleCreated',
          data: {
            roleId: 9,
            workspaceId: wid,
            name: 'Analyst',
            permissions: ['records:read', 'chats:read'],
            builtIn: null,
            siteAudience: EMPTY_SITE_AUDIENCE,
            fileAccess: EMPTY_FILE_ACCESS,
            createdAt: now,
          },
        },
      ]);
  });

  it('refuses an unknown scope, naming it', () => {
    spec
      .given([])
      .when({
        type: 'CreateMemberRole',
        roleId: 9,
        workspaceId: wid,
        name: 'X',
        permissions: ['chats:read', 'chats:delete', 'billing:read'],
        now,
      })
      .thenThrows(ValidationError, /^permissions: unknown scope "chats:delete", "billing:read"/);
  });

  it("refuses a built-in role's exact name", () => {
    for (const name of ['Manager', ' Platform Support ', 'User', 'Agent', 'External']) {
      spec
        .given([])
        .when({ type: 'CreateMemberRole', roleId: 9, workspaceId: wid, name, permissions: [], now })
        .thenThrows(ConflictError, /^name: ".*" is the name of a built-in role/);
    }
    // A name another custom role has is refused by its claim (role-name-claim.spec.ts).
  });

  it('allows other spellings of built-in names: they are the duplicates a merge removes', () => {
    for (const name of ['manager', 'MANAGER', 'admin', 'users', 'agent', 'platform support']) {
      spec
        .given([])
        .when({ type: 'CreateMemberRole', roleId: 9, workspaceId: wid, name, permissions: [], now })
        .then([expect.objectContaining({ type: 'MemberRoleCreated' })] as MemberRoleEvent[]);
    }
    spec
      .given([created(9, 'Analyst')])
      .when({ type: 'UpdateMemberRole', roleId: 9, workspaceId: wid, name: 'manager', now })
      .then([
        expect.objectContaining({ data: expect.objectContaining({ name: 'manager' }) }),
      ] as MemberRoleEvent[]);
    spec
      .given([created(9, 'Analyst')])
      .when({ type: 'UpdateMemberRole', roleId: 9, workspaceId: wid, name: 'Manager', now })
      .thenThrows(ConflictError, /is the name of a built-in role/);
  });

  it('keeps the name and scopes of built-in roles, refusing changes with the reason', () => {
    spec
      .given([builtIn('manager', 1)])
      .when({ type: 'UpdateMemberRole', roleId: 1, workspaceId: wid, name: 'Boss', now })
      .thenThrows(ValidationError, /^name: the built-in role Manager cannot be renamed/);
    spec
      .given([builtIn('user', 3)])
      .when({ type: 'UpdateMemberRole', roleId: 3, workspaceId: wid, permissions: ['agents:read'], now })
      .thenThrows(ValidationError, /^permissions: the scopes of the built-in role User cannot be changed/);
  });

  it('accepts a built-in role sent back unchanged, and edits its access', () => {
    const user = BUILT_IN_ROLES.find((r) => r.key === 'user')!;
    spec
      .given([builtIn('user', 3)])
      .when({
        type: 'UpdateMemberRole',
        roleId: 3,
        workspaceId: wid,
        name: 'User',
        permissions: [...user.permissions].reverse(),
        siteAudience: { allSites: false, siteIds: [5, 2, 5] },
        fileAccess: {
          folders: [
            { id: 4, level: 'read' },
            { id: 4, level: 'write' },
          ],
          files: [],
        },
        now,
      })
      .then([
        {
          type: 'MemberRoleUpdated',
          data: {
            roleId: 3,
            workspaceId: wid,
            siteAudience: { allSites: false, siteIds: [2, 5] },
            fileAccess: { folders: [{ id: 4, level: 'write' }], files: [] },
            updatedAt: now,
          },
        },
      ]);
  });

  it('records only the name and scopes that changed on a custom role', () => {
    spec
      .given([created(9, 'Analyst', null, ['chats:read'])])
      .when({
        type: 'UpdateMemberRole',
        roleId: 9,
        workspaceId: wid,
        name: 'Analyst',
        permissions: ['chats:write'],
        now,
      })
      .then([
        {
          type: 'MemberRoleUpdated',
          data: { roleId: 9, workspaceId: wid, permissions: ['chats:write'], updatedAt: now },
        },
      ]);
    spec
      .given([created(9, 'Analyst', null, ['chats:read'])])
      .when({ type: 'UpdateMemberRole', roleId: 9, workspaceId: wid, now })
      .then([]);
  });

  it("keeps the caller's scope order on a custom role: a reordering is a change, a repeat is not", () => {
    spec
      .given([created(9, 'Analyst', null, ['chats:read', 'records:read'])])
      .when({
        type: 'UpdateMemberRole',
        roleId: 9,
        workspaceId: wid,
        permissions: ['records:read', 'chats:read', 'records:read'],
        now,
      })
      .then([
        {
          type: 'MemberRoleUpdated',
          data: { roleId: 9, workspaceId: wid, permissions: ['records:read', 'chats:read'], updatedAt: now },
        },
      ]);
    spec
      .given([created(9, 'Analyst', null, ['chats:read', 'records:read'])])
      .when({
        type: 'UpdateMemberRole',
        roleId: 9,
        workspaceId: wid,
        permissions: ['chats:read', 'chats:read', 'records:read'],
        now,
      })
      .then([]);
  });

  it("reads another workspace's role as absent", () => {
    spec
      .given([created(9, 'Analyst')])
      .when({ type: 'UpdateMemberRole', roleId: 9, workspaceId: otherWid, name: 'X', now })
      .thenThrows(NotFoundError);
  });
});

describe('member role decider: delete', () => {
  const del = (
    over: Partial<Extract<MemberRoleCommand, { type: 'DeleteMemberRole' }>> = {},
  ): MemberRoleCommand => ({
    type: 'DeleteMemberRole',
    roleId: 9,
    workspaceId: wid,
    memberCount: 0,
    invitationCount: 0,
    isWorkspaceDefault: false,
    now,
    ...over,
  });

  it('deletes an unused custom role', () => {
    spec
      .given([created(9, 'Analyst')])
      .when(del())
      .then([{ type: 'MemberRoleDeleted', data: { roleId: 9, workspaceId: wid, deletedAt: now } }]);
  });

  it('never deletes a built-in role', () => {
    for (const key of ['manager', 'platform_support', 'user', 'agent', 'external'] as const) {
      spec
        .given([builtIn(key, 9)])
        .when(del())
        .thenThrows(ValidationError, /built-in role .* cannot be deleted/);
    }
  });

  it('refuses while members, invitations or the workspace default refer to it', () => {
    spec
      .given([created(9, 'Analyst')])
      .when(del({ memberCount: 2 }))
      .thenThrows(ConflictError, /held by 2 member/);
    spec
      .given([created(9, 'Analyst')])
      .when(del({ invitationCount: 1 }))
      .thenThrows(ConflictError, /invitation/);
    spec
      .given([created(9, 'Analyst')])
      .when(del({ isWorkspaceDefault: true }))
      .thenThrows(ConflictError, /default/);
  });

  it('cannot delete twice', () => {
    spec
      .given([
        created(9, 'Analyst'),
        { type: 'MemberRoleDeleted', data: { roleId: 9, workspaceId: wid, deletedAt: now } },
      ])
      .when(del())
      .thenThrows(NotFoundError);
  });
});

describe('member role decider: merge', () => {
  it('moves every holder and invitation and the default in one event', () => {
    spec
      .given([created(20, 'manager')])
      .when(
        merge({
          holders: [person(7), person(3)],
          invitationIds: ['b', 'a'],
          isWorkspaceDefault: true,
          resourceAccess: 'discard',
        }),
      )
      .then([
        {
          type: 'MemberRolesMerged',
          data: {
            workspaceId: wid,
            sourceRoleId: 20,
            targetRoleId: 1,
            resourceAccess: 'discard',
            memberIds: [3, 7],
            invitationIds: ['a', 'b'],
            workspaceDefaultMoved: true,
            mergedAt: now,
          },
        },
      ]);
  });

  it('merges any custom role into a built-in one, whatever its name', () => {
    for (const [name, t] of [
      ['Admin', target(1, 'manager', 'Manager')],
      ['users', target(3, 'user', 'User')],
      ['Coordinators', target(3, 'user', 'User')],
      ['Sales', target(1, 'manager', 'Manager')],
      ['admin', target(5, 'external', 'External')],
    ] as const) {
      spec
        .given([created(20, name)])
        .when(merge({ target: t }))
        .then([expect.objectContaining({ type: 'MemberRolesMerged' })] as MemberRoleEvent[]);
    }
  });

  it('only merges into a built-in role of the same workspace', () => {
    spec
      .given([created(20, 'manager')])
      .when(merge({ target: undefined }))
      .thenThrows(ValidationError, /^targetRoleId:/);
    spec
      .given([created(20, 'manager')])
      .when(merge({ target: { ...target(1, 'manager'), workspaceId: otherWid } }))
      .thenThrows(ValidationError, /^targetRoleId:/);
    spec
      .given([created(20, 'manager')])
      .when(merge({ target: target(21, null) }))
      .thenThrows(ValidationError, /must be a built-in role/);
    spec
      .given([builtIn('manager', 1)])
      .when(merge({ roleId: 1 }))
      .thenThrows(ValidationError, /built-in role/);
  });

  it('never gives Platform Support', () => {
    spec
      .given([created(20, 'support')])
      .when(merge({ target: target(2, 'platform_support') }))
      .thenThrows(ForbiddenError, /support staff/);
  });

  it('refuses onto Manager or User while a human holder (archived too) has no Account', () => {
    for (const [key, name, source] of [
      ['manager', 'Manager', 'manager'],
      ['user', 'User', 'member'],
    ] as const) {
      spec
        .given([created(20, source)])
        .when(merge({ target: target(1, key, name), holders: [person(3), person(4, false)] }))
        .thenThrows(
          ValidationError,
          new RegExp(`onto ${name} every human member .* must have an Account; 1 \\(member id 4\\)`),
        );
    }
    // External has no such rule.
    spec
      .given([created(20, 'guests')])
      .when(merge({ target: target(5, 'external', 'External'), holders: [person(4, false)] }))
      .then([expect.objectContaining({ type: 'MemberRolesMerged' })] as MemberRoleEvent[]);
  });

  it('refuses pairing an agent with a human role and a person with the Agent role, naming the direction', () => {
    spec
      .given([created(20, 'manager')])
      .when(merge({ holders: [person(3), agent(4)] }))
      .thenThrows(ValidationError, /would give a human role to an agent member/);
    spec
      .given([created(20, 'agents')])
      .when(merge({ target: target(4, 'agent', 'Agent'), holders: [agent(4), person(3)] }))
      .thenThrows(ValidationError, /would give the Agent role to a person/);
    spec
      .given([created(20, 'agents')])
      .when(merge({ target: target(4, 'agent', 'Agent'), invitationIds: ['i1'] }))
      .thenThrows(ValidationError, /would give the Agent role to a person .*1 unclaimed invitation/);
    spec
      .given([created(20, 'bots')])
      .when(merge({ target: target(4, 'agent', 'Agent'), holders: [agent(4)] }))
      .then([expect.objectContaining({ type: 'MemberRolesMerged' })] as MemberRoleEvent[]);
  });

  it('leaves the duplicate deleted: nothing more can be done with it', () => {
    const merged: MemberRoleEvent = {
      type: 'MemberRolesMerged',
      data: {
        workspaceId: wid,
        sourceRoleId: 20,
        targetRoleId: 1,
        resourceAccess: 'copy',
        memberIds: [],
        invitationIds: [],
        workspaceDefaultMoved: false,
        mergedAt: now,
      },
    };
    spec
      .given([created(20, 'manager'), merged])
      .when(merge())
      .thenThrows(NotFoundError);
    spec
      .given([created(20, 'manager'), merged])
      .when({ type: 'UpdateMemberRole', roleId: 20, workspaceId: wid, name: 'x', now })
      .thenThrows(NotFoundError);
  });
});
