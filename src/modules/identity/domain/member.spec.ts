import {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  ValidationError,
} from '../../../core/http/domain-errors';
import { deciderSpec } from '../../../core/testing/decider-spec';
import type { MemberCreated } from './identity.events';
import { memberDecider, NewMember } from './member';
import type { MemberEvent, MemberSnapshot } from './member.events';
import type { RoleFacts } from '../../roles';

const spec = deciderSpec(memberDecider);
const wid = '0190a6c4-0000-7000-8000-000000000001';
const otherWid = '0190a6c4-0000-7000-8000-000000000002';
const t0 = '2026-11-21T10:00:00.000Z';
const t1 = '2026-11-21T11:00:00.000Z';

const role = (roleId: number, builtIn: RoleFacts['builtIn'], extra: Partial<RoleFacts> = {}): RoleFacts => ({
  roleId,
  exists: true,
  workspaceId: wid,
  name: builtIn
    ? {
        manager: 'Manager',
        platform_support: 'Platform Support',
        user: 'User',
        agent: 'Agent',
        external: 'External',
      }[builtIn]
    : 'Custom',
  permissions: [],
  builtIn,
  deleted: false,
  mergedInto: null,
  ...extra,
});
const USER = role(3, 'user');
const AGENT = role(4, 'agent');
const MANAGER = role(1, 'manager');
const SUPPORT = role(2, 'platform_support');
const CUSTOM = role(9, null);

const newMember: NewMember = {
  memberId: 12,
  workspaceId: wid,
  accountUuid: null,
  email: 'ann@example.com',
  phone: null,
  name: 'Ann',
  externalId: null,
  memberRoleId: USER.roleId,
  kind: 'person',
  notifySms: false,
  notifyEmail: false,
  notifyVoice: false,
};
const created: MemberCreated = { type: 'MemberCreated', data: { ...newMember, createdAt: t0 } };
const agentCreated: MemberCreated = {
  type: 'MemberCreated',
  data: { ...newMember, memberId: 13, kind: 'agent', memberRoleId: AGENT.roleId, createdAt: t0 },
};
const snapshot: MemberSnapshot = {
  id: 12,
  workspaceId: wid,
  accountUuid: null,
  email: 'ann@example.com',
  phone: null,
  name: 'Ann',
  externalId: null,
  memberRoleId: USER.roleId,
  kind: 'person',
  status: 'active',
  notifySms: false,
  notifyEmail: false,
  notifyVoice: false,
  createdAt: t0,
  updatedAt: t0,
};
const update = (changes: object, extra: object = {}) => ({
  type: 'UpdateMember' as const,
  memberId: 12,
  workspaceId: wid,
  changes,
  currentRoleId: USER.roleId,
  assigner: 'operator' as const,
  now: t1,
  ...extra,
});

