import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { BuiltInRoleKey } from '../../identity/domain/built-in-roles';
import type { MergeTarget, RoleHolder } from '../domain/member-role';

/**
 * Read-model lookups the role commands need to decide (who holds a role, what refers
 * to it). Members and invitations are another feature's tables: only their columns
 * named here are relied on (members: workspace_id, member_role_id, kind, account_uuid;
 * invitations: workspace_id, member_role_id, status 'pending' until accepted or revoked).
 */
@Injectable()
export class RoleReferences {
  private invitationsExist = false;

  constructor(private readonly db: DataSource) {}

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
  async holders(workspaceId: string, roleId: number): Promise<RoleHolder[]> {
    const rows = (await this.db.query(
      `SELECT m.id, m.kind,
              (m.account_uuid IS NOT NULL AND EXISTS (SELECT 1 FROM accounts a WHERE a.uuid = m.account_uuid)) AS has_account
         FROM members m
        WHERE m.workspace_id = $1 AND m.member_role_id = $2
        ORDER BY m.id`,
      [workspaceId, roleId],
    )) as { id: number; kind: 'person' | 'agent'; has_account: boolean }[];
    return rows.map((r) => ({ memberId: r.id, kind: r.kind, hasAccount: r.has_account }));
  }

  async unclaimedInvitationIds(workspaceId: string, roleId: number): Promise<string[]> {
    if (!(await this.hasInvitations())) return [];
    const rows = (await this.db.query(
      `SELECT id::text AS id FROM invitations WHERE workspace_id = $1 AND member_role_id = $2 AND status = 'pending' ORDER BY id`,
      [workspaceId, roleId],
    )) as { id: string }[];
    return rows.map((r) => r.id);
  }

  /** The role id stored as the workspace default (null: the built-in User role is the default). */
  async workspaceDefaultRoleId(workspaceId: string): Promise<number | null> {
    const rows = (await this.db.query(
      `SELECT (settings->>'defaultMemberRoleId')::int AS id FROM workspaces WHERE id = $1`,
      [workspaceId],
    )) as {
      id: number | null;
    }[];
    return rows[0]?.id ?? null;
  }

  /** The role new members get: the stored default, else the built-in User role. */
  async effectiveDefaultRoleId(workspaceId: string): Promise<number | undefined> {
    return (
      (await this.workspaceDefaultRoleId(workspaceId)) ?? (await this.builtInRoleId(workspaceId, 'user'))
    );
  }

  /** The invitations read model arrives with the members feature's migration; until then there are none. */
  private async hasInvitations(): Promise<boolean> {
    if (this.invitationsExist) return true;
    const rows = (await this.db.query(`SELECT to_regclass('invitations') IS NOT NULL AS present`)) as {
      present: boolean;
    }[];
    this.invitationsExist = rows[0].present;
    return this.invitationsExist;
  }
}
