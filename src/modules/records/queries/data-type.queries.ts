import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { NotFoundError } from '../../../core/http/domain-errors';
import { listFilterConditions, PageRequest, Paginated, paginated } from '../../../core/http/pagination';
import { withVersion } from '../../../core/http/preconditions';
import type { DataTypeResponse } from '../http/dto/data-type.dto';
import { RecordCaller, seesDataType } from '../domain/record-access.policy';
import type { DataField, Visibility } from '../domain/data-type.events';

interface DataTypeRow {
  id: number;
  name: string;
  slug: string;
  is_collection: boolean;
  visibility: Visibility;
  fields: DataField[];
  owner_member_id: number | null;
  created_at: Date;
  updated_at: Date;
  version: number;
}

const SELECT = `SELECT id, name, slug, is_collection, visibility, fields, owner_member_id, created_at, updated_at, version FROM data_types`;

function toResponse(r: DataTypeRow): DataTypeResponse {
  return {
    id: r.id,
    name: r.name,
    slug: r.slug,
    isCollection: r.is_collection,
    visibility: r.visibility,
    ownerMemberId: r.owner_member_id,
    fields: r.fields,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

/**
 * Without datatypes:read a member still reads the workspace-wide forms (SPEC "Scopes":
 * every member reads workspace-wide forms); admin-only ones are then absent, unless it holds
 * records:admin, whose records they are (record-access.policy.ts seesDataType).
 */
const seesAdminOnly = (caller: RecordCaller) => seesDataType(caller, 'admin_only');

export class ListDataTypesQuery {
  constructor(
    readonly workspaceId: string,
    readonly page: PageRequest,
    readonly caller: RecordCaller,
  ) {}
}

export class GetDataTypeQuery {
  constructor(
    readonly workspaceId: string,
    readonly dataTypeId: number,
    readonly caller: RecordCaller,
  ) {}
}

@QueryHandler(ListDataTypesQuery)
export class ListDataTypesHandler implements IQueryHandler<ListDataTypesQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: ListDataTypesQuery): Promise<Paginated<DataTypeResponse>> {
    const params: unknown[] = [q.workspaceId];
    const where = [
      'workspace_id = $1',
      ...(seesAdminOnly(q.caller) ? [] : [`visibility = 'workspace'`]),
      ...listFilterConditions(q.page, { search: ['name', 'slug'], time: 'created_at' }, params),
    ].join(' AND ');
    const [rows, count] = await Promise.all([
      this.db.query(
        `${SELECT} WHERE ${where} ORDER BY id LIMIT ${q.page.pageSize} OFFSET ${q.page.offset}`,
        params,
      ),
      this.db.query(`SELECT count(*)::int AS n FROM data_types WHERE ${where}`, params),
    ]);
    return paginated((rows as DataTypeRow[]).map(toResponse), (count as { n: number }[])[0].n, q.page);
  }
}

@QueryHandler(GetDataTypeQuery)
export class GetDataTypeHandler implements IQueryHandler<GetDataTypeQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: GetDataTypeQuery): Promise<DataTypeResponse> {
    const rows = (await this.db.query(`${SELECT} WHERE id = $1 AND workspace_id = $2`, [
      q.dataTypeId,
      q.workspaceId,
    ])) as DataTypeRow[];
    const row = rows[0];
    if (!row || (row.visibility === 'admin_only' && !seesAdminOnly(q.caller)))
      throw new NotFoundError('Data type not found');
    return withVersion(toResponse(row), row.version);
  }
}
