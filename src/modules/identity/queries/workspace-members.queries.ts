import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';

/** What another feature may know of a member it refers to (an owner, an attendee, an assignee). */
export interface WorkspaceMemberFact {
  memberId: number;
  kind: 'person' | 'agent';
  status: 'active' | 'archived';
}

/**
 * Which of these ids are members of the workspace (archived ones included, with their
 * status): features that point at members ask here rather than reading `members`. Ids of
 * other workspaces, or of no member, are simply absent from the answer.
 */
export class GetWorkspaceMembersQuery {
  constructor(
    readonly workspaceId: string,
    readonly memberIds: readonly number[],
  ) {}
}

@QueryHandler(GetWorkspaceMembersQuery)
export class GetWorkspaceMembersHandler implements IQueryHandler<
  GetWorkspaceMembersQuery,
  WorkspaceMemberFact[]
> {
  constructor(private readonly db: DataSource) {}

  async execute(q: GetWorkspaceMembersQuery): Promise<WorkspaceMemberFact[]> {
    if (!q.memberIds.length) return [];
    const rows = (await this.db.query(
      `SELECT id, kind, status FROM members WHERE workspace_id = $1 AND id = ANY($2::int[]) ORDER BY id`,
      [q.workspaceId, [...new Set(q.memberIds)]],
    )) as { id: number; kind: 'person' | 'agent'; status: 'active' | 'archived' }[];
    return rows.map((r) => ({ memberId: r.id, kind: r.kind, status: r.status }));
  }
}
