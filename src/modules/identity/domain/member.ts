import { Decider } from '../../../core/cqrs/decider';
import { ConflictError, NotFoundError } from '../../../core/http/domain-errors';
import { checkAgentSettings } from './agent-settings';
import type { MemberCreated } from './identity.events';
import type { MemberChanges, MemberEvent, MemberSnapshot, MemberUpdated } from './member.events';
import { Assigner, checkRoleAssignment, RoleFacts } from '../../roles';

export interface MemberState {
  exists: boolean;
  /** A fence landed before the member was created: that creation must now fail. */
  fenced: boolean;
  member: MemberSnapshot | null;
  tokensRevokedBefore: string | null;
}

/** What creating a member records: MemberCreated's data less its timestamp. */
export type NewMember = Omit<MemberCreated['data'], 'createdAt'>;

export type MemberCommand =
  | { type: 'CreateMember'; member: NewMember; role: RoleFacts; assigner: Assigner; now: string }
  | {
      type: 'UpdateMember';
      memberId: number;
      workspaceId: string;
      changes: MemberChanges;
      /** The member's role after any merge moved it (merges live in role streams). */
      currentRoleId: number;
      /** Facts of changes.memberRoleId, needed when the role changes. */
      role?: RoleFacts;
      assigner: Assigner;
      now: string;
    }
  | { type: 'ArchiveMember'; memberId: number; workspaceId: string; currentRoleId: number; now: string }
  | { type: 'LinkAccount'; memberId: number; workspaceId: string; accountUuid: string; now: string }
  | { type: 'RevokeMemberTokens'; memberId: number; workspaceId: string; now: string }
  | {
      type: 'RecordSmsConsent';
      memberId: number;
      workspaceId: string;
      consent: 'opted_out' | 'opted_in';
      /** The keyword the member texted, upper-cased. */
      keyword: string;
      currentRoleId: number;
      now: string;
    };

const CHANGE_FIELDS = [
  'name',
  'email',
  'phone',
  'externalId',
  'memberRoleId',
  'notifySms',
  'notifyEmail',
  'notifyVoice',
  'timezone',
  'agentModel',
  'agentInstructions',
] as const;

/** A person's snapshot, and an agent's from before they existed, lack these: absent reads as null. */
const AGENT_FIELDS = new Set<string>(['agentModel', 'agentInstructions']);

function existing(state: MemberState, workspaceId: string): MemberSnapshot {
  // Another workspace's member reads as absent (tenant isolation).
  if (!state.exists || !state.member || state.member.workspaceId !== workspaceId)
    throw new NotFoundError('Member not found');
  return state.member;
}

function active(state: MemberState, workspaceId: string): MemberSnapshot {
  const m = existing(state, workspaceId);
  if (m.status === 'archived')
    throw new ConflictError('Member is archived; an archived member cannot be changed');
  return m;
}

function decideUpdate(
  command: Extract<MemberCommand, { type: 'UpdateMember' }>,
  state: MemberState,
): MemberUpdated[] {
  const current: MemberSnapshot = {
    ...active(state, command.workspaceId),
    memberRoleId: command.currentRoleId,
  };
  const changes: MemberChanges = {};
  for (const field of CHANGE_FIELDS) {
    const next = command.changes[field];
    const now = AGENT_FIELDS.has(field) ? (current[field] ?? null) : current[field];
    if (next === undefined || next === now) continue;
    (changes as Record<string, unknown>)[field] = next;
  }
  checkAgentSettings(current.kind, changes);
  if (changes.memberRoleId !== undefined) {
    if (!command.role || command.role.roleId !== changes.memberRoleId)
      throw new Error('UpdateMember: facts of the new role are missing');
    checkRoleAssignment(current.kind, command.role, command.workspaceId, command.assigner);
  }
  if (!Object.keys(changes).length) return [];
  const member: MemberSnapshot = { ...current, ...changes, updatedAt: command.now } as MemberSnapshot;
  return [
    {
      type: 'MemberUpdated',
      data: {
        memberId: command.memberId,
        workspaceId: command.workspaceId,
        changes,
        member,
        updatedAt: command.now,
      },
    },
  ];
}

/**
 * A keyword texted by the member (SMS rules): STOP turns notifySms off and records the
 * opt-out, START turns it on and records the opt-in. Recorded every time it is texted
 * (a carrier expects each STOP to be honoured and confirmed), even when notifySms
 * already has that value.
 */
