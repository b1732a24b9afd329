import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { ClaimTakenError } from '../../../core/claims/claims';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { nextId } from '../../../core/database/ids';
import { TaskInput, TaskReferences, taskDecider } from '../domain/task';
import { taskSlugClaims, taskSlugConflict } from '../domain/task-slug-claim';
import { assertMayCreateTask, assertMaySeeTask } from '../domain/work-access.policy';
import { TaskChanges, taskStream } from '../domain/work.events';
import { CallerRef, WorkFacts } from './work-facts';

export class CreateTaskCommand {
  constructor(
    readonly workspaceId: string,
    readonly input: TaskInput,
    readonly caller: CallerRef,
  ) {}
}

export class UpdateTaskCommand {
  constructor(
    readonly workspaceId: string,
    readonly taskId: number,
    readonly changes: TaskChanges,
    readonly caller: CallerRef,
    readonly expectedRevision?: bigint,
  ) {}
}

export class DeleteTaskCommand {
  constructor(
    readonly workspaceId: string,
    readonly taskId: number,
    readonly caller: CallerRef,
    readonly expectedRevision?: bigint,
  ) {}
}

async function references(
  facts: WorkFacts,
  workspaceId: string,
  assignees: readonly number[] | undefined,
  workflowId: number | null | undefined,
): Promise<TaskReferences> {
  const [unknownAssignees, workflowExists] = await Promise.all([
    assignees?.length ? facts.unknownMembers(workspaceId, assignees) : [],
    workflowId == null ? true : facts.workflowExists(workspaceId, workflowId),
  ]);
  return { unknownAssignees, workflowExists };
}

/** Creates a task; its slug (if any) is claimed with the append. Returns the task id. */
@CommandHandler(CreateTaskCommand)
export class CreateTaskHandler implements ICommandHandler<CreateTaskCommand, number> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly facts: WorkFacts,
    private readonly db: DataSource,
  ) {}

  async execute({ workspaceId, input, caller }: CreateTaskCommand): Promise<number> {
    assertMayCreateTask(await this.facts.caller(workspaceId, caller), input);
    const refs = await references(this.facts, workspaceId, input.assignees, input.workflowId);
    const taskId = await nextId(this.db, 'task_id_seq');
    try {
      await this.repo.handle({
        streamName: taskStream(taskId),
        workspaceId,
        decider: taskDecider,
        command: { type: 'CreateTask', taskId, workspaceId, ...input, refs, now: new Date().toISOString() },
        claims: taskSlugClaims,
      });
    } catch (error) {
      if (error instanceof ClaimTakenError) throw taskSlugConflict(error, input.slug ?? '');
      throw error;
    }
    return taskId;
  }
}

/** Changes a task the caller may see (an admin-only one needs assignments:admin, else 404). */
@CommandHandler(UpdateTaskCommand)
export class UpdateTaskHandler implements ICommandHandler<UpdateTaskCommand> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly facts: WorkFacts,
  ) {}

  async execute(cmd: UpdateTaskCommand): Promise<void> {
    const { workspaceId, changes } = cmd;
    const caller = await this.facts.caller(workspaceId, cmd.caller);
    const refs = await references(this.facts, workspaceId, changes.assignees, undefined);
    await this.repo.handle({
      streamName: taskStream(cmd.taskId),
      workspaceId,
      decider: taskDecider,
      expectedRevision: cmd.expectedRevision,
      command: {
        from: (state) => {
          if (state.status === 'live' && state.task.workspaceId === workspaceId)
            assertMaySeeTask(caller, state.task);
          return {
            type: 'UpdateTask' as const,
            taskId: cmd.taskId,
            workspaceId,
            ...changes,
            refs,
            now: new Date().toISOString(),
          };
        },
      },
    });
  }
}

@CommandHandler(DeleteTaskCommand)
export class DeleteTaskHandler implements ICommandHandler<DeleteTaskCommand> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly facts: WorkFacts,
  ) {}

  async execute(cmd: DeleteTaskCommand): Promise<void> {
    const { workspaceId } = cmd;
    const caller = await this.facts.caller(workspaceId, cmd.caller);
    await this.repo.handle({
      streamName: taskStream(cmd.taskId),
      workspaceId,
      decider: taskDecider,
      expectedRevision: cmd.expectedRevision,
      command: {
        from: (state) => {
          if (state.status === 'live' && state.task.workspaceId === workspaceId)
            assertMaySeeTask(caller, state.task);
          return {
            type: 'DeleteTask' as const,
            taskId: cmd.taskId,
            workspaceId,
            now: new Date().toISOString(),
          };
        },
      },
      claims: taskSlugClaims,
    });
  }
}
