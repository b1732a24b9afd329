// Moved to the roles feature (roles/domain/role-assignment.policy.ts, public through
// roles/index.ts). Kept only until member-writer.service.ts, edited on another branch, is
// merged and imports it from there; then this file goes.
export { checkRoleAssignment } from '../../roles';
export type { Assigner, RoleFacts } from '../../roles';
