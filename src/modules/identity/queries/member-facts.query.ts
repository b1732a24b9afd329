import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';

/** What other features need to know of a member to decide about it (agent or person, role, live). */
export interface MemberFacts {
  memberId: number;
  kind: 'person' | 'agent';
  /** The role it holds now (role merges already applied). */
  memberRoleId: number;
  status: 'active' | 'archived';
}

/**
 * Facts of members of one workspace by id; a member of another workspace, or none, is
 * absent from the answer. Workflows ask it whether an agentId names an agent member,
 * which role a member holds (role gates) and whether assignees exist.
 */
export class GetMemberFactsQuery {
  constructor(
    readonly workspaceId: string,
    readonly memberIds: readonly number[],
  ) {}
}

@QueryHandler(GetMemberFactsQuery)
export class GetMemberFactsHandler implements IQueryHandler<GetMemberFactsQuery, Map<number, MemberFacts>> {
  constructor(private readonly db: DataSource) {}

  async execute(q: GetMemberFactsQuery): Promise<Map<number, MemberFacts>> {
    if (!q.memberIds.length) return new Map();
    const rows = (await this.db.query(
      `SELECT id, kind, member_role_id, status FROM members WHERE workspace_id = $1 AND id = ANY($2::int[])`,
      [q.workspaceId, [...new Set(q.memberIds)]],
    )) as { id: number; kind: 'person' | 'agent'; member_role_id: number; status: 'active' | 'archived' }[];
    return new Map(
      rows.map((r) => [
        r.id,
        { memberId: r.id, kind: r.kind, memberRoleId: r.member_role_id, status: r.status },
      ]),
    );
  }
}
