import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { memberRoleDecider, memberRoleStream } from '../domain/member-role';
import { roleNameClaims } from '../domain/role-name-claim';
import { RoleReferences } from '../queries/role-references';

export class DeleteMemberRoleCommand {
  constructor(
    readonly workspaceId: string,
    readonly roleId: number,
    /** Pinned by If-Match: the role's stream must still be at this revision, else 412. */
    readonly expectedRevision?: bigint,
  ) {}
}

/** Deletes a custom role nobody holds, no invitation offers and that is not the workspace default. */
@CommandHandler(DeleteMemberRoleCommand)
export class DeleteMemberRoleHandler implements ICommandHandler<DeleteMemberRoleCommand> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly refs: RoleReferences,
  ) {}

  async execute(cmd: DeleteMemberRoleCommand): Promise<void> {
    const [holders, invitations, defaultRoleId] = await Promise.all([
      this.refs.holders(cmd.workspaceId, cmd.roleId),
      this.refs.unclaimedInvitationIds(cmd.workspaceId, cmd.roleId),
      this.refs.workspaceDefaultRoleId(cmd.workspaceId),
    ]);
    await this.repo.handle({
      streamName: memberRoleStream(cmd.roleId),
      workspaceId: cmd.workspaceId,
      decider: memberRoleDecider,
      expectedRevision: cmd.expectedRevision,
      command: {
        type: 'DeleteMemberRole',
        roleId: cmd.roleId,
        workspaceId: cmd.workspaceId,
        memberCount: holders.length,
        invitationCount: invitations.length,
        isWorkspaceDefault: defaultRoleId === cmd.roleId,
        now: new Date().toISOString(),
      },
      claims: roleNameClaims,
    });
  }
}
