import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { ListMembershipsOfAccountQuery } from '../../identity';
import { applyListFilters, PageRequest, Paginated, paginated } from '../../../core/http/pagination';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { queryPrepared } from '../../../core/database/prepared';
import { KeptReads } from '../../../core/http/kept-reads';
import { REDIS } from '../../../core/redis/redis';
import { NotFoundError } from '../../../core/http/domain-errors';
import { withVersion } from '../../../core/http/preconditions';
import { WorkspaceResponse } from '../http/workspace.dto';
import { WorkspaceEntity } from '../projections/workspace.entity';
import { KEPT_WORKSPACE } from '../projections/workspaces.projection';

export class ListWorkspacesQuery {
  constructor(
    readonly accountUuid: string,
    readonly page: PageRequest,
    /** Only this workspace (a member token's). */
    readonly onlyWorkspaceId?: string,
  ) {}
}

export class GetWorkspaceQuery {
  constructor(
    readonly workspaceId: string,
    /**
     * The version the workspaces projection announced, as read with the request's
     * admission (@KeptRead on the GET route; null: none announced), or undefined: read it.
     * Only from a request that appended nothing before.
     */
    readonly peekedVersion?: string | null,
  ) {}
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
  /**
   * Answers kept per process and checked against the version the workspaces projection
   * last announced (core/http/kept-reads.ts): one Redis GET instead of a PostgreSQL round
   * trip, which cost this read most of its time (its answer changes rarely; every request
   * of a workspace's callers reads it). Frozen: one object answers many requests.
   */
  private readonly kept: KeptReads<WorkspaceResponse>;

  constructor(
    private readonly db: DataSource,
    @Inject(REDIS) redis: Redis,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.kept = new KeptReads(redis, config.redisPrefix, KEPT_WORKSPACE);
  }

  async execute(q: GetWorkspaceQuery): Promise<WorkspaceResponse> {
    const answer = await this.kept.read(q.workspaceId, () => this.load(q.workspaceId), q.peekedVersion);
    if (!answer) throw new NotFoundError('Workspace not found');
    return answer;
  }

  private async load(
    workspaceId: string,
  ): Promise<{ value: WorkspaceResponse; version: number } | undefined> {
    // Plain SQL, prepared, on the hottest read: the repository's query building cost more than the query.
    const [r] = await queryPrepared<{
      id: string;
      name: string;
      settings: WorkspaceEntity['settings'];
      created_at: Date;
      updated_at: Date;
      version: number;
      stream_revision: string;
    }>(
      this.db,
      `SELECT id, name, settings, created_at, updated_at, version, stream_revision::text AS stream_revision
         FROM workspaces WHERE id = $1`,
      [workspaceId],
    );
    if (!r) return undefined;
    const row: WorkspaceEntity = {
      id: r.id,
      name: r.name,
      settings: r.settings,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
      version: r.version,
      streamRevision: r.stream_revision,
    };
    const body = withVersion(WorkspaceResponse.of(row), row.version);
    deepFreeze(body);
    return { value: body, version: row.version };
  }
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
}
