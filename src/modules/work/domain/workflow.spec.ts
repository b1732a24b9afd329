import { ConflictError, NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { deciderSpec } from '../../../core/testing/decider-spec';
import { WorkflowCommand, workflowDecider } from './workflow';
import type { WorkflowEvent } from './work.events';

const spec = deciderSpec(workflowDecider);
const ws = '0190a6c4-0000-7000-8000-000000000001';
const now = '2026-11-23T10:00:00.000Z';
const later = '2026-11-23T11:00:00.000Z';
const agent = { kind: 'agent' as const, status: 'active' as const };

const create = (
  over: Partial<Extract<WorkflowCommand, { type: 'CreateWorkflow' }>> = {},
): WorkflowCommand => ({
  type: 'CreateWorkflow',
  workflowId: 4,
  uuid: '0190a6c4-0000-7000-8000-0000000000f4',
  workspaceId: ws,
  name: ' Intake ',
  agentId: 9,
  agent,
  defaultPhoneNumberId: null,
  roleGate: { roleIds: [3, 3, 5], message: 'Coordinators only', unknownRoleIds: [] },
  now,
  ...over,
});

const created: WorkflowEvent = {
  type: 'WorkflowCreated',
  data: {
    workflowId: 4,
    uuid: '0190a6c4-0000-7000-8000-0000000000f4',
    workspaceId: ws,
    name: 'Intake',
    agentId: 9,
    defaultPhoneNumberId: null,
    roleGate: { roleIds: [3, 5], message: 'Coordinators only' },
    createdAt: now,
  },
};

const update = (over: Partial<Extract<WorkflowCommand, { type: 'UpdateWorkflow' }>>): WorkflowCommand => ({
  type: 'UpdateWorkflow',
  workflowId: 4,
  workspaceId: ws,
  now: later,
  ...over,
});

describe('workflow decider', () => {
  it('creates a workflow with a trimmed name, its agent and its gate (each role once)', () => {
    spec.given([]).when(create()).then([created]);
  });

  it('refuses an agentId that names a person, an archived member or nobody, naming the field', () => {
    spec
      .given([])
      .when(create({ agent: { kind: 'person', status: 'active' } }))
      .thenThrows(ValidationError, /^agentId: member 9 is a person, not an agent member$/);
    spec
      .given([])
      .when(create({ agent: { kind: 'agent', status: 'archived' } }))
      .thenThrows(ValidationError, /^agentId:/);
    spec
      .given([])
      .when(create({ agent: undefined }))
      .thenThrows(ValidationError, /^agentId:/);
  });

  it('refuses a gate naming roles outside the workspace, an empty name, a non-positive phone number id', () => {
    spec
      .given([])
      .when(create({ roleGate: { roleIds: [3, 77], unknownRoleIds: [77] } }))
      .thenThrows(ValidationError, /^roleGate\.roleIds: 77 is not a role of this workspace$/);
    spec
      .given([])
      .when(create({ name: '  ' }))
      .thenThrows(ValidationError, /^name:/);
    spec
      .given([])
      .when(create({ defaultPhoneNumberId: 0 }))
      .thenThrows(ValidationError, /^defaultPhoneNumberId:/);
  });

  it('refuses to create twice', () => {
    spec.given([created]).when(create()).thenThrows(ConflictError);
  });

  it('records only what changes, and nothing when nothing does', () => {
    spec
      .given([created])
      .when(update({ name: 'Intake', roleGate: null, defaultPhoneNumberId: 12 }))
      .then([
        {
          type: 'WorkflowUpdated',
          data: {
            workflowId: 4,
            workspaceId: ws,
            changes: { roleGate: null, defaultPhoneNumberId: 12 },
            updatedAt: later,
          },
        },
      ]);
    spec
      .given([created])
      .when(
        update({
          name: 'Intake',
          agentId: 9,
          roleGate: { roleIds: [3, 5], message: 'Coordinators only', unknownRoleIds: [] },
        }),
      )
      .then([]);
  });

  it('keeps gate roles deleted since they were listed, but lists no unknown role anew', () => {
    // Role 5 was deleted after the gate listed it: the gate sent back with a new message passes.
    spec
      .given([created])
      .when(update({ roleGate: { roleIds: [3, 5], message: 'Nurses only', unknownRoleIds: [5] } }))
      .then([
        {
          type: 'WorkflowUpdated',
          data: {
            workflowId: 4,
            workspaceId: ws,
            changes: { roleGate: { roleIds: [3, 5], message: 'Nurses only' } },
            updatedAt: later,
          },
        },
      ]);
    spec
      .given([created])
      .when(update({ roleGate: { roleIds: [3, 5, 77], unknownRoleIds: [5, 77] } }))
      .thenThrows(ValidationError, /^roleGate\.roleIds: 77 is not a role of this workspace$/);
  });

  it('checks a new agent as on create', () => {
    spec
      .given([created])
      .when(update({ agentId: 10, agent: { kind: 'person', status: 'active' } }))
      .thenThrows(ValidationError, /^agentId:/);
  });

  it('deletes once; a deleted workflow, or one of another workspace, is not found', () => {
    const deleted: WorkflowEvent = {
      type: 'WorkflowDeleted',
      data: { workflowId: 4, workspaceId: ws, deletedAt: later },
    };
    spec
      .given([created])
      .when({ type: 'DeleteWorkflow', workflowId: 4, workspaceId: ws, now: later })
      .then([deleted]);
    spec
      .given([created, deleted])
      .when({ type: 'DeleteWorkflow', workflowId: 4, workspaceId: ws, now: later })
      .thenThrows(NotFoundError);
    spec
      .given([created, deleted])
      .when(update({ name: 'X' }))
      .thenThrows(NotFoundError);
    spec
      .given([created])
      .when(update({ workspaceId: '0190a6c4-0000-7000-8000-000000000002', name: 'X' }))
      .thenThrows(NotFoundError);
  });
});
