import { Decider } from '../../../core/cqrs/decider';
import { ConflictError, NotFoundError } from '../../../core/http/domain-errors';
import type { InvitationEvent, InvitationStatus } from './member.events';
import { Assigner, checkRoleAssignment, RoleFacts } from '../../roles';

export interface InvitationState {
  exists: boolean;
  workspaceId: string | null;
  email: string | null;
  memberRoleId: number | null;
  status: InvitationStatus;
  expiresAt: string | null;
}

export type InvitationCommand =
  | {
      type: 'CreateInvitation';
      invitationId: string;
      workspaceId: string;
      email: string;
      role: RoleFacts;
      assigner: Assigner;
      invitedByMemberId: number | null;
      /** Lifetime (INVITATION_TTL_DAYS; fractions of a day allowed). */
      ttlDays: number;
      now: string;
    }
  | { type: 'RevokeInvitation'; invitationId: string; workspaceId: string; now: string }
  /** Sent by the expiry worker when the invitation's expiresAt has come. */
  | { type: 'ExpireInvitation'; invitationId: string; now: string }
  | {
      type: 'AcceptInvitation';
      invitationId: string;
      accountEmail: string | null;
      accountUuid: string;
      memberId: number;
      now: string;
    }
  | {
      type: 'DeclineInvitation';
      invitationId: string;
      accountEmail: string | null;
      accountUuid: string;
      now: string;
    };

function inWorkspace(state: InvitationState, workspaceId: string): void {
  if (!state.exists || state.workspaceId !== workspaceId) throw new NotFoundError('Invitation not found');
}

/**
 * An invitation asks a person (by email) into a workspace with a role. It is a person
 * that accepts, so the Agent rule applies as to a person. Until accepted, the role it
 * names is a reference that a role merge moves (MemberRolesMerged.invitationIds).
 */
export const invitationDecider: Decider<InvitationState, InvitationCommand, InvitationEvent> = {
  initialState: () => ({
    exists: false,
    workspaceId: null,
    email: null,
    memberRoleId: null,
    status: 'pending',
    expiresAt: null,
  }),

  evolve(state, event) {
    switch (event.type) {
      case 'InvitationCreated':
        return {
          exists: true,
          workspaceId: event.data.workspaceId,
          email: event.data.email,
          memberRoleId: event.data.memberRoleId,
          status: 'pending',
          expiresAt: event.data.expiresAt,
        };
      case 'InvitationRevoked':
        return { ...state, status: 'revoked' };
      case 'InvitationAccepted':
        return { ...state, status: 'accepted' };
      case 'InvitationDeclined':
        return { ...state, status: 'declined' };
      case 'InvitationExpired':
        return { ...state, status: 'expired' };
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreateInvitation': {
        if (state.exists) throw new ConflictError('Invitation already exists');
        checkRoleAssignment('person', command.role, command.workspaceId, command.assigner);
        const expiresAt = new Date(
          Date.parse(command.now) + Math.round(command.ttlDays * 86_400_000),
        ).toISOString();
        return [
          {
            type: 'InvitationCreated',
            data: {
              invitationId: command.invitationId,
              workspaceId: command.workspaceId,
              email: command.email,
              memberRoleId: command.role.roleId,
              invitedByMemberId: command.invitedByMemberId,
              createdAt: command.now,
              expiresAt,
            },
          },
        ];
      }
      case 'RevokeInvitation':
        inWorkspace(state, command.workspaceId);
        // Revoked, declined or lapsed: it can no longer be accepted, which is all a revocation asks.
        if (state.status === 'revoked' || state.status === 'expired' || state.status === 'declined')
          return [];
        if (state.status === 'accepted')
          throw new ConflictError('Invitation was already accepted; archive the member instead');
        return [
          {
            type: 'InvitationRevoked',
            data: {
              invitationId: command.invitationId,
              workspaceId: command.workspaceId,
              revokedAt: command.now,
            },
          },
        ];
      case 'AcceptInvitation': {
        // Someone else's invitation reads as absent, so invitations cannot be probed.
        if (!state.exists || state.email !== command.accountEmail)
          throw new NotFoundError('Invitation not found');
        if (state.status === 'accepted') throw new ConflictError('Invitation was already accepted');
        if (state.status === 'declined') throw new ConflictError('Invitation was declined');
        if (state.status === 'revoked') throw new ConflictError('Invitation was revoked');
        // By its timestamp, whether or not the expiry worker has recorded the lapse yet.
        if (state.status === 'expired' || Date.parse(state.expiresAt!) <= Date.parse(command.now))
          throw new ConflictError('Invitation has expired');
        return [
          {
            type: 'InvitationAccepted',
            data: {
              invitationId: command.invitationId,
              workspaceId: state.workspaceId!,
              memberId: command.memberId,
              accountUuid: command.accountUuid,
              acceptedAt: command.now,
            },
          },
        ];
      }
      case 'DeclineInvitation': {
        // The same ownership rule as accepting: someone else's invitation reads as absent.
        if (!state.exists || state.email !== command.accountEmail)
          throw new NotFoundError('Invitation not found');
        if (state.status === 'declined') return [];
        if (state.status === 'accepted')
          throw new ConflictError('Invitation was already accepted; leave the workspace instead');
        if (state.status === 'revoked') throw new ConflictError('Invitation was revoked');
        if (state.status === 'expired' || Date.parse(state.expiresAt!) <= Date.parse(command.now))
          throw new ConflictError('Invitation has expired');
        return [
          {
            type: 'InvitationDeclined',
            data: {
              invitationId: command.invitationId,
              workspaceId: state.workspaceId!,
              accountUuid: command.accountUuid,
              declinedAt: command.now,
            },
          },
        ];
      }
      case 'ExpireInvitation': {
        if (!state.exists) throw new NotFoundError('Invitation not found');
        // Accepted, revoked or already expired: nothing left to expire (a replayed job lands here).
        if (state.status !== 'pending') return [];
        // Too early (a clock ahead of ours): failing makes the job retry later, never lose the lapse.
        if (Date.parse(state.expiresAt!) > Date.parse(command.now))
          throw new ConflictError('Invitation has not expired yet');
        return [
          {
            type: 'InvitationExpired',
            data: {
              invitationId: command.invitationId,
              workspaceId: state.workspaceId!,
              expiredAt: command.now,
            },
          },
        ];
      }
    }
  },
};
