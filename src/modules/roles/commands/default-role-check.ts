import { Injectable } from '@nestjs/common';
import { ForbiddenError, ValidationError } from '../../../core/http/domain-errors';
import type { MergeTarget } from '../domain/member-role';
import { RoleReferences } from '../queries/role-references';

/**
 * Which roles may be the workspace default for new members: any role of the workspace
 * except Platform Support (support staff only) and Agent (new members are people unless
 * created as agents, which get the Agent role anyway). Used by PUT role (isDefault) and
 * by PUT /w (settings.defaultMemberRoleId).
 */
@Injectable()
export class DefaultRoleCheck {
  constructor(private readonly refs: RoleReferences) {}

  async assertEligible(workspaceId: string, roleId: number, field: string): Promise<MergeTarget> {
    const role = await this.refs.role(workspaceId, roleId);
    if (!role) throw new ValidationError(`${field}: no role ${roleId} in this workspace`);
    if (role.builtIn === 'platform_support') {
      throw new ForbiddenError(
        `${field}: Platform Support is assigned by support staff only and cannot be the default for new members`,
      );
    }
    if (role.builtIn === 'agent') {
      throw new ValidationError(
        `${field}: the Agent role is reserved for agent members and cannot be the default for new members`,
      );
    }
    return role;
  }

  /**
   * The id to store as the workspace default for a requested one: null (back to the
   * built-in User role) is stored as User's id, so the setting always names the role
   * whose isDefault is true.
   */
  async resolve(workspaceId: string, requested: number | null, field: string): Promise<number | null> {
    if (requested !== null) return (await this.assertEligible(workspaceId, requested, field)).roleId;
    return (await this.refs.builtInRoleId(workspaceId, 'user')) ?? null;
  }
}
