import { MigrationClass } from './core/database/data-source';
import { Initial1764000000000 } from './core/database/migrations/1764000000000-initial';
import { EventStore1764000000100 } from './core/database/migrations/1764000000100-event-store';
import { Projections1764000000200 } from './core/database/migrations/1764000000200-projections';
import { ResourceVersions1764000005000 } from './core/database/migrations/1764000005000-resource-versions';
import { Claims1764000006000 } from './core/database/migrations/1764000006000-claims';
import { ApiKeyUsage1764000004100 } from './modules/api-keys/api-keys.migration';
import { AuditLog1764000003000 } from './modules/audit/audit.migration';
import { Identity1764000002000 } from './modules/identity/identity.migration';
import { IdentityMembers1764000002500 } from './modules/identity/members.migration';
import { RoleNameClaims1764000006100 } from './modules/roles/role-name-claims.migration';
import { MemberRoleAccess1764000004000 } from './modules/roles/roles.migration';
import { Workspaces1764000001000 } from './modules/workspaces/workspaces.migration';

/** Every migration, oldest first. A feature adds its own here. */
export const MIGRATIONS: MigrationClass[] = [
  Initial1764000000000,
  EventStore1764000000100,
  Projections1764000000200,
  Workspaces1764000001000,
  Identity1764000002000,
  IdentityMembers1764000002500,
  AuditLog1764000003000,
  MemberRoleAccess1764000004000,
  ApiKeyUsage1764000004100,
  ResourceVersions1764000005000,
  Claims1764000006000,
  RoleNameClaims1764000006100,
];