describe('member decider', () => {
  it('creates a member', () => {
    spec
      .given([])
      .when({ type: 'CreateMember', member: newMember, role: USER, assigner: 'operator', now: t0 })
      .then([created]);
  });

  it('refuses to create over an existing or fenced stream', () => {
    spec
      .given([created])
      .when({ type: 'CreateMember', member: newMember, role: USER, assigner: 'operator', now: t0 })
      .thenThrows(ConflictError);
    const fence: MemberEvent = {
      type: 'MemberWriteFenced',
      data: { memberId: 12, workspaceId: wid, reason: 'orphan_claim', fencedAt: t0 },
    };
    spec
      .given([fence])
      .when({ type: 'CreateMember', member: newMember, role: USER, assigner: 'operator', now: t0 })
      .thenThrows(ConflictError);
  });

  it('applies the Agent rules at creation, naming the direction', () => {
    spec
      .given([])
      .when({
        type: 'CreateMember',
        member: { ...newMember, memberRoleId: 4 },
        role: AGENT,
        assigner: 'operator',
        now: t0,
      })
      .thenThrows(
        ValidationError,
        /^memberRoleId: a person cannot hold the Agent role \(human to Agent role\)/,
      );
    spec
      .given([])
      .when({
        type: 'CreateMember',
        member: { ...newMember, kind: 'agent', memberRoleId: 1 },
        role: MANAGER,
        assigner: 'operator',
        now: t0,
      })
      .thenThrows(ValidationError, /agent to human role/);
    spec
      .given([])
      .when({
        type: 'CreateMember',
        member: { ...newMember, kind: 'agent', memberRoleId: 9 },
        role: CUSTOM,
        assigner: 'operator',
        now: t0,
      })
      .then([
        { type: 'MemberCreated', data: { ...newMember, kind: 'agent', memberRoleId: 9, createdAt: t0 } },
      ]);
  });

  it('updates only what changed, carrying the full resulting snapshot', () => {
    spec
      .given([created])
      .when(update({ name: 'Ann', email: 'ann2@example.com', notifySms: true }))
      .then([
        {
          type: 'MemberUpdated',
          data: {
            memberId: 12,
            workspaceId: wid,
            changes: { email: 'ann2@example.com', notifySms: true },
            member: { ...snapshot, email: 'ann2@example.com', notifySms: true, updatedAt: t1 },
            updatedAt: t1,
          },
        },
      ]);
  });

  it('emits nothing for an update that changes nothing', () => {
    spec
      .given([created])
      .when(update({ name: 'Ann', email: 'ann@example.com' }))
      .then([]);
  });

  it('snapshots the role a merge moved the member to', () => {
    spec
      .given([created])
      .when(update({ name: 'Ann B' }, { currentRoleId: 77 }))
      .then([
        {
          type: 'MemberUpdated',
          data: {
            memberId: 12,
            workspaceId: wid,
            changes: { name: 'Ann B' },
            member: { ...snapshot, name: 'Ann B', memberRoleId: 77, updatedAt: t1 },
            updatedAt: t1,
          },
        },
      ]);
  });

  it('changes the role within the rules', () => {
    spec
      .given([created])
      .when(update({ memberRoleId: 1 }, { role: MANAGER }))
      .then([
        {
          type: 'MemberUpdated',
          data: {
            memberId: 12,
            workspaceId: wid,
            changes: { memberRoleId: 1 },
            member: { ...snapshot, memberRoleId: 1, updatedAt: t1 },
            updatedAt: t1,
          },
        },
      ]);
    spec
      .given([created])
      .when(update({ memberRoleId: 4 }, { role: AGENT }))
      .thenThrows(ValidationError, /human to Agent role/);
    spec
      .given([agentCreated])
      .when(update({ memberRoleId: 3 }, { memberId: 13, currentRoleId: 4, role: USER }))
      .thenThrows(ValidationError, /agent member cannot hold the built-in User role \(agent to human role\)/);
  });

  it('keeps Platform Support away from workspace operators, but not from support staff', () => {
    spec
      .given([created])
      .when(update({ memberRoleId: 2 }, { role: SUPPORT }))
      .thenThrows(ForbiddenError, /Platform Support/);
    spec
      .given([created])
      .when(update({ memberRoleId: 2 }, { role: SUPPORT, assigner: 'support' }))
      .then([
        {
          type: 'MemberUpdated',
          data: {
            memberId: 12,
            workspaceId: wid,
            changes: { memberRoleId: 2 },
            member: { ...snapshot, memberRoleId: 2, updatedAt: t1 },
            updatedAt: t1,
          },
        },
      ]);
  });

  it('refuses a role of another workspace, a deleted role and a missing one as absent', () => {
    spec
      .given([created])
      .when(update({ memberRoleId: 1 }, { role: { ...MANAGER, workspaceId: otherWid } }))
      .thenThrows(ValidationError, /^memberRoleId: role 1 does not exist/);
    spec
      .given([created])
      .when(update({ memberRoleId: 9 }, { role: { ...CUSTOM, deleted: true } }))
      .thenThrows(ValidationError, /does not exist/);
    spec
      .given([created])
      .when(update({ memberRoleId: 9 }, { role: { ...CUSTOM, exists: false } }))
      .thenThrows(ValidationError, /does not exist/);
  });

  it('reads a member of another workspace as absent', () => {
    spec
      .given([created])
      .when(update({ name: 'X' }, { workspaceId: otherWid }))
      .thenThrows(NotFoundError);
    spec
      .given([])
      .when(update({ name: 'X' }))
      .thenThrows(NotFoundError);
  });

  it('archives once, then refuses changes', () => {
    const archived: MemberEvent = {
      type: 'MemberArchived',
      data: {
        memberId: 12,
        workspaceId: wid,
        member: { ...snapshot, status: 'archived', updatedAt: t1 },
        archivedAt: t1,
      },
    };
    spec
      .given([created])
      .when({ type: 'ArchiveMember', memberId: 12, workspaceId: wid, currentRoleId: 3, now: t1 })
      .then([archived]);
    spec
      .given([created, archived])
      .when({ type: 'ArchiveMember', memberId: 12, workspaceId: wid, currentRoleId: 3, now: t1 })
      .then([]);
    spec
      .given([created, archived])
      .when(update({ name: 'X' }))
      .thenThrows(ConflictError, /archived/);
  });

  it('links an account once', () => {
    const acc = '0190a6c4-0000-7000-8000-0000000000aa';
    const linked: MemberEvent = {
      type: 'MemberAccountLinked',
      data: { memberId: 12, workspaceId: wid, accountUuid: acc, linkedAt: t1 },
    };
    spec
      .given([created])
      .when({ type: 'LinkAccount', memberId: 12, workspaceId: wid, accountUuid: acc, now: t1 })
      .then([linked]);
    spec
      .given([created, linked])
      .when({ type: 'LinkAccount', memberId: 12, workspaceId: wid, accountUuid: acc, now: t1 })
      .then([]);
    spec
      .given([created, linked])
      .when({
        type: 'LinkAccount',
        memberId: 12,
        workspaceId: wid,
        accountUuid: '0190a6c4-0000-7000-8000-0000000000bb',
        now: t1,
      })
      .thenThrows(ConflictError);
  });

  it('revokes every token issued so far', () => {
    spec
      .given([created])
      .when({ type: 'RevokeMemberTokens', memberId: 12, workspaceId: wid, now: t1 })
      .then([{ type: 'MemberTokensRevoked', data: { memberId: 12, workspaceId: wid, revokedBefore: t1 } }]);
  });
});

