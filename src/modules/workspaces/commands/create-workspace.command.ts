import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { streamOf, WorkspaceSettings, workspaceDecider } from '../domain/workspace';

export class CreateWorkspaceCommand {
  constructor(
    readonly workspaceId: string,
    readonly name: string,
    readonly settings: Partial<WorkspaceSettings> = {},
  ) {}
}

/** A new workspace (its stream must not exist yet); the decider checks the name and settings. */
@CommandHandler(CreateWorkspaceCommand)
export class CreateWorkspaceHandler implements ICommandHandler<CreateWorkspaceCommand> {
  constructor(private readonly repo: EventSourcedRepository) {}

  async execute(cmd: CreateWorkspaceCommand): Promise<void> {
    await this.repo.handle({
      streamName: streamOf(cmd.workspaceId),
      workspaceId: cmd.workspaceId,
      decider: workspaceDecider,
      command: {
        type: 'CreateWorkspace',
        workspaceId: cmd.workspaceId,
        name: cmd.name,
        settings: cmd.settings,
        now: new Date().toISOString(),
      },
    });
  }
}
