import { ForbiddenError, ValidationError } from '../../../core/http/domain-errors';
import type { BuiltInRoleKey } from './built-in-roles';

/** Who holds a role: a person or an agent member (identity's member kinds). */
export type HolderKind = 'person' | 'agent';

/** What a member decision needs to know of a role, folded from its `memberrole-<id>` stream. */
export interface RoleFacts {
  roleId: number;
  exists: boolean;
  workspaceId: string | null;
  name: string;
  permissions: readonly string[];
  builtIn: BuiltInRoleKey | null;
  deleted: boolean;
  /** Set when a merge deleted this role: its members now hold the target. */
  mergedInto: number | null;
}

/** Who is assigning: workspace operators cannot hand out Platform Support (SPEC, "Roles"). */
export type Assigner = 'operator' | 'support';

/**
 * The role rules of SPEC "Roles" 2 and the Platform Support note, as one pure check.
 * A role of another workspace reads as absent, so its existence does not leak.
 * Details name the field and, for the Agent rule, the offending direction.
 */
export function checkRoleAssignment(
  kind: HolderKind,
  role: RoleFacts,
  workspaceId: string,
  assigner: Assigner,
  field = 'memberRoleId',
): void {
  if (!role.exists || role.deleted || role.workspaceId !== workspaceId) {
    throw new ValidationError(`${field}: role ${role.roleId} does not exist in this workspace`);
  }
  if (kind === 'agent' && role.builtIn !== null && role.builtIn !== 'agent') {
    throw new ValidationError(
      `${field}: an agent member cannot hold the built-in ${role.name} role (agent to human role); agents hold the Agent role or a custom role`,
    );
  }
  if (kind === 'person' && role.builtIn === 'agent') {
    throw new ValidationError(
      `${field}: a person cannot hold the Agent role (human to Agent role); it is reserved for agent members`,
    );
  }
  if (role.builtIn === 'platform_support' && assigner !== 'support') {
    throw new ForbiddenError(`${field}: the Platform Support role is assigned by support staff only`);
  }
}
