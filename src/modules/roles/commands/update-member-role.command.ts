import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { ConsistencyWaiter } from '../../../core/projections/consistency';
import { assertNoEscalation } from '../domain/escalation.policy';
import { memberRoleDecider, memberRoleStream } from '../domain/member-role';
import type { MemberRoleInput } from './create-member-role.command';
import { customRoleNamed } from './custom-role-name';
import { RoleNameLock } from './role-name-lock';

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

@CommandHandler(UpdateMemberRoleCommand)
export class UpdateMemberRoleHandler implements ICommandHandler<UpdateMemberRoleCommand> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly db: DataSource,
    private readonly lock: RoleNameLock,
    private readonly consistency: ConsistencyWaiter,
  ) {}

  async execute(cmd: UpdateMemberRoleCommand): Promise<void> {
    // Every scope the role will hold, not only the added ones: a role editor cannot keep in
    // a role what it could not have put there (SPEC "Roles"; issue 7).
    if (cmd.changes.permissions)
      assertNoEscalation(cmd.granter, cmd.changes.permissions, 'permissions', 'the role');
    const update = async () => {
      await this.repo.handle({
        streamName: memberRoleStream(cmd.roleId),
        workspaceId: cmd.workspaceId,
        decider: memberRoleDecider,
        expectedRevision: cmd.expectedRevision,
        command: {
          type: 'UpdateMemberRole',
          roleId: cmd.roleId,
          workspaceId: cmd.workspaceId,
          ...cmd.changes,
          nameTakenBy:
            cmd.changes.name !== undefined
              ? await customRoleNamed(this.db, cmd.workspaceId, cmd.changes.name, cmd.roleId)
              : undefined,
          now: new Date().toISOString(),
        },
      });
      await this.consistency.settle();
    };
    // Only a rename needs the name check serialised.
    if (cmd.changes.name !== undefined) await this.lock.inWorkspace(cmd.workspaceId, update);
    else await update();
  }
}
