import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Credential, Membership, MembershipResolver } from '../../../core/auth/principal';

/** The caller's active membership and its role's scopes, read per request (a role change applies at once). */
@Injectable()
export class IdentityMembershipResolver implements MembershipResolver {
  constructor(private readonly db: DataSource) {}

  async find(workspaceId: string, credential: Credential): Promise<Membership | undefined> {
    const rows = (await this.db.query(
      `SELECT m.id, m.member_role_id, m.kind, coalesce(r.permissions, '{}') AS permissions
         FROM members m LEFT JOIN member_roles r ON r.id = m.member_role_id AND r.workspace_id = m.workspace_id
        WHERE m.workspace_id = $1 AND m.account_uuid = $2 AND m.status = 'active'
          AND ($3::int IS NULL OR m.id = $3)
        ORDER BY m.id LIMIT 1`,
      [workspaceId, credential.accountUuid, credential.memberId ?? null],
    )) as { id: number; member_role_id: number; kind: 'person' | 'agent'; permissions: string[] }[];
    const m = rows[0];
    if (!m) return undefined;
    return { workspaceId, memberId: m.id, roleId: m.member_role_id, roleScopes: m.permissions, kind: m.kind };
  }
}
