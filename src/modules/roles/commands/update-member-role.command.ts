import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ClaimTakenError } from '../../../core/claims/claims';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import {
  assertMayGrantResourceAccess,
  assertMayTakeAway,
  assertNoEscalation,
} from '../domain/escalation.policy';
import { memberRoleDecider, memberRoleStream } from '../domain/member-role';
import { roleNameClaims, roleNameConflict } from '../domain/role-name-claim';
import type { MemberRoleInput } from './create-member-role.command';

export class UpdateMemberRoleCommand {
  constructor(
    readonly workspaceId: string,
    readonly roleId: number,
    readonly changes: Partial<MemberRoleInput>,
    /** The caller's effective scopes in the workspace: the role cannot grant more. */
    readonly granter: readonly string[],
    /** Pinned by If-Match: the role's stream must still be at this revision, else 412. */
    readonly expectedRevision?: bigint,
  ) {}
}

/** A rename takes the new name's claim and frees the old one in the same append. */
@CommandHandler(UpdateMemberRoleCommand)
export class UpdateMemberRoleHandler implements ICommandHandler<UpdateMemberRoleCommand> {
  constructor(private readonly repo: EventSourcedRepository) {}

  async execute(cmd: UpdateMemberRoleCommand): Promise<void> {
    // Every scope the role will hold, not only the added ones: a role editor cannot keep in
    // a role what it could not have put there (SPEC "Roles"; issue 7).
    if (cmd.changes.permissions)
      assertNoEscalation(cmd.granter, cmd.changes.permissions, 'permissions', 'the role');
    assertMayGrantResourceAccess(cmd.granter, cmd.changes);
    try {
      await this.repo.handle({
        streamName: memberRoleStream(cmd.roleId),
        workspaceId: cmd.workspaceId,
        decider: memberRoleDecider,
        expectedRevision: cmd.expectedRevision,
        command: {
          // ...nor change a role that grants more than it holds (narrowing it demotes its
          // holders), judged on the state each attempt decides on, so a concurrent widening
          // that lands first is not undone by a caller who could not have made it.
          from: (state) => {
            if (state.status === 'active' && state.workspaceId === cmd.workspaceId)
              assertMayTakeAway(cmd.granter, state.permissions, 'roleId', `role ${state.name}`);
            return {
              type: 'UpdateMemberRole' as const,
              roleId: cmd.roleId,
              workspaceId: cmd.workspaceId,
              ...cmd.changes,
              now: new Date().toISOString(),
            };
          },
        },
        claims: roleNameClaims,
      });
    } catch (error) {
      if (error instanceof ClaimTakenError) throw roleNameConflict(error, cmd.changes.name ?? '');
      throw error;
    }
  }
}
