import { Injectable } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { GetMemberFactsQuery, MemberFacts } from '../../identity';
import type { MemberStanding } from '../domain/calendar';

/** How members stand in a workspace, asked of identity through its public query. */
@Injectable()
export class MemberStandings {
  constructor(private readonly queries: QueryBus) {}

  async of(workspaceId: string, memberIds: readonly number[]): Promise<Record<number, MemberStanding>> {
    const ids = [...new Set(memberIds)];
    if (!ids.length) return {};
    const facts = await this.queries.execute<GetMemberFactsQuery, Map<number, MemberFacts>>(
      new GetMemberFactsQuery(workspaceId, ids),
    );
    return Object.fromEntries([...facts.values()].map((f) => [f.memberId, f.status]));
  }
}
