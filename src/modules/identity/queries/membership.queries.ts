import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';

/** A holder of a role as the members read model shows it (archived members included). */
export interface RoleHolder {
  memberId: number;
  kind: 'person' | 'agent';
  /** A person with an Account (signed up), as opposed to a contact without a login. */
  hasAccount: boolean;
}

/** Every member of a workspace holding a role, archived ones included (roles' delete and merge). */
export class ListRoleHoldersQuery {
  constructor(
    readonly workspaceId: string,
    readonly roleId: number,
  ) {}
}

@QueryHandler(ListRoleHoldersQuery)
export class ListRoleHoldersHandler implements IQueryHandler<ListRoleHoldersQuery, RoleHolder[]> {
  constructor(private readonly db: DataSource) {}

  async execute(q: ListRoleHoldersQuery): Promise<RoleHolder[]> {
    const rows = (await this.db.query(
      `SELECT m.id, m.kind,
              (m.account_uuid IS NOT NULL AND EXISTS (SELECT 1 FROM accounts a WHERE a.uuid = m.account_uuid)) AS has_account
         FROM members m
        WHERE m.workspace_id = $1 AND m.member_role_id = $2
        ORDER BY m.id`,
      [q.workspaceId, q.roleId],
    )) as { id: number; kind: 'person' | 'agent'; has_account: boolean }[];
    return rows.map((r) => ({ memberId: r.id, kind: r.kind, hasAccount: r.has_account }));
  }
}

/** Ids of a workspace's pending invitations that hand out a role (moved with it by a merge). */
export class ListPendingInvitationIdsQuery {
  constructor(
    readonly workspaceId: string,
    readonly roleId: number,
  ) {}
}

@QueryHandler(ListPendingInvitationIdsQuery)
export class ListPendingInvitationIdsHandler implements IQueryHandler<
  ListPendingInvitationIdsQuery,
  string[]
> {
  constructor(private readonly db: DataSource) {}

  async execute(q: ListPendingInvitationIdsQuery): Promise<string[]> {
    const rows = (await this.db.query(
      `SELECT id::text AS id FROM invitations WHERE workspace_id = $1 AND member_role_id = $2 AND status = 'pending' ORDER BY id`,
      [q.workspaceId, q.roleId],
    )) as { id: string }[];
    return rows.map((r) => r.id);
  }
}

/** The workspaces where an account holds an active membership (GET /w lists them). */
export class ListMembershipsOfAccountQuery {
  constructor(readonly accountUuid: string) {}
}

@QueryHandler(ListMembershipsOfAccountQuery)
export class ListMembershipsOfAccountHandler implements IQueryHandler<
  ListMembershipsOfAccountQuery,
  string[]
> {
  constructor(private readonly db: DataSource) {}

  async execute(q: ListMembershipsOfAccountQuery): Promise<string[]> {
    const rows = (await this.db.query(
      `SELECT DISTINCT workspace_id::text AS id FROM members WHERE account_uuid = $1 AND status = 'active'`,
      [q.accountUuid],
    )) as { id: string }[];
    return rows.map((r) => r.id);
  }
}
