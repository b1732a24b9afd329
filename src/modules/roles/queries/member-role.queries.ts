import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { NotFoundError } from '../../../core/http/domain-errors';
import { applyListFilters, PageRequest, Paginated, paginated } from '../../../core/http/pagination';
import { withVersion } from '../../../core/http/preconditions';
import { MemberRoleResponse } from '../http/member-role.dto';
import { MemberRoleEntity } from '../projections/member-role.entity';
import { RoleReferences } from './role-references';

export class ListMemberRolesQuery {
  constructor(
    readonly workspaceId: string,
    readonly page: PageRequest,
  ) {}
}

export class GetMemberRoleQuery {
  constructor(
    readonly workspaceId: string,
    readonly roleId: number,
  ) {}
}

/** A workspace's roles by id: the built-in ones, created with the workspace, come first. */
@QueryHandler(ListMemberRolesQuery)
export class ListMemberRolesHandler implements IQueryHandler<ListMemberRolesQuery> {
  constructor(
    private readonly db: DataSource,
    private readonly refs: RoleReferences,
  ) {}

  async execute(q: ListMemberRolesQuery): Promise<Paginated<MemberRoleResponse>> {
    const [[rows, total], defaultRoleId] = await Promise.all([
      applyListFilters(
        this.db
          .getRepository(MemberRoleEntity)
          .createQueryBuilder('r')
          .where('r.workspace_id = :workspaceId', { workspaceId: q.workspaceId }),
        q.page,
        { search: ['r.name'], time: 'r.created_at' },
      )
        .orderBy('r.id', 'ASC')
        .skip(q.page.offset)
        .take(q.page.pageSize)
        .getManyAndCount(),
      this.refs.effectiveDefaultRoleId(q.workspaceId),
    ]);
    return paginated(
      rows.map((r) => MemberRoleResponse.of(r, defaultRoleId)),
      total,
      q.page,
    );
  }
}

@QueryHandler(GetMemberRoleQuery)
export class GetMemberRoleHandler implements IQueryHandler<GetMemberRoleQuery> {
  constructor(
    private readonly db: DataSource,
    private readonly refs: RoleReferences,
  ) {}

  async execute(q: GetMemberRoleQuery): Promise<MemberRoleResponse> {
    const row = await this.db
      .getRepository(MemberRoleEntity)
      .findOneBy({ id: q.roleId, workspaceId: q.workspaceId });
    if (!row) throw new NotFoundError('Role not found');
    return withVersion(
      MemberRoleResponse.of(row, await this.refs.effectiveDefaultRoleId(q.workspaceId)),
      row.version,
    );
  }
}
