import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { nextId } from '../../../core/database/ids';
import { assignmentDecider, MemberToAssign } from '../domain/assignment';
import { assertMayStartFor } from '../domain/work-access.policy';
import { assignmentStream, AssignmentStatus } from '../domain/work.events';
import { StartAssignmentCommand } from './start-assignment.command';
import { WorkFacts } from './work-facts';

export { StartAssignmentCommand };

export class SetAssignmentStatusCommand {
  constructor(
    readonly workspaceId: string,
    readonly assignmentId: number,
    readonly status: AssignmentStatus,
    readonly completedAt: string | undefined,
    readonly expectedRevision?: bigint,
  ) {}
}

/**
 * Starts a workflow for a member (POST /assignments): who may start it for whom
 * (work-access.policy), then the decider checks the workflow, the member and the
 * workflow's Member Role Gate for that member. Returns the assignment id.
 */
@CommandHandler(StartAssignmentCommand)
export class StartAssignmentHandler implements ICommandHandler<StartAssignmentCommand, number> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly facts: WorkFacts,
    private readonly db: DataSource,
  ) {}

  async execute(cmd: StartAssignmentCommand): Promise<number> {
    const { workspaceId } = cmd;
    const caller = await this.facts.caller(workspaceId, cmd.caller);
    const memberId = cmd.memberId ?? caller.memberId ?? 0;
    assertMayStartFor(caller, memberId);
    const [workflow, members] = await Promise.all([
      this.facts.workflowToStart(workspaceId, cmd.workflowId),
      this.facts.members(workspaceId, [memberId]),
    ]);
    const found = members.get(memberId);
    const member: MemberToAssign | undefined = found && {
      memberId: found.memberId,
      memberRoleId: found.memberRoleId,
      status: found.status,
    };
    const assignmentId = await nextId(this.db, 'assignment_id_seq');
    await this.repo.handle({
      streamName: assignmentStream(assignmentId),
      workspaceId,
      decider: assignmentDecider,
      command: {
        type: 'StartAssignment',
        assignmentId,
        workspaceId,
        workflowId: cmd.workflowId,
        workflow,
        memberId,
        member,
        now: new Date().toISOString(),
      },
    });
    return assignmentId;
  }
}

/** PUT /assignments/{id}: ends an active assignment (completed, failed, cancelled). */
@CommandHandler(SetAssignmentStatusCommand)
export class SetAssignmentStatusHandler implements ICommandHandler<SetAssignmentStatusCommand> {
  constructor(private readonly repo: EventSourcedRepository) {}

  async execute(cmd: SetAssignmentStatusCommand): Promise<void> {
    await this.repo.handle({
      streamName: assignmentStream(cmd.assignmentId),
      workspaceId: cmd.workspaceId,
      decider: assignmentDecider,
      expectedRevision: cmd.expectedRevision,
      command: {
        type: 'SetAssignmentStatus',
        assignmentId: cmd.assignmentId,
        workspaceId: cmd.workspaceId,
        status: cmd.status,
        completedAt: cmd.completedAt,
        now: new Date().toISOString(),
      },
    });
  }
}