function decideSmsConsent(
  command: Extract<MemberCommand, { type: 'RecordSmsConsent' }>,
  state: MemberState,
): MemberEvent[] {
  const optedIn = command.consent === 'opted_in';
  const { memberId, workspaceId, keyword, now } = command;
  const updated = decideUpdate(
    {
      type: 'UpdateMember',
      memberId,
      workspaceId,
      changes: { notifySms: optedIn },
      currentRoleId: command.currentRoleId,
      assigner: 'operator',
      now,
    },
    state,
  );
  const fact: MemberEvent = optedIn
    ? { type: 'MemberOptedInToSms', data: { memberId, workspaceId, keyword, optedInAt: now } }
    : { type: 'MemberOptedOutOfSms', data: { memberId, workspaceId, keyword, optedOutAt: now } };
  return [...updated, fact];
}

export const memberDecider: Decider<MemberState, MemberCommand, MemberEvent> = {
  initialState: () => ({ exists: false, fenced: false, member: null, tokensRevokedBefore: null }),

  evolve(state, event) {
    switch (event.type) {
      case 'MemberCreated': {
        const d = event.data;
        const member: MemberSnapshot = {
          id: d.memberId,
          workspaceId: d.workspaceId,
          accountUuid: d.accountUuid,
          email: d.email,
          phone: d.phone,
          name: d.name,
          externalId: d.externalId,
          memberRoleId: d.memberRoleId,
          kind: d.kind,
          status: 'active',
          notifySms: d.notifySms,
          notifyEmail: d.notifyEmail,
          notifyVoice: d.notifyVoice,
          ...(d.kind === 'agent'
            ? { agentModel: d.agentModel ?? null, agentInstructions: d.agentInstructions ?? null }
            : {}),
          createdAt: d.createdAt,
          updatedAt: d.createdAt,
        };
        return { ...state, exists: true, member };
      }
      case 'MemberUpdated':
        return { ...state, member: event.data.member };
      case 'MemberArchived':
        return { ...state, member: event.data.member };
      case 'MemberAccountLinked':
        return state.member
          ? {
              ...state,
              member: {
                ...state.member,
                accountUuid: event.data.accountUuid,
                updatedAt: event.data.linkedAt,
              },
            }
          : state;
      case 'MemberTokensRevoked':
        return { ...state, tokensRevokedBefore: event.data.revokedBefore };
      case 'MemberWriteFenced':
        return state.exists ? state : { ...state, fenced: true };
      case 'MemberOptedOutOfSms':
      case 'MemberOptedInToSms':
        // The notifySms change travels in the MemberUpdated appended with it.
        return state;
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreateMember': {
        if (state.exists || state.fenced)
          throw new ConflictError(`Member ${command.member.memberId} already exists`);
        checkRoleAssignment(command.member.kind, command.role, command.member.workspaceId, command.assigner);
        checkAgentSettings(command.member.kind, command.member);
        const created: MemberCreated = {
          type: 'MemberCreated',
          data: { ...command.member, createdAt: command.now },
        };
        return [created];
      }
      case 'UpdateMember':
        return decideUpdate(command, state);
      case 'ArchiveMember': {
        const m = existing(state, command.workspaceId);
        if (m.status === 'archived') return [];
        const member: MemberSnapshot = {
          ...m,
          memberRoleId: command.currentRoleId,
          status: 'archived',
          updatedAt: command.now,
        };
        return [
          {
            type: 'MemberArchived',
            data: {
              memberId: command.memberId,
              workspaceId: command.workspaceId,
              member,
              archivedAt: command.now,
            },
          },
        ];
      }
      case 'LinkAccount': {
        const m = active(state, command.workspaceId);
        if (m.accountUuid === command.accountUuid) return [];
        if (m.accountUuid) throw new ConflictError('Member already belongs to another account');
        return [
          {
            type: 'MemberAccountLinked',
            data: {
              memberId: command.memberId,
              workspaceId: command.workspaceId,
              accountUuid: command.accountUuid,
              linkedAt: command.now,
            },
          },
        ];
      }
      case 'RecordSmsConsent':
        return decideSmsConsent(command, state);
      case 'RevokeMemberTokens':
        existing(state, command.workspaceId);
        return [
          {
            type: 'MemberTokensRevoked',
            data: {
              memberId: command.memberId,
              workspaceId: command.workspaceId,
              revokedBefore: command.now,
            },
          },
        ];
    }
  },
};
