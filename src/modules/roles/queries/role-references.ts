import { Injectable } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { ListPendingInvitationIdsQuery, ListRoleHoldersQuery } from '../../identity';
import { GetWorkspaceDefaultRoleQuery } from '../../workspaces';
import type { BuiltInRoleKey } from '../domain/built-in-roles';
import type { MergeTarget, RoleHolder } from '../domain/member-role';

/**
 * Lookups the role commands need to decide (who holds a role, what refers to it). Roles
 * are read from this feature's own read model; members, invitations and the workspace
 * default belong to identity and workspaces, asked through their public queries.
 */
@Injectable()
export class RoleReferences {
  constructor(
    private readonly db: DataSource,
    private readonly queries: QueryBus,
  ) {}

  async role(workspaceId: string, roleId: number): Promise<MergeTarget | undefined> {
    const rows = (await this.db.query(
      `SELECT id, workspace_id, name, built_in FROM member_roles WHERE id = $1 AND workspace_id = $2`,
      [roleId, workspaceId],
    )) as { id: number; workspace_id: string; name: string; built_in: BuiltInRoleKey | null }[];
    const r = rows[0];
    return r && { roleId: r.id, workspaceId: r.workspace_id, name: r.name, builtIn: r.built_in };
  }

  async builtInRoleId(workspaceId: string, key: BuiltInRoleKey): Promise<number | undefined> {
    const rows = (await this.db.query(
      `SELECT id FROM member_roles WHERE workspace_id = $1 AND built_in = $2 ORDER BY id LIMIT 1`,
      [workspaceId, key],
    )) as { id: number }[];
    return rows[0]?.id;
  }

  /** Another role of the workspace whose name equals `name` up to case, blanks, `_` and `-`. */
  async roleNamed(workspaceId: string, name: string, exceptRoleId?: number): Promise<number | undefined> {
    const rows = (await this.db.query(
      `SELECT id FROM member_roles
        WHERE workspace_id = $1 AND id <> $3
          AND regexp_replace(lower(btrim(name)), '[[:space:]_-]+', ' ', 'g') = regexp_replace(lower(btrim($2)), '[[:space:]_-]+', ' ', 'g')
        ORDER BY id LIMIT 1`,
      [workspaceId, name, exceptRoleId ?? 0],
    )) as { id: number }[];
    return rows[0]?.id;
  }

  /** Every member holding the role, archived ones included, with whether a person has an Account. */
  holders(workspaceId: string, roleId: number): Promise<RoleHolder[]> {
    return this.queries.execute(new ListRoleHoldersQuery(workspaceId, roleId));
  }

  unclaimedInvitationIds(workspaceId: string, roleId: number): Promise<string[]> {
    return this.queries.execute(new ListPendingInvitationIdsQuery(workspaceId, roleId));
  }

  /** The role id stored as the workspace default (null: the built-in User role is the default). */
  workspaceDefaultRoleId(workspaceId: string): Promise<number | null> {
    return this.queries.execute(new GetWorkspaceDefaultRoleQuery(workspaceId));
  }

  /** The role new members get: the stored default, else the built-in User role. */
  async effectiveDefaultRoleId(workspaceId: string): Promise<number | undefined> {
    return (
      (await this.workspaceDefaultRoleId(workspaceId)) ?? (await this.builtInRoleId(workspaceId, 'user'))
    );
  }
}
