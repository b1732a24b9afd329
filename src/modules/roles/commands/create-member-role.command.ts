import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { nextId } from '../../../core/database/ids';
import { ConsistencyWaiter } from '../../../core/projections/consistency';
import { assertNoEscalation } from '../domain/escalation.policy';
import { memberRoleDecider, memberRoleStream } from '../domain/member-role';
import type { FileAccess, SiteAudience } from '../domain/role-access';
import { customRoleNamed } from './custom-role-name';
import { RoleNameLock } from './role-name-lock';

export interface MemberRoleInput {
  name: string;
  permissions: string[];
  siteAudience?: SiteAudience;
  fileAccess?: FileAccess;
}

export class CreateMemberRoleCommand {
  constructor(
    readonly workspaceId: string,
    readonly input: MemberRoleInput,
    /** The caller's effective scopes in the workspace: the role cannot grant more. */
    readonly granter: readonly string[],
  ) {}
}

/** Creates a custom role; returns its id. */
@CommandHandler(CreateMemberRoleCommand)
export class CreateMemberRoleHandler implements ICommandHandler<CreateMemberRoleCommand, number> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly db: DataSource,
    private readonly lock: RoleNameLock,
    private readonly consistency: ConsistencyWaiter,
  ) {}

  async execute(cmd: CreateMemberRoleCommand): Promise<number> {
    assertNoEscalation(cmd.granter, cmd.input.permissions, 'permissions', 'the new role');
    const roleId = await nextId(this.db, 'member_role_id_seq');
    await this.lock.inWorkspace(cmd.workspaceId, async () => {
      await this.repo.handle({
        streamName: memberRoleStream(roleId),
        workspaceId: cmd.workspaceId,
        decider: memberRoleDecider,
        command: {
          type: 'CreateMemberRole',
          roleId,
          workspaceId: cmd.workspaceId,
          ...cmd.input,
          nameTakenBy: await customRoleNamed(this.db, cmd.workspaceId, cmd.input.name),
          now: new Date().toISOString(),
        },
      });
      await this.consistency.settle();
    });
    return roleId;
  }
}
