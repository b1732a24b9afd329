import { EntityClass } from './core/database/data-source';
import { ApiKeyEntity } from './modules/api-keys/projections/api-key.entity';
import { AccountEntity, MemberEntity } from './modules/identity/projections/identity.entities';
import { InvitationEntity, MemberTokenEntity } from './modules/identity/projections/member.entities';
import { MemberRoleEntity } from './modules/roles/projections/member-role.entity';
import { WorkspaceEntity } from './modules/workspaces/projections/workspace.entity';

/** Every TypeORM entity (read models). A feature adds its own here. */
export const ENTITIES: EntityClass[] = [
  WorkspaceEntity,
  AccountEntity,
  MemberEntity,
  MemberTokenEntity,
  InvitationEntity,
  MemberRoleEntity,
  ApiKeyEntity,
];
