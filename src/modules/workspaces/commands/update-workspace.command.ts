import { CommandHandler, ICommandHandler, QueryBus } from '@nestjs/cqrs';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { ReferenceGate } from '../../../core/cqrs/reference-gate';
import { ConflictError } from '../../../core/http/domain-errors';
import { memberRoleStream, ResolveDefaultMemberRoleQuery } from '../../roles';
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
    private readonly queries: QueryBus,
    private readonly gate: ReferenceGate,
  ) {}

  /**
   * A new default role is checked (from the role's stream) and written inside core's
   * ReferenceGate: roles' deletion decides from the workspaces read model that the role is
   * not the default, so the two must not cross.
   */
  execute(cmd: UpdateWorkspaceCommand): Promise<void> {
    const requested = cmd.changes.settings?.defaultMemberRoleId;
    if (typeof requested !== 'number') return this.update(cmd);
    return this.gate.referring(
      [memberRoleStream(requested)],
      () => this.update(cmd),
      () => new ConflictError(`settings.defaultMemberRoleId: role ${requested} is being deleted; retry`),
    );
  }

  private async update(cmd: UpdateWorkspaceCommand): Promise<void> {
    const requested = cmd.changes.settings?.defaultMemberRoleId;
    // null (back to the built-in User role) is stored as User's id, so the setting always
    // names the role whose isDefault is true.
    const settings =
      requested === undefined
        ? cmd.changes.settings
        : {
            ...cmd.changes.settings,
            defaultMemberRoleId: await this.queries.execute<ResolveDefaultMemberRoleQuery, number | null>(
              new ResolveDefaultMemberRoleQuery(
                cmd.workspaceId,
                requested,
                'settings.defaultMemberRoleId',
                cmd.granter,
              ),
            ),
          };
    await this.repo.handle({
      streamName: streamOf(cmd.workspaceId),
      workspaceId: cmd.workspaceId,
      decider: workspaceDecider,
      expectedRevision: cmd.expectedRevision,
      command: {
        type: 'UpdateWorkspace',
        workspaceId: cmd.workspaceId,
        name: cmd.changes.name,
        settings,
        now: new Date().toISOString(),
      },
    });
  }
}
