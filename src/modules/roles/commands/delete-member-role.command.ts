import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { ReferenceGate } from '../../../core/cqrs/reference-gate';
import { ConflictError } from '../../../core/http/domain-errors';
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

/**
 * Deletes a custom role nobody holds, no invitation offers and that is not the workspace
 * default. Those are read from the read models, and the writes that refer to a role
 * (assigning it, inviting with it, making it the default) check the role's own stream:
 * core's ReferenceGate keeps the two from crossing (the deletion decides once the writes
 * already under way are projected; later ones wait and then find the role deleted).
 */
@CommandHandler(DeleteMemberRoleCommand)
export class DeleteMemberRoleHandler implements ICommandHandler<DeleteMemberRoleCommand> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly refs: RoleReferences,
    private readonly gate: ReferenceGate,
  ) {}

  execute(cmd: DeleteMemberRoleCommand): Promise<void> {
    return this.gate.removing(
      memberRoleStream(cmd.roleId),
      () => this.delete(cmd),
      () =>
        new ConflictError(
          `Role ${cmd.roleId} is being given to members, invitations or the workspace default; retry`,
        ),
    );
  }

  private async delete(cmd: DeleteMemberRoleCommand): Promise<void> {
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
