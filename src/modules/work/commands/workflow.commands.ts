import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { nextId } from '../../../core/database/ids';
import { AgentFacts, RequestedRoleGate, workflowDecider } from '../domain/workflow';
import { workflowStream } from '../domain/work.events';
import { WorkFacts } from './work-facts';

export interface RoleGateInput {
  roleIds: number[];
  message?: string;
}

export interface WorkflowInput {
  name: string;
  agentId: number;
  defaultPhoneNumberId?: number | null;
  roleGate?: RoleGateInput | null;
}

export class CreateWorkflowCommand {
  constructor(
    readonly workspaceId: string,
    readonly input: WorkflowInput,
  ) {}
}

export class UpdateWorkflowCommand {
  constructor(
    readonly workspaceId: string,
    readonly workflowId: number,
    readonly changes: Partial<WorkflowInput>,
    /** Pinned by If-Match: the workflow's stream must still be at this revision, else 412. */
    readonly expectedRevision?: bigint,
  ) {}
}

export class DeleteWorkflowCommand {
  constructor(
    readonly workspaceId: string,
    readonly workflowId: number,
    readonly expectedRevision?: bigint,
  ) {}
}

async function agentFacts(
  facts: WorkFacts,
  workspaceId: string,
  agentId: number,
): Promise<AgentFacts | undefined> {
  const member = (await facts.members(workspaceId, [agentId])).get(agentId);
  return member && { kind: member.kind, status: member.status };
}

async function requestedGate(
  facts: WorkFacts,
  workspaceId: string,
  gate: RoleGateInput | null,
): Promise<RequestedRoleGate | null> {
  if (gate === null) return null;
  return { ...gate, unknownRoleIds: await facts.unknownRoles(workspaceId, gate.roleIds) };
}

/** Creates a workflow (integer id and uuid); returns its id. */
@CommandHandler(CreateWorkflowCommand)
export class CreateWorkflowHandler implements ICommandHandler<CreateWorkflowCommand, number> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly facts: WorkFacts,
    private readonly db: DataSource,
  ) {}

  async execute({ workspaceId, input }: CreateWorkflowCommand): Promise<number> {
    const [agent, roleGate] = await Promise.all([
      agentFacts(this.facts, workspaceId, input.agentId),
      requestedGate(this.facts, workspaceId, input.roleGate ?? null),
    ]);
    const workflowId = await nextId(this.db, 'workflow_id_seq');
    await this.repo.handle({
      streamName: workflowStream(workflowId),
      workspaceId,
      decider: workflowDecider,
      command: {
        type: 'CreateWorkflow',
        workflowId,
        uuid: randomUUID(),
        workspaceId,
        name: input.name,
        agentId: input.agentId,
        agent,
        defaultPhoneNumberId: input.defaultPhoneNumberId ?? null,
        roleGate,
        now: new Date().toISOString(),
      },
    });
    return workflowId;
  }
}

@CommandHandler(UpdateWorkflowCommand)
export class UpdateWorkflowHandler implements ICommandHandler<UpdateWorkflowCommand> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly facts: WorkFacts,
  ) {}

  async execute(cmd: UpdateWorkflowCommand): Promise<void> {
    const { workspaceId, changes } = cmd;
    const [agent, roleGate] = await Promise.all([
      changes.agentId === undefined ? undefined : agentFacts(this.facts, workspaceId, changes.agentId),
      changes.roleGate === undefined ? undefined : requestedGate(this.facts, workspaceId, changes.roleGate),
    ]);
    await this.repo.handle({
      streamName: workflowStream(cmd.workflowId),
      workspaceId,
      decider: workflowDecider,
      expectedRevision: cmd.expectedRevision,
      command: {
        type: 'UpdateWorkflow',
        workflowId: cmd.workflowId,
        workspaceId,
        name: changes.name,
        agentId: changes.agentId,
        agent,
        defaultPhoneNumberId: changes.defaultPhoneNumberId,
        roleGate,
        now: new Date().toISOString(),
      },
    });
  }
}

@CommandHandler(DeleteWorkflowCommand)
export class DeleteWorkflowHandler implements ICommandHandler<DeleteWorkflowCommand> {
  constructor(private readonly repo: EventSourcedRepository) {}

  async execute(cmd: DeleteWorkflowCommand): Promise<void> {
    await this.repo.handle({
      streamName: workflowStream(cmd.workflowId),
      workspaceId: cmd.workspaceId,
      decider: workflowDecider,
      expectedRevision: cmd.expectedRevision,
      command: {
        type: 'DeleteWorkflow',
        workflowId: cmd.workflowId,
        workspaceId: cmd.workspaceId,
        now: new Date().toISOString(),
      },
    });
  }
}