describe('member decider: SMS keywords (messaging inbound SMS)', () => {
  const created: MemberCreated = {
    type: 'MemberCreated',
    data: { ...newMember, phone: '+14155550100', memberRoleId: 3, notifySms: true, createdAt: t0 },
  };
  const consent = (c: 'opted_out' | 'opted_in', keyword: string) =>
    ({
      type: 'RecordSmsConsent',
      memberId: 12,
      workspaceId: wid,
      consent: c,
      keyword,
      currentRoleId: 3,
      now: t1,
    }) as const;

  it('STOP turns notifySms off and records the opt-out; texted again, only the opt-out', () => {
    const events = memberDecider.decide(
      consent('opted_out', 'STOP'),
      memberDecider.evolve(memberDecider.initialState(), created),
    );
    expect(events.map((e) => e.type)).toEqual(['MemberUpdated', 'MemberOptedOutOfSms']);
    expect(events[0].data).toMatchObject({ changes: { notifySms: false } });
    expect(events[1].data).toEqual({ memberId: 12, workspaceId: wid, keyword: 'STOP', optedOutAt: t1 });
    const after = events.reduce(
      memberDecider.evolve,
      memberDecider.evolve(memberDecider.initialState(), created),
    );
    expect(after.member?.notifySms).toBe(false);
    spec
      .given([created, ...events] as MemberEvent[])
      .when(consent('opted_out', 'QUIT'))
      .then([
        {
          type: 'MemberOptedOutOfSms',
          data: { memberId: 12, workspaceId: wid, keyword: 'QUIT', optedOutAt: t1 },
        },
      ]);
  });

  it('START turns notifySms back on and records the opt-in; not for a member of another workspace', () => {
    const off: MemberCreated = { ...created, data: { ...created.data, notifySms: false } };
    const events = memberDecider.decide(
      consent('opted_in', 'START'),
      memberDecider.evolve(memberDecider.initialState(), off),
    );
    expect(events.map((e) => e.type)).toEqual(['MemberUpdated', 'MemberOptedInToSms']);
    spec
      .given([off])
      .when({ ...consent('opted_in', 'START'), workspaceId: otherWid })
      .thenThrows(NotFoundError);
  });
});
