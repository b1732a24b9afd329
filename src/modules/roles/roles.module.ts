import { Module } from '@nestjs/common';
import { Feature } from '../../core/features/feature';
import { CreateBuiltInRolesHandler } from './commands/create-built-in-roles.command';
import { CreateMemberRoleHandler } from './commands/create-member-role.command';
import { DefaultRoleCheck } from './commands/default-role-check';
import { DeleteMemberRoleHandler } from './commands/delete-member-role.command';
import { MergeMemberRolesHandler } from './commands/merge-member-roles.command';
import { SetDefaultMemberRoleHandler } from './commands/set-default-member-role.command';
import { UpdateMemberRoleHandler } from './commands/update-member-role.command';
import { MemberRolesController } from './http/member-roles.controller';
import { MemberRoleEntity } from './projections/member-role.entity';
import { MemberRolesProjection } from './projections/member-roles.projection';
import { GetMemberRoleHandler, ListMemberRolesHandler } from './queries/member-role.queries';
import {
  GetBuiltInRoleIdHandler,
  GetRoleNamesHandler,
  GetRoleScopesHandler,
  ResolveDefaultMemberRoleHandler,
} from './queries/role-facts.handlers';
import { RoleReferences } from './queries/role-references';
import { RoleNameClaims1764000006100 } from './role-name-claims.migration';
import { MemberRolesTable1764000002010 } from './member-roles-table.migration';
import { MemberRoleAccess1764000004000 } from './roles.migration';

/** Roles and scopes: custom roles, the built-in roles' editable access, merging duplicates. */
@Feature({
  name: 'roles',
  entities: [MemberRoleEntity],
  migrations: [MemberRolesTable1764000002010, MemberRoleAccess1764000004000, RoleNameClaims1764000006100],
  versionedResources: ['member_roles'],
})
@Module({
  controllers: [MemberRolesController],
  providers: [
    MemberRolesProjection,
    RoleReferences,
    DefaultRoleCheck,
    CreateBuiltInRolesHandler,
    CreateMemberRoleHandler,
    UpdateMemberRoleHandler,
    DeleteMemberRoleHandler,
    MergeMemberRolesHandler,
    SetDefaultMemberRoleHandler,
    ListMemberRolesHandler,
    GetMemberRoleHandler,
    GetBuiltInRoleIdHandler,
    GetRoleNamesHandler,
    GetRoleScopesHandler,
    ResolveDefaultMemberRoleHandler,
  ],
})
export class RolesModule {}

declare module '../../core/features/feature' {
  interface VersionedTables {
    member_roles: true;
  }
}
