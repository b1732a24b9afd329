import { ClaimPlan, ClaimRef, defineClaimKind } from '../../../core/claims/claims';
import { Decider, fold } from '../../../core/cqrs/decider';
import { ConflictError, NotFoundError, ValidationError } from '../../../core/http/domain-errors';

export const GRANT_ACCESS = ['read', 'write'] as const;
export type GrantAccess = (typeof GRANT_ACCESS)[number];

export const recordGrantStream = (id: number): string => `recordgrant-${id}`;

/** The owner's records (of one data type, or all) shared with the grantee (SPEC "Scopes", case 5). */
export interface RecordGrantCreated {
  type: 'RecordGrantCreated';
  data: {
    grantId: number;
    workspaceId: string;
    granteeMemberId: number;
    ownerMemberId: number;
    access: GrantAccess;
    dataTypeId: number | null;
    grantedBy: number | null;
    createdAt: string;
  };
}

export interface RecordGrantRevoked {
  type: 'RecordGrantRevoked';
  data: { grantId: number; workspaceId: string; revokedAt: string };
}

export type RecordGrantEvent = RecordGrantCreated | RecordGrantRevoked;

export type RecordGrantCommand =
  | {
      type: 'CreateRecordGrant';
      grantId: number;
      workspaceId: string;
      granteeMemberId: number;
      ownerMemberId: number;
      access: string;
      dataTypeId: number | null;
      /** Facts the handler found: both members exist in the workspace, the type too. */
      granteeExists: boolean;
      ownerExists: boolean;
      dataTypeExists: boolean;
      grantedBy: number | null;
      now: string;
    }
  | { type: 'RevokeRecordGrant'; workspaceId: string; now: string };

export interface RecordGrantState {
  status: 'absent' | 'active' | 'revoked';
  grant: RecordGrantCreated['data'] | null;
}

/** One grant per (grantee, owner, type, access): a second one is a 409, not a duplicate row. */
export const RECORD_GRANT_CLAIM = defineClaimKind({
  name: 'record_grant',
  holds(events, value, scope) {
    const s = fold(recordGrantDecider, events as RecordGrantEvent[]);
    return s.status === 'active' && s.grant!.workspaceId === scope && grantKey(s.grant!) === value;
  },
});

const grantKey = (
  g: Pick<RecordGrantCreated['data'], 'granteeMemberId' | 'ownerMemberId' | 'dataTypeId' | 'access'>,
) => `${g.granteeMemberId}:${g.ownerMemberId}:${g.dataTypeId ?? '*'}:${g.access}`;

export function recordGrantClaims(events: readonly RecordGrantEvent[], before: RecordGrantState): ClaimPlan {
  const take: ClaimRef[] = [];
  const release: ClaimRef[] = [];
  for (const e of events) {
    if (e.type === 'RecordGrantCreated')
      take.push({ scope: e.data.workspaceId, kind: RECORD_GRANT_CLAIM, value: grantKey(e.data) });
    else if (before.grant)
      release.push({
        scope: before.grant.workspaceId,
        kind: RECORD_GRANT_CLAIM,
        value: grantKey(before.grant),
      });
  }
  return { take, release };
}

export function grantConflict(): ConflictError {
  return new ConflictError('A grant with this grantee, owner, data type and access already exists');
}

export const recordGrantDecider: Decider<RecordGrantState, RecordGrantCommand, RecordGrantEvent> = {
  initialState: () => ({ status: 'absent', grant: null }),

  evolve(state, event) {
    switch (event.type) {
      case 'RecordGrantCreated':
        return { status: 'active', grant: event.data };
      case 'RecordGrantRevoked':
        return { ...state, status: 'revoked' };
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreateRecordGrant': {
        if (state.status !== 'absent')
          throw new ConflictError(`A grant with id ${command.grantId} already exists`);
        if (!(GRANT_ACCESS as readonly string[]).includes(command.access))
          throw new ValidationError(`access: must be one of ${GRANT_ACCESS.join(', ')}`);
        if (!command.granteeExists)
          throw new ValidationError('granteeMemberId: no member with this id in this workspace');
        if (!command.ownerExists)
          throw new ValidationError('ownerMemberId: no member with this id in this workspace');
        if (command.granteeMemberId === command.ownerMemberId)
          throw new ValidationError('granteeMemberId: a member already holds its own records');
        if (command.dataTypeId !== null && !command.dataTypeExists)
          throw new ValidationError('dataTypeId: no data type with this id in this workspace');
        return [
          {
            type: 'RecordGrantCreated',
            data: {
              grantId: command.grantId,
              workspaceId: command.workspaceId,
              granteeMemberId: command.granteeMemberId,
              ownerMemberId: command.ownerMemberId,
              access: command.access as GrantAccess,
              dataTypeId: command.dataTypeId,
              grantedBy: command.grantedBy,
              createdAt: command.now,
            },
          },
        ];
      }
      case 'RevokeRecordGrant': {
        if (state.status !== 'active' || state.grant!.workspaceId !== command.workspaceId)
          throw new NotFoundError('Grant not found');
        return [
          {
            type: 'RecordGrantRevoked',
            data: { grantId: state.grant!.grantId, workspaceId: command.workspaceId, revokedAt: command.now },
          },
        ];
      }
    }
  },
};
