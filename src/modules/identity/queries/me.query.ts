import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { NotFoundError } from '../../../core/http/domain-errors';
import { GetRoleNamesQuery } from '../../roles';
import { GetWorkspaceNamesQuery } from '../../workspaces';
import { MeResponse } from '../http/dto/me.dto';
import { MEMBER_SELECT, MemberRow, toMemberResponse } from './member.queries';

export class GetMeQuery {
  constructor(
    readonly accountUuid: string,
    /** A member token sees only the member it was issued for. */
    readonly onlyMemberId?: number,
    /** A credential bound to one workspace (an OAuth access token) sees only its membership there. */
    readonly onlyWorkspaceId?: string,
  ) {}
}

@QueryHandler(GetMeQuery)
export class GetMeHandler implements IQueryHandler<GetMeQuery> {
  constructor(
    private readonly db: DataSource,
    private readonly queries: QueryBus,
  ) {}

  async execute({ accountUuid, onlyMemberId, onlyWorkspaceId }: GetMeQuery): Promise<MeResponse> {
    const accounts = (await this.db.query(
      `SELECT uuid, email, phone, name, created_at, updated_at FROM accounts WHERE uuid = $1`,
      [accountUuid],
    )) as {
      uuid: string;
      email: string | null;
      phone: string | null;
      name: string | null;
      created_at: Date;
      updated_at: Date;
    }[];
    const a = accounts[0];
    if (!a) throw new NotFoundError('Account not found');
    const members = (await this.db.query(
      `${MEMBER_SELECT}
        WHERE m.account_uuid = $1 AND m.status = 'active' AND ($2::int IS NULL OR m.id = $2)
          AND ($3::uuid IS NULL OR m.workspace_id = $3)
        ORDER BY m.created_at, m.id`,
      [accountUuid, onlyMemberId ?? null, onlyWorkspaceId ?? null],
    )) as MemberRow[];
    // Workspace and role names belong to their features: asked through their public queries.
    const [workspaceNames, roleNames] = await Promise.all([
      this.queries.execute<GetWorkspaceNamesQuery, Map<string, string>>(
        new GetWorkspaceNamesQuery(members.map((m) => m.workspace_id)),
      ),
      this.queries.execute<GetRoleNamesQuery, Map<number, string>>(
        new GetRoleNamesQuery(members.map((m) => m.member_role_id)),
      ),
    ]);
    // A membership shows only once its workspace does (the inner join this replaced).
    const memberships = members
      .filter((m) => workspaceNames.has(m.workspace_id))
      .map((m) => ({
        workspace: { id: m.workspace_id, name: workspaceNames.get(m.workspace_id)! },
        member: toMemberResponse(m),
        role: { id: m.member_role_id, name: roleNames.get(m.member_role_id) ?? null },
      }));
    // A member token edits its member, never the account (PUT /me), so the profile it
    // sees at the top level is that member's: what it writes is what it reads back.
    const member = onlyMemberId !== undefined ? memberships[0]?.member : undefined;
    const profile = member ?? a;
    return {
      uuid: a.uuid,
      email: profile.email,
      phone: profile.phone,
      name: profile.name,
      ...(member ? { member } : {}),
      account: {
        uuid: a.uuid,
        email: a.email,
        phone: a.phone,
        name: a.name,
        createdAt: a.created_at.toISOString(),
        updatedAt: a.updated_at.toISOString(),
      },
      memberships,
    };
  }
}
