import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { NotFoundError } from '../../../core/http/domain-errors';
import { listFilterConditions, PageRequest, Paginated, paginated } from '../../../core/http/pagination';
import { isRecordsAdmin, RecordCaller } from '../domain/record-access.policy';
import type { RecordGrantResponse } from '../http/dto/record-grant.dto';

interface GrantRow {
  id: number;
  grantee_member_id: number;
  owner_member_id: number;
  access: 'read' | 'write';
  data_type_id: number | null;
  granted_by: number | null;
  created_at: Date;
}

const SELECT = `SELECT id, grantee_member_id, owner_member_id, access, data_type_id, granted_by, created_at FROM record_grants`;

const toResponse = (r: GrantRow): RecordGrantResponse => ({
  id: r.id,
  granteeMemberId: r.grantee_member_id,
  ownerMemberId: r.owner_member_id,
  access: r.access,
  dataTypeId: r.data_type_id,
  grantedBy: r.granted_by,
  createdAt: r.created_at.toISOString(),
});

export class ListRecordGrantsQuery {
  constructor(
    readonly workspaceId: string,
    readonly page: PageRequest,
    readonly caller: RecordCaller,
  ) {}
}

export class GetRecordGrantQuery {
  constructor(
    readonly workspaceId: string,
    readonly grantId: number,
    /** Who asks: records:admin sees any grant, a member those it gave or holds (others are 404). */
    readonly caller: RecordCaller,
  ) {}
}

/** records:admin sees every grant; a member the grants it gave or holds. */
@QueryHandler(ListRecordGrantsQuery)
export class ListRecordGrantsHandler implements IQueryHandler<ListRecordGrantsQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: ListRecordGrantsQuery): Promise<Paginated<RecordGrantResponse>> {
    const params: unknown[] = [q.workspaceId];
    const where = ['workspace_id = $1'];
    if (!isRecordsAdmin(q.caller)) {
      params.push(q.caller.memberId ?? 0);
      where.push(`(grantee_member_id = $2 OR owner_member_id = $2)`);
    }
    const { search: _search, ...window } = q.page;
    where.push(...listFilterConditions(window, { search: [], time: 'created_at' }, params));
    if (q.page.search !== undefined) {
      // Grants have no name: search matches the access ('read', 'write') exactly.
      params.push(q.page.search.toLowerCase());
      where.push(`access = $${params.length}`);
    }
    const sql = where.join(' AND ');
    const [rows, count] = await Promise.all([
      this.db.query(
        `${SELECT} WHERE ${sql} ORDER BY id LIMIT ${q.page.pageSize} OFFSET ${q.page.offset}`,
        params,
      ),
      this.db.query(`SELECT count(*)::int AS n FROM record_grants WHERE ${sql}`, params),
    ]);
    return paginated((rows as GrantRow[]).map(toResponse), (count as { n: number }[])[0].n, q.page);
  }
}

@QueryHandler(GetRecordGrantQuery)
export class GetRecordGrantHandler implements IQueryHandler<GetRecordGrantQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: GetRecordGrantQuery): Promise<RecordGrantResponse> {
    const rows = (await this.db.query(`${SELECT} WHERE id = $1 AND workspace_id = $2`, [
      q.grantId,
      q.workspaceId,
    ])) as GrantRow[];
    const r = rows[0];
    const mine = r !== undefined && [r.grantee_member_id, r.owner_member_id].includes(q.caller.memberId ?? 0);
    if (!r || (!isRecordsAdmin(q.caller) && !mine)) throw new NotFoundError('Grant not found');
    return toResponse(r);
  }
}
