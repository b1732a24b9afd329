import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { ReferenceGate } from '../../../core/cqrs/reference-gate';
import { ConflictError } from '../../../core/http/domain-errors';
import {
  assertMayGrantResourceAccess,
  assertMayTakeAway,
  assertNoEscalation,
} from '../domain/escalation.policy';
import { MemberRolesMerged, memberRoleDecider, memberRoleStream } from '../domain/member-role';
import { roleNameClaims } from '../domain/role-name-claim';
import { RoleReferences } from '../queries/role-references';

export class MergeMemberRolesCommand {
  constructor(
    readonly workspaceId: string,
    readonly sourceRoleId: number,
    readonly targetRoleId: number,
    readonly resourceAccess: 'copy' | 'discard',
    /** The caller's effective scopes in the workspace: nobody is moved into a role granting more. */
    readonly granter: readonly string[],
  ) {}
}

/**
 * Merges a duplicate of a built-in role into it: one MemberRolesMerged on the
 * duplicate's stream lists every member and invitation to move, so a refusal moves
 * nothing and an acceptance moves everything. The append expects the duplicate's
 * revision as read: a concurrent change or second merge of it is re-decided.
 * A merge moves people into the target role, so it passes the escalation rule of
 * assigning that role: the caller must hold every scope of the target, read from the
 * target's own stream (built-in roles' scopes never change).
 */
@CommandHandler(MergeMemberRolesCommand)
export class MergeMemberRolesHandler implements ICommandHandler<
  MergeMemberRolesCommand,
  MemberRolesMerged['data']
> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly refs: RoleReferences,
    private readonly gate: ReferenceGate,
  ) {}

  /** The holders it moves are read from the read models: as a deletion, through core's ReferenceGate. */
  execute(cmd: MergeMemberRolesCommand): Promise<MemberRolesMerged['data']> {
    return this.gate.removing(
      memberRoleStream(cmd.sourceRoleId),
      () => this.merge(cmd),
      () => new ConflictError(`Role ${cmd.sourceRoleId} is being given to members or invitations; retry`),
    );
  }

  private async merge(cmd: MergeMemberRolesCommand): Promise<MemberRolesMerged['data']> {
    const [target, holders, invitationIds, defaultRoleId, targetStream, sourceStream] = await Promise.all([
      this.refs.role(cmd.workspaceId, cmd.targetRoleId),
      this.refs.holders(cmd.workspaceId, cmd.sourceRoleId),
      this.refs.unclaimedInvitationIds(cmd.workspaceId, cmd.sourceRoleId),
      this.refs.workspaceDefaultRoleId(cmd.workspaceId),
      this.repo.load(memberRoleStream(cmd.targetRoleId), memberRoleDecider),
      this.repo.load(memberRoleStream(cmd.sourceRoleId), memberRoleDecider),
    ]);
    // A target absent from this workspace is the decider's 400; it grants nothing here.
    const targetRole = targetStream.state;
    if (targetRole.status === 'active' && targetRole.workspaceId === cmd.workspaceId)
      assertNoEscalation(cmd.granter, targetRole.permissions, 'targetRoleId', `role ${targetRole.name}`);
    // Its members leave the duplicate: the caller must hold what the duplicate grants them now.
    const source = sourceStream.state;
    if (source.status === 'active' && source.workspaceId === cmd.workspaceId)
      assertMayTakeAway(cmd.granter, source.permissions, 'roleId', `role ${source.name}`);
    // Copying the duplicate's access onto the target grants it to the target's members.
    if (cmd.resourceAccess === 'copy' && sourceStream.state.workspaceId === cmd.workspaceId)
      assertMayGrantResourceAccess(cmd.granter, sourceStream.state, 'resourceAccess');
    const { events } = await this.repo.handle({
      streamName: memberRoleStream(cmd.sourceRoleId),
      workspaceId: cmd.workspaceId,
      decider: memberRoleDecider,
      command: {
        type: 'MergeMemberRole',
        roleId: cmd.sourceRoleId,
        workspaceId: cmd.workspaceId,
        target,
        resourceAccess: cmd.resourceAccess,
        holders,
        invitationIds,
        isWorkspaceDefault: defaultRoleId === cmd.sourceRoleId,
        now: new Date().toISOString(),
      },
      claims: roleNameClaims,
    });
    return (events[0] as MemberRolesMerged).data;
  }
}
