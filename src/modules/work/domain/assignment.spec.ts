import {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  ValidationError,
} from '../../../core/http/domain-errors';
import { deciderSpec } from '../../../core/testing/decider-spec';
import { AssignmentCommand, assignmentDecider, WorkflowToStart } from './assignment';
import type { AssignmentEvent, AssignmentSnapshot } from './work.events';

const spec = deciderSpec(assignmentDecider);
const ws = '0190a6c4-0000-7000-8000-000000000001';
const now = '2026-11-23T10:00:00.000Z';
const later = '2026-11-23T10:30:00.000Z';

const workflow: WorkflowToStart = {
  workflowId: 4,
  uuid: '0190a6c4-0000-7000-8000-0000000000f4',
  workspaceId: ws,
  name: 'Intake',
  live: true,
  roleGate: { roleIds: [3], message: 'Coordinators only' },
  admittedRoleIds: [3],
};

const start = (
  over: Partial<Extract<AssignmentCommand, { type: 'StartAssignment' }>> = {},
): AssignmentCommand => ({
  type: 'StartAssignment',
  assignmentId: 20,
  workspaceId: ws,
  workflowId: 4,
  workflow,
  memberId: 7,
  member: { memberId: 7, memberRoleId: 3, status: 'active' },
  now,
  ...over,
});

const snapshot: AssignmentSnapshot = {
  id: 20,
  workspaceId: ws,
  workflowId: 4,
  workflowUuid: workflow.uuid,
  workflowName: 'Intake',
  memberId: 7,
  status: 'active',
  startedAt: now,
  completedAt: null,
};
const started: AssignmentEvent = {
  type: 'AssignmentStarted',
  data: { assignmentId: 20, workspaceId: ws, assignment: snapshot, startedAt: now },
};

const setStatus = (
  status: Extract<AssignmentCommand, { type: 'SetAssignmentStatus' }>['status'],
  completedAt?: string,
): AssignmentCommand => ({
  type: 'SetAssignmentStatus',
  assignmentId: 20,
  workspaceId: ws,
  status,
  completedAt,
  now: later,
});

describe('assignment decider', () => {
  it('starts a workflow for a member whose role the gate lists', () => {
    spec.given([]).when(start()).then([started]);
  });

  it("refuses a member whose role the gate does not list, with the gate's message", () => {
    spec
      .given([])
      .when(start({ member: { memberId: 7, memberRoleId: 8, status: 'active' } }))
      .thenThrows(ForbiddenError, /^Coordinators only$/);
  });

  it('lets anyone in without a gate', () => {
    spec
      .given([])
      .when(
        start({
          workflow: { ...workflow, roleGate: null, admittedRoleIds: [] },
          member: { memberId: 7, memberRoleId: 8, status: 'active' },
        }),
      )
      .then([started]);
  });

  it('refuses a deleted or foreign workflow and an archived or unknown member, naming the field', () => {
    spec
      .given([])
      .when(start({ workflow: undefined }))
      .thenThrows(ValidationError, /^workflowId:/);
    spec
      .given([])
      .when(start({ workflow: { ...workflow, live: false } }))
      .thenThrows(ValidationError, /^workflowId:/);
    spec
      .given([])
      .when(start({ member: { memberId: 7, memberRoleId: 3, status: 'archived' } }))
      .thenThrows(ValidationError, /^memberId:/);
    spec
      .given([])
      .when(start({ member: undefined }))
      .thenThrows(ValidationError, /^memberId:/);
  });

  it('ends an active assignment once: completed, failed or cancelled, at the given time or now', () => {
    spec
      .given([started])
      .when(setStatus('completed', '2026-11-23T10:20:00.000Z'))
      .then([
        {
          type: 'AssignmentCompleted',
          data: {
            assignmentId: 20,
            workspaceId: ws,
            assignment: { ...snapshot, status: 'completed', completedAt: '2026-11-23T10:20:00.000Z' },
            completedAt: '2026-11-23T10:20:00.000Z',
          },
        },
      ]);
    spec
      .given([started])
      .when(setStatus('failed'))
      .then([
        {
          type: 'AssignmentFailed',
          data: {
            assignmentId: 20,
            workspaceId: ws,
            assignment: { ...snapshot, status: 'failed', completedAt: later },
            completedAt: later,
          },
        },
      ]);
    spec
      .given([started])
      .when(setStatus('cancelled'))
      .then([
        {
          type: 'AssignmentCancelled',
          data: {
            assignmentId: 20,
            workspaceId: ws,
            assignment: { ...snapshot, status: 'cancelled', completedAt: later },
            completedAt: later,
          },
        },
      ]);
  });

  it('changes nothing when the status is already the one asked for', () => {
    spec.given([started]).when(setStatus('active')).then([]);
    const completed: AssignmentEvent = {
      type: 'AssignmentCompleted',
      data: {
        assignmentId: 20,
        workspaceId: ws,
        assignment: { ...snapshot, status: 'completed', completedAt: later },
        completedAt: later,
      },
    };
    spec.given([started, completed]).when(setStatus('completed')).then([]);
    spec
      .given([started, completed])
      .when(setStatus('failed'))
      .thenThrows(ConflictError, /^status: the assignment has already ended \(completed\)$/);
    spec
      .given([started, completed])
      .when(setStatus('active'))
      .thenThrows(ConflictError, /^status:/);
  });

  it('refuses a completedAt before the start or without an end status', () => {
    spec
      .given([started])
      .when(setStatus('completed', '2026-11-23T09:00:00.000Z'))
      .thenThrows(ValidationError, /^completedAt:/);
    spec
      .given([started])
      .when(setStatus('active', later))
      .thenThrows(ValidationError, /^completedAt:/);
  });

  it('reads completedAt as an instant whatever way its offset is written, and stores it in UTC', () => {
    // 2026-11-23T09:00:00Z, before the start, in offset forms Date.parse cannot read.
    for (const early of ['2026-11-23T14:00:00+05', '2026-11-23T14:30:00+0530', '2026-11-23t09:00:00z'])
      spec
        .given([started])
        .when(setStatus('completed', early))
        .thenThrows(ValidationError, /^completedAt: must not be before/);
    spec
      .given([started])
      .when(setStatus('failed', '2026-11-23T15:20:00.123456789+05'))
      .then([
        {
          type: 'AssignmentFailed',
          data: {
            assignmentId: 20,
            workspaceId: ws,
            assignment: { ...snapshot, status: 'failed', completedAt: '2026-11-23T10:20:00.123Z' },
            completedAt: '2026-11-23T10:20:00.123Z',
          },
        },
      ]);
    spec
      .given([started])
      .when(setStatus('completed', 'yesterday'))
      .thenThrows(ValidationError, /^completedAt:/);
  });

  it('does not know an assignment of another workspace', () => {
    spec
      .given([started])
      .when({
        ...setStatus('completed'),
        workspaceId: '0190a6c4-0000-7000-8000-000000000002',
      } as AssignmentCommand)
      .thenThrows(NotFoundError);
    spec.given([]).when(setStatus('completed')).thenThrows(NotFoundError);
  });
});
