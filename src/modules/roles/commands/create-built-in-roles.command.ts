import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { nextId } from '../../../core/database/ids';
import { BUILT_IN_ROLES, BuiltInRoleKey } from '../domain/built-in-roles';
import { MemberRoleCreated, memberRoleStream } from '../domain/member-role.events';

export class CreateBuiltInRolesCommand {
  constructor(readonly workspaceId: string) {}
}

export type BuiltInRoleIds = Record<BuiltInRoleKey, number>;

/**
 * The five built-in roles of a new workspace, each on its own new stream. Returns their
 * ids, so the workspace can be created naming its real default role (User) from the start.
 */
@CommandHandler(CreateBuiltInRolesCommand)
export class CreateBuiltInRolesHandler implements ICommandHandler<CreateBuiltInRolesCommand, BuiltInRoleIds> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly db: DataSource,
  ) {}

  async execute(cmd: CreateBuiltInRolesCommand): Promise<BuiltInRoleIds> {
    const now = new Date().toISOString();
    const ids = {} as BuiltInRoleIds;
    for (const role of BUILT_IN_ROLES) ids[role.key] = await nextId(this.db, 'member_role_id_seq');
    for (const role of BUILT_IN_ROLES) {
      const roleId = ids[role.key];
      const event: MemberRoleCreated = {
        type: 'MemberRoleCreated',
        data: {
          roleId,
          workspaceId: cmd.workspaceId,
          name: role.name,
          permissions: [...role.permissions],
          builtIn: role.key,
          createdAt: now,
        },
      };
      await this.repo.append(memberRoleStream(roleId), cmd.workspaceId, [event], 'no_stream');
    }
    return ids;
  }
}
