import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { streamOf, WorkspaceSettings, workspaceDecider } from '../domain/workspace';

export class UpdateWorkspaceCommand {
  constructor(
    readonly workspaceId: string,
    readonly changes: { name?: string; settings?: Partial<WorkspaceSettings> },
    readonly expectedRevision?: bigint,
  ) {}
}

@CommandHandler(UpdateWorkspaceCommand)
export class UpdateWorkspaceHandler implements ICommandHandler<UpdateWorkspaceCommand> {
  constructor(private readonly repo: EventSourcedRepository) {}

  async execute(cmd: UpdateWorkspaceCommand): Promise<void> {
    await this.repo.handle({
      streamName: streamOf(cmd.workspaceId),
      workspaceId: cmd.workspaceId,
      decider: workspaceDecider,
      expectedRevision: cmd.expectedRevision,
      command: {
        type: 'UpdateWorkspace',
        workspaceId: cmd.workspaceId,
        ...cmd.changes,
        now: new Date().toISOString(),
      },
    });
  }
}
