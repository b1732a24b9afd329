import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { ClaimTakenError } from '../../../core/claims/claims';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { nextId } from '../../../core/database/ids';
import { assertMayGrantResourceAccess, assertNoEscalation } from '../domain/escalation.policy';
import { memberRoleDecider, memberRoleStream } from '../domain/member-role';
import type { FileAccess, SiteAudience } from '../domain/role-access';
import { roleNameClaims, roleNameConflict } from '../domain/role-name-claim';

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

/** Creates a custom role; returns its id. Its name is claimed with the append: one of racing creates wins. */
@CommandHandler(CreateMemberRoleCommand)
export class CreateMemberRoleHandler implements ICommandHandler<CreateMemberRoleCommand, number> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly db: DataSource,
  ) {}

  async execute(cmd: CreateMemberRoleCommand): Promise<number> {
    assertNoEscalation(cmd.granter, cmd.input.permissions, 'permissions', 'the new role');
    assertMayGrantResourceAccess(cmd.granter, cmd.input);
    const roleId = await nextId(this.db, 'member_role_id_seq');
    try {
      await this.repo.handle({
        streamName: memberRoleStream(roleId),
        workspaceId: cmd.workspaceId,
        decider: memberRoleDecider,
        command: {
          type: 'CreateMemberRole',
          roleId,
          workspaceId: cmd.workspaceId,
          ...cmd.input,
          now: new Date().toISOString(),
        },
        claims: roleNameClaims,
      });
    } catch (error) {
      if (error instanceof ClaimTakenError) throw roleNameConflict(error, cmd.input.name);
      throw error;
    }
    return roleId;
  }
}
