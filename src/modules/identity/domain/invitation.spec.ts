import {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  ValidationError,
} from '../../../core/http/domain-errors';
import { deciderSpec } from '../../../core/testing/decider-spec';
import { invitationDecider } from './invitation';
import type { InvitationEvent } from './member.events';
import type { RoleFacts } from '../../roles';

const spec = deciderSpec(invitationDecider);
const wid = '0190a6c4-0000-7000-8000-000000000001';
const id = '0190a6c4-0000-7000-8000-0000000000ff';
const acc = '0190a6c4-0000-7000-8000-0000000000aa';
const t0 = '2026-11-21T10:00:00.000Z';
const role = (builtIn: RoleFacts['builtIn'], roleId = 5): RoleFacts => ({
  roleId,
  exists: true,
  workspaceId: wid,
  name: builtIn ?? 'Custom',
  permissions: [],
  builtIn,
  deleted: false,
  mergedInto: null,
});
const create = (r: RoleFacts) => ({
  type: 'CreateInvitation' as const,
  invitationId: id,
  workspaceId: wid,
  email: 'ann@example.com',
  role: r,
  assigner: 'operator' as const,
  invitedByMemberId: 1,
  ttlDays: 14,
  now: t0,
});
const created: InvitationEvent = {
  type: 'InvitationCreated',
  data: {
    invitationId: id,
    workspaceId: wid,
    email: 'ann@example.com',
    memberRoleId: 5,
    invitedByMemberId: 1,
    createdAt: t0,
    expiresAt: '2026-12-05T10:00:00.000Z',
  },
};

const expired: InvitationEvent = {
  type: 'InvitationExpired',
  data: { invitationId: id, workspaceId: wid, expiredAt: '2026-12-05T10:00:00.000Z' },
};

describe('invitation decider', () => {
  it('invites a person with a role, expiring in 14 days', () => {
    spec
      .given([])
      .when(create(role('user')))
      .then([created]);
  });

  it('refuses the Agent role (a person is invited) and Platform Support', () => {
    spec
      .given([])
      .when(create(role('agent')))
      .thenThrows(ValidationError, /human to Agent role/);
    spec
      .given([])
      .when(create(role('platform_support')))
      .thenThrows(ForbiddenError, /support staff/);
    spec
      .given([])
      .when(create({ ...role(null), workspaceId: 'other' }))
      .thenThrows(ValidationError, /does not exist in this workspace/);
  });

  it('revokes a pending invitation once; an accepted one cannot be revoked', () => {
    const revoked: InvitationEvent = {
      type: 'InvitationRevoked',
      data: { invitationId: id, workspaceId: wid, revokedAt: t0 },
    };
    spec
      .given([created])
      .when({ type: 'RevokeInvitation', invitationId: id, workspaceId: wid, now: t0 })
      .then([revoked]);
    spec
      .given([created, revoked])
      .when({ type: 'RevokeInvitation', invitationId: id, workspaceId: wid, now: t0 })
      .then([]);
    const accepted: InvitationEvent = {
      type: 'InvitationAccepted',
      data: { invitationId: id, workspaceId: wid, memberId: 3, accountUuid: acc, acceptedAt: t0 },
    };
    spec
      .given([created, accepted])
      .when({ type: 'RevokeInvitation', invitationId: id, workspaceId: wid, now: t0 })
      .thenThrows(ConflictError);
    spec
      .given([created])
      .when({ type: 'RevokeInvitation', invitationId: id, workspaceId: 'other', now: t0 })
      .thenThrows(NotFoundError);
  });

  it('is accepted by the account it was sent to, before it expires', () => {
    const accept = {
      type: 'AcceptInvitation' as const,
      invitationId: id,
      accountEmail: 'ann@example.com',
      accountUuid: acc,
      memberId: 3,
      now: t0,
    };
    spec
      .given([created])
      .when(accept)
      .then([
        {
          type: 'InvitationAccepted',
          data: { invitationId: id, workspaceId: wid, memberId: 3, accountUuid: acc, acceptedAt: t0 },
        },
      ]);
    spec
      .given([created])
      .when({ ...accept, accountEmail: 'bob@example.com' })
      .thenThrows(NotFoundError);
    spec
      .given([created])
      .when({ ...accept, now: '2026-12-06T00:00:00.000Z' })
      .thenThrows(ConflictError, /expired/);
    spec
      .given([created, expired])
      .when(accept)
      .thenThrows(ConflictError, /expired/);
  });

  it('is declined by the account it was sent to, once; then it cannot be accepted', () => {
    const decline = {
      type: 'DeclineInvitation' as const,
      invitationId: id,
      accountEmail: 'ann@example.com',
      accountUuid: acc,
      now: t0,
    };
    const declined: InvitationEvent = {
      type: 'InvitationDeclined',
      data: { invitationId: id, workspaceId: wid, accountUuid: acc, declinedAt: t0 },
    };
    spec.given([created]).when(decline).then([declined]);
    spec.given([created, declined]).when(decline).then([]);
    spec
      .given([created])
      .when({ ...decline, accountEmail: null })
      .thenThrows(NotFoundError);
    spec
      .given([created, expired])
      .when(decline)
      .thenThrows(ConflictError, /expired/);
    spec
      .given([created, declined])
      .when({
        type: 'AcceptInvitation',
        invitationId: id,
        accountEmail: 'ann@example.com',
        accountUuid: acc,
        memberId: 3,
        now: t0,
      })
      .thenThrows(ConflictError, /declined/);
  });

  it('takes its lifetime from the command, fractions of a day included', () => {
    spec
      .given([])
      .when({ ...create(role('user')), ttlDays: 0.5 })
      .then([{ ...created, data: { ...created.data, expiresAt: '2026-11-21T22:00:00.000Z' } }]);
  });

  describe('expiry (the worker, when expiresAt has come)', () => {
    const expire = (now: string) => ({ type: 'ExpireInvitation' as const, invitationId: id, now });
    const lapse = '2026-12-05T10:00:00.000Z';

    it('records the lapse of a pending invitation at or after its expiry', () => {
      spec
        .given([created])
        .when(expire(lapse))
        .then([
          { type: 'InvitationExpired', data: { invitationId: id, workspaceId: wid, expiredAt: lapse } },
        ]);
    });

    it('records nothing for an invitation already accepted, revoked or expired (a job run twice appends once)', () => {
      const accepted: InvitationEvent = {
        type: 'InvitationAccepted',
        data: { invitationId: id, workspaceId: wid, memberId: 3, accountUuid: acc, acceptedAt: t0 },
      };
      const revoked: InvitationEvent = {
        type: 'InvitationRevoked',
        data: { invitationId: id, workspaceId: wid, revokedAt: t0 },
      };
      for (const after of [accepted, revoked, expired])
        spec.given([created, after]).when(expire(lapse)).then([]);
    });

    it('refuses to run early, so the job is retried rather than the lapse lost', () => {
      spec
        .given([created])
        .when(expire('2026-12-05T09:59:59.999Z'))
        .thenThrows(ConflictError, /not expired yet/);
      spec.given([]).when(expire(lapse)).thenThrows(NotFoundError);
    });

    it('an expired invitation needs no revoking', () => {
      spec
        .given([created, expired])
        .when({ type: 'RevokeInvitation', invitationId: id, workspaceId: wid, now: lapse })
        .then([]);
    });
  });
});
