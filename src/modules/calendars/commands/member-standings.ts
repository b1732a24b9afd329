import { Injectable } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { GetWorkspaceMembersQuery, WorkspaceMemberFact } from '../../identity';
import type { MemberStanding } from '../domain/calendar';

/** How members stand in a workspace, asked of identity through its public query. */
@Injectable()
export class MemberStandings {
  constructor(private readonly queries: QueryBus) {}

  async of(workspaceId: string, memberIds: readonly number[]): Promise<Record<number, MemberStanding>> {
    const ids = [...new Set(memberIds)];
    if (!ids.length) return {};
    const facts = await this.queries.execute<GetWorkspaceMembersQuery, WorkspaceMemberFact[]>(
      new GetWorkspaceMembersQuery(workspaceId, ids),
    );
    return Object.fromEntries(facts.map((f) => [f.memberId, f.status]));
  }
}
