import { Decider } from '../../../core/cqrs/decider';
import { ConflictError, NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { checkRoleGate } from './role-gate.policy';
import type { RoleGate, WorkflowChanges, WorkflowEvent } from './work.events';

export const WORKFLOW_NAME_MAX = 200;

/** What identity says of the member an agentId names (undefined: no member of this workspace). */
export interface AgentFacts {
  kind: 'person' | 'agent';
  status: 'active' | 'archived';
}

/** A gate as the caller asked for it, with the roles the handler found not to be of the workspace. */
export interface RequestedRoleGate {
  roleIds: number[];
  message?: string;
  unknownRoleIds: number[];
}

export type WorkflowCommand =
  | {
      type: 'CreateWorkflow';
      workflowId: number;
      uuid: string;
      workspaceId: string;
      name: string;
      agentId: number;
      agent: AgentFacts | undefined;
      defaultPhoneNumberId: number | null;
      roleGate: RequestedRoleGate | null;
      now: string;
    }
  | {
      type: 'UpdateWorkflow';
      workflowId: number;
      workspaceId: string;
      name?: string;
      agentId?: number;
      agent?: AgentFacts;
      defaultPhoneNumberId?: number | null;
      roleGate?: RequestedRoleGate | null;
      now: string;
    }
  | { type: 'DeleteWorkflow'; workflowId: number; workspaceId: string; now: string };

export interface WorkflowState {
  status: 'none' | 'active' | 'deleted';
  workflowId: number;
  uuid: string;
  workspaceId: string;
  name: string;
  agentId: number;
  defaultPhoneNumberId: number | null;
  roleGate: RoleGate | null;
}

function checkName(raw: string): string {
  const name = raw.trim();
  if (!name) throw new ValidationError('name: must not be empty');
  if (name.length > WORKFLOW_NAME_MAX)
    throw new ValidationError(`name: must be at most ${WORKFLOW_NAME_MAX} characters`);
  return name;
}

/** agentId names an agent member of the workspace (SPEC "Workflow"; issue 10 item 1), else 400. */
function checkAgent(agentId: number, agent: AgentFacts | undefined): number {
  if (!agent || agent.status !== 'active')
    throw new ValidationError(`agentId: member ${agentId} is not an active member of this workspace`);
  if (agent.kind !== 'agent')
    throw new ValidationError(`agentId: member ${agentId} is a person, not an agent member`);
  return agentId;
}

function checkPhoneNumberId(id: number | null): number | null {
  if (id !== null && (!Number.isInteger(id) || id < 1))
    throw new ValidationError('defaultPhoneNumberId: must be a positive integer or null');
  return id;
}

const sameGate = (a: RoleGate | null, b: RoleGate | null): boolean =>
  a === b ||
  (a !== null &&
    b !== null &&
    a.message === b.message &&
    a.roleIds.length === b.roleIds.length &&
    a.roleIds.every((id, i) => id === b.roleIds[i]));

/**
 * The gate as stored. Roles the gate already lists pass even if deleted or merged away
 * since (as an unchanged agentId passes): a client that sends back the gate it read, with
 * another change, is not refused for it. A role added anew must be a live one.
 */
const gateOf = (g: RequestedRoleGate | null, listed: readonly number[] = []): RoleGate | null =>
  g === null
    ? null
    : checkRoleGate(
        g,
        g.unknownRoleIds.filter((id) => !listed.includes(id)),
      );

/** A workflow of another workspace, or a deleted one, reads as absent. */
function assertLive(state: WorkflowState, workspaceId: string): void {
  if (state.status !== 'active' || state.workspaceId !== workspaceId)
    throw new NotFoundError('Workflow not found');
}

export const workflowDecider: Decider<WorkflowState, WorkflowCommand, WorkflowEvent> = {
  initialState: () => ({
    status: 'none',
    workflowId: 0,
    uuid: '',
    workspaceId: '',
    name: '',
    agentId: 0,
    defaultPhoneNumberId: null,
    roleGate: null,
  }),

  evolve(state, event) {
    switch (event.type) {
      case 'WorkflowCreated': {
        const d = event.data;
        return {
          status: 'active',
          workflowId: d.workflowId,
          uuid: d.uuid,
          workspaceId: d.workspaceId,
          name: d.name,
          agentId: d.agentId,
          defaultPhoneNumberId: d.defaultPhoneNumberId,
          roleGate: d.roleGate,
        };
      }
      case 'WorkflowUpdated':
        return { ...state, ...event.data.changes };
      case 'WorkflowDeleted':
        return { ...state, status: 'deleted' };
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreateWorkflow': {
        if (state.status !== 'none') throw new ConflictError('A workflow with this id already exists');
        return [
          {
            type: 'WorkflowCreated',
            data: {
              workflowId: command.workflowId,
              uuid: command.uuid,
              workspaceId: command.workspaceId,
              name: checkName(command.name),
              agentId: checkAgent(command.agentId, command.agent),
              defaultPhoneNumberId: checkPhoneNumberId(command.defaultPhoneNumberId),
              roleGate: gateOf(command.roleGate),
              createdAt: command.now,
            },
          },
        ];
      }
      case 'UpdateWorkflow': {
        assertLive(state, command.workspaceId);
        const changes: WorkflowChanges = {};
        if (command.name !== undefined) {
          const name = checkName(command.name);
          if (name !== state.name) changes.name = name;
        }
        if (command.agentId !== undefined && command.agentId !== state.agentId)
          changes.agentId = checkAgent(command.agentId, command.agent);
        if (command.defaultPhoneNumberId !== undefined) {
          const id = checkPhoneNumberId(command.defaultPhoneNumberId);
          if (id !== state.defaultPhoneNumberId) changes.defaultPhoneNumberId = id;
        }
        if (command.roleGate !== undefined) {
          const gate = gateOf(command.roleGate, state.roleGate?.roleIds);
          if (!sameGate(gate, state.roleGate)) changes.roleGate = gate;
        }
        if (!Object.keys(changes).length) return [];
        return [
          {
            type: 'WorkflowUpdated',
            data: {
              workflowId: command.workflowId,
              workspaceId: command.workspaceId,
              changes,
              updatedAt: command.now,
            },
          },
        ];
      }
      case 'DeleteWorkflow':
        assertLive(state, command.workspaceId);
        return [
          {
            type: 'WorkflowDeleted',
            data: {
              workflowId: command.workflowId,
              workspaceId: command.workspaceId,
              deletedAt: command.now,
            },
          },
        ];
    }
  },
};
