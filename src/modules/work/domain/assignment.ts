import { Decider } from '../../../core/cqrs/decider';
import { ConflictError, NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { parseDateTime } from '../../../core/http/pagination';
import { assertPassesRoleGate } from './role-gate.policy';
import type { AssignmentEvent, AssignmentSnapshot, AssignmentStatus, RoleGate } from './work.events';

/** The workflow to start, as its own stream shows it (undefined: no such workflow). */
export interface WorkflowToStart {
  workflowId: number;
  uuid: string;
  workspaceId: string;
  name: string;
  live: boolean;
  roleGate: RoleGate | null;
  /** The gate's role ids followed through role merges: the roles that count as listed. */
  admittedRoleIds: number[];
}

/** The member to start it for, as identity shows it (undefined: no member of this workspace). */
export interface MemberToAssign {
  memberId: number;
  memberRoleId: number;
  status: 'active' | 'archived';
}

export type EndStatus = Exclude<AssignmentStatus, 'active'>;

export type AssignmentCommand =
  | {
      type: 'StartAssignment';
      assignmentId: number;
      workspaceId: string;
      workflowId: number;
      workflow: WorkflowToStart | undefined;
      memberId: number;
      member: MemberToAssign | undefined;
      now: string;
    }
  | {
      type: 'SetAssignmentStatus';
      assignmentId: number;
      workspaceId: string;
      status: AssignmentStatus;
      /** When it ended; defaults to now. Only with an end status. */
      completedAt?: string;
      now: string;
    };

export type AssignmentState = { exists: false } | { exists: true; assignment: AssignmentSnapshot };

const END_EVENT = {
  completed: 'AssignmentCompleted',
  failed: 'AssignmentFailed',
  cancelled: 'AssignmentCancelled',
} as const satisfies Record<EndStatus, AssignmentEvent['type']>;

/**
 * The end as stored: the instant in UTC ISO form, not before the start. Parsed as core
 * parses every date-time the API takes, never with Date.parse: `+05` or `+0530` offsets are
 * valid ISO 8601 that Date.parse reads as NaN, which compared as "not before" and then
 * reached the read model as an invalid date, stopping the assignments projection.
 */
function endTimeOf(raw: string, startedAt: string): string {
  const end = parseDateTime(raw);
  if (!end) throw new ValidationError('completedAt: must be an ISO 8601 date-time with an offset');
  const start = parseDateTime(startedAt);
  if (start && end.epochNanos < start.epochNanos)
    throw new ValidationError('completedAt: must not be before the assignment started');
  return new Date(Number(end.epochNanos / 1_000_000n)).toISOString();
}

export const assignmentDecider: Decider<AssignmentState, AssignmentCommand, AssignmentEvent> = {
  initialState: () => ({ exists: false }),

  evolve(_state, event) {
    switch (event.type) {
      case 'AssignmentStarted':
      case 'AssignmentCompleted':
      case 'AssignmentFailed':
      case 'AssignmentCancelled':
        // Every event carries the whole assignment as it now stands.
        return { exists: true, assignment: event.data.assignment };
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'StartAssignment': {
        if (state.exists) throw new ConflictError('An assignment with this id already exists');
        const wf = command.workflow;
        if (!wf || !wf.live || wf.workspaceId !== command.workspaceId)
          throw new ValidationError(
            `workflowId: workflow ${command.workflowId} does not exist in this workspace`,
          );
        const member = command.member;
        if (!member || member.status !== 'active')
          throw new ValidationError(
            `memberId: member ${command.memberId} is not an active member of this workspace`,
          );
        assertPassesRoleGate(wf.roleGate, member.memberRoleId, wf.admittedRoleIds);
        const assignment: AssignmentSnapshot = {
          id: command.assignmentId,
          workspaceId: command.workspaceId,
          workflowId: wf.workflowId,
          workflowUuid: wf.uuid,
          workflowName: wf.name,
          memberId: member.memberId,
          status: 'active',
          startedAt: command.now,
          completedAt: null,
        };
        return [
          {
            type: 'AssignmentStarted',
            data: {
              assignmentId: command.assignmentId,
              workspaceId: command.workspaceId,
              assignment,
              startedAt: command.now,
            },
          },
        ];
      }
      case 'SetAssignmentStatus': {
        if (!state.exists || state.assignment.workspaceId !== command.workspaceId)
          throw new NotFoundError('Assignment not found');
        const current = state.assignment;
        if (command.status === 'active') {
          if (command.completedAt !== undefined)
            throw new ValidationError(
              'completedAt: only an assignment that ends (completed, failed, cancelled) has one',
            );
          if (current.status === 'active') return [];
          throw new ConflictError(
            `status: the assignment has ended (${current.status}); it cannot become active again`,
          );
        }
        if (current.status === command.status) return [];
        if (current.status !== 'active')
          throw new ConflictError(`status: the assignment has already ended (${current.status})`);
        const completedAt = endTimeOf(command.completedAt ?? command.now, current.startedAt);
        return [
          {
            type: END_EVENT[command.status],
            data: {
              assignmentId: command.assignmentId,
              workspaceId: command.workspaceId,
              assignment: { ...current, status: command.status, completedAt },
              completedAt,
            },
          },
        ];
      }
    }
  },
};
