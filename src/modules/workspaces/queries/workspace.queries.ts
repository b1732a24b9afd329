import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { ListMembershipsOfAccountQuery } from '../../identity';
import { applyListFilters, PageRequest, Paginated, paginated } from '../../../core/http/pagination';
import { NotFoundError } from '../../../core/http/domain-errors';
import { withVersion } from '../../../core/http/preconditions';
import { WorkspaceResponse } from '../http/workspace.dto';
import { WorkspaceEntity } from '../projections/workspace.entity';

export class ListWorkspacesQuery {
  constructor(
    readonly accountUuid: string,
    readonly page: PageRequest,
    /** Only this workspace (a member token's). */
    readonly onlyWorkspaceId?: string,
  ) {}
}

export class GetWorkspaceQuery {
  constructor(readonly workspaceId: string) {}
}

/**
 * The caller's workspaces: those where its account holds an active membership (identity
 * answers which, through its public query; members are its table).
 */
@QueryHandler(ListWorkspacesQuery)
export class ListWorkspacesHandler implements IQueryHandler<ListWorkspacesQuery> {
  constructor(
    private readonly db: DataSource,
    private readonly queries: QueryBus,
  ) {}

  async execute(q: ListWorkspacesQuery): Promise<Paginated<WorkspaceResponse>> {
    const memberOf = await this.queries.execute<ListMembershipsOfAccountQuery, string[]>(
      new ListMembershipsOfAccountQuery(q.accountUuid),
    );
    if (!memberOf.length) return paginated([], 0, q.page);
    const qb = this.db
      .getRepository(WorkspaceEntity)
      .createQueryBuilder('w')
      .where('w.id IN (:...memberOf)', { memberOf });
    if (q.onlyWorkspaceId !== undefined) qb.andWhere('w.id = :only', { only: q.onlyWorkspaceId });
    const [rows, total] = await applyListFilters(qb, q.page, { search: ['w.name'], time: 'w.created_at' })
      .orderBy('w.created_at', 'ASC')
      .addOrderBy('w.id', 'ASC')
      .skip(q.page.offset)
      .take(q.page.pageSize)
      .getManyAndCount();
    return paginated(rows.map(WorkspaceResponse.of), total, q.page);
  }
}

@QueryHandler(GetWorkspaceQuery)
export class GetWorkspaceHandler implements IQueryHandler<GetWorkspaceQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: GetWorkspaceQuery): Promise<WorkspaceResponse> {
    const row = await this.db.getRepository(WorkspaceEntity).findOneBy({ id: q.workspaceId });
    if (!row) throw new NotFoundError('Workspace not found');
    return withVersion(WorkspaceResponse.of(row), row.version);
  }
}
