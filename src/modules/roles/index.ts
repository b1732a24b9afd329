/**
 * The roles feature's public surface: what other features may use (commands, queries,
 * event types, policies). Everything else under modules/roles is internal
 * (src/app.features.spec.ts enforces it).
 */
export { CreateBuiltInRolesCommand } from './commands/create-built-in-roles.command';
export type { BuiltInRoleIds } from './commands/create-built-in-roles.command';
export {
  GetBuiltInRoleIdQuery,
  GetRoleNamesQuery,
  GetRoleScopesQuery,
  ResolveDefaultMemberRoleQuery,
} from './queries/role-facts.queries';
export { BUILT_IN_ROLES } from './domain/built-in-roles';
export type { BuiltInRole, BuiltInRoleKey } from './domain/built-in-roles';
export { memberRoleStream } from './domain/member-role.events';
export type { MemberRoleCreated, MemberRolesMerged } from './domain/member-role.events';
export { checkPermissions } from './domain/member-role';
export { assertMayTakeAway, assertNoEscalation, scopesNotHeld } from './domain/escalation.policy';
export { checkRoleAssignment } from './domain/role-assignment.policy';
export type { Assigner, HolderKind, RoleFacts } from './domain/role-assignment.policy';
