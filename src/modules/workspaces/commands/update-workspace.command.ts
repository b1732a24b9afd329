import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { DefaultRoleCheck } from '../../roles/commands/default-role-check';
import { streamOf, WorkspaceSettings, workspaceDecider } from '../domain/workspace';

export class UpdateWorkspaceCommand {
  constructor(
    readonly workspaceId: string,
    readonly changes: { name?: string; settings?: Partial<WorkspaceSettings> },
    /** The caller's effective scopes here: a new default role cannot grant more (roles' escalation rule). */
    readonly granter: readonly string[],
    readonly expectedRevision?: bigint,
  ) {}
}

@CommandHandler(UpdateWorkspaceCommand)
export class UpdateWorkspaceHandler implements ICommandHandler<UpdateWorkspaceCommand> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly defaultRoles: DefaultRoleCheck,
  ) {}

  async execute(cmd: UpdateWorkspaceCommand): Promise<void> {
    const defaultRoleId = cmd.changes.settings?.defaultMemberRoleId;
    if (typeof defaultRoleId === 'number')
      await this.defaultRoles.assertEligible(
        cmd.workspaceId,
        defaultRoleId,
        'settings.defaultMemberRoleId',
        cmd.granter,
      );
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
