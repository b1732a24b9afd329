import { Injectable } from '@nestjs/common';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { ForbiddenError, ValidationError } from '../../../core/http/domain-errors';
import { assertNoEscalation } from '../domain/escalation.policy';
import { memberRoleDecider, memberRoleStream, type MergeTarget } from '../domain/member-role';
import { RoleReferences } from '../queries/role-references';

/**
 * Which roles may be the workspace default for new members: any role of the workspace
 * except Platform Support (support staff only) and Agent (new members are people unless
 * created as agents, which get the Agent role anyway), and only one whose every scope the
 * caller holds: every signup and role-less invitation hands the default out, so setting
 * it is assigning it (escalation.policy.ts). Used by PUT role (isDefault) and by PUT /w
 * (settings.defaultMemberRoleId).
 */
@Injectable()
export class DefaultRoleCheck {
  constructor(
    private readonly refs: RoleReferences,
    private readonly repo: EventSourcedRepository,
  ) {}

  async assertEligible(
    workspaceId: string,
    roleId: number,
    field: string,
    granter: readonly string[],
  ): Promise<MergeTarget> {
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
    // The scopes from the role's own stream, the source of truth, not the read model.
    const { state } = await this.repo.load(memberRoleStream(roleId), memberRoleDecider);
    // Deleted or merged away, not yet projected (a deletion racing the setting: see UpdateWorkspaceCommand).
    if (state.status !== 'active') throw new ValidationError(`${field}: no role ${roleId} in this workspace`);
    assertNoEscalation(granter, state.permissions, field, `role ${role.name}`);
    return role;
  }

  /**
   * The id to store as the workspace default for a requested one: null (back to the
   * built-in User role) is stored as User's id, so the setting always names the role
   * whose isDefault is true.
   */
  async resolve(
    workspaceId: string,
    requested: number | null,
    field: string,
    granter: readonly string[],
  ): Promise<number | null> {
    if (requested !== null) return (await this.assertEligible(workspaceId, requested, field, granter)).roleId;
    return (await this.refs.builtInRoleId(workspaceId, 'user')) ?? null;
  }
}
