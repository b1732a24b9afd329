import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { queryPrepared } from '../../../core/database/prepared';
import { withVersion } from '../../../core/http/preconditions';
import { NotFoundError } from '../../../core/http/domain-errors';
import { listFilterConditions, PageRequest, Paginated, paginated } from '../../../core/http/pagination';
import { assertScopeOrSelf, Caller } from '../domain/member-access.policy';
import { MemberResponse } from '../http/dto/member.dto';

export interface MemberFilters {
  email?: string;
  phone?: string;
  externalId?: string;
  roleId?: number;
  status: 'active' | 'archived' | 'all';
}

/** What the caller may see: anonymous members only with members:admin (or itself). */
export interface MemberVisibility {
  anonymous: boolean;
  selfId?: number;
}

export class ListMembersQuery {
  constructor(
    readonly workspaceId: string,
    readonly filters: MemberFilters,
    readonly visibility: MemberVisibility,
    readonly page: PageRequest,
  ) {}
}

export class GetMemberQuery {
  constructor(
    readonly workspaceId: string,
    readonly memberId: number,
    readonly visibility: MemberVisibility,
    /**
     * For a route open to self-access: the caller and the scope it needs unless the member
     * is its own (checked after existence, so a hidden member stays a 404).
     */
    readonly access?: { caller: Caller; scope: string },
  ) {}
}

export interface MemberRow {
  id: number;
  version: number;
  workspace_id: string;
  account_uuid: string | null;
  email: string | null;
  phone: string | null;
  name: string | null;
  external_id: string | null;
  member_role_id: number;
  kind: 'person' | 'agent';
  status: 'active' | 'archived';
  notify_sms: boolean;
  notify_email: boolean;
  notify_voice: boolean;
  timezone: string | null;
  /** ISO 8601 in UTC with milliseconds, as Date.toISOString() writes it (see ISO_MS). */
  created_at: string;
  updated_at: string;
}

/**
 * A timestamptz as Date.toISOString() would write it (milliseconds truncated, as pg's Date
 * parsing truncates them): formatted by PostgreSQL rather than parsed into a Date and
 * written out again for each of a page's rows.
 */
const isoMs = (column: string) =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ${column.slice(column.indexOf('.') + 1)}`;

const MEMBER_FIELDS = `m.id, m.workspace_id, m.account_uuid, m.email, m.phone, m.name, m.external_id, m.member_role_id, m.kind, m.status,
  m.notify_sms, m.notify_email, m.notify_voice, m.timezone, ${isoMs('m.created_at')}, ${isoMs('m.updated_at')}, m.version`;

export const MEMBER_SELECT = `SELECT ${MEMBER_FIELDS} FROM members m`;

export function toMemberResponse(r: MemberRow): MemberResponse {
  return MemberResponse.of({
    id: r.id,
    workspaceId: r.workspace_id,
    accountUuid: r.account_uuid,
    email: r.email,
    phone: r.phone,
    name: r.name,
    externalId: r.external_id,
    memberRoleId: r.member_role_id,
    kind: r.kind,
    status: r.status,
    notifySms: r.notify_sms,
    notifyEmail: r.notify_email,
    notifyVoice: r.notify_voice,
    timezone: r.timezone,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  });
}

function visibilityCondition(v: MemberVisibility, params: unknown[]): string {
  if (v.anonymous) return 'true';
  params.push(v.selfId ?? 0);
  return `(m.email IS NOT NULL OR m.phone IS NOT NULL OR m.name IS NOT NULL OR m.id = $${params.length})`;
}

@QueryHandler(ListMembersQuery)
export class ListMembersHandler implements IQueryHandler<ListMembersQuery> {
  constructor(private readonly db: DataSource) {}

  async execute({
    workspaceId,
    filters,
    visibility,
    page,
  }: ListMembersQuery): Promise<Paginated<MemberResponse>> {
    const params: unknown[] = [workspaceId];
    const where = ['m.workspace_id = $1', visibilityCondition(visibility, params)];
    const eq = (column: string, value: unknown) => {
      if (value === undefined) return;
      params.push(value);
      where.push(`${column} = $${params.length}`);
    };
    eq('m.email', filters.email);
    eq('m.phone', filters.phone);
    eq('m.external_id', filters.externalId);
    eq('m.member_role_id', filters.roleId);
    if (filters.status !== 'all') eq('m.status', filters.status);
    where.push(
      ...listFilterConditions(
        page,
        { search: ['m.name', 'm.email', 'm.phone', 'm.external_id'], time: 'm.created_at' },
        params,
      ),
    );
    const condition = where.join(' AND ');
    // The count and the page in one statement: one round trip, and one snapshot, so the
    // total always agrees with the items. A page past the end is the count's row alone.
    // The page's rows are formatted after the LIMIT: a plan that sorts the workspace's
    // members (statistics not yet taken after an import) must not format them all.
    const rows = await queryPrepared<MemberRow & { total: number }>(
      this.db,
      `SELECT t.total, p.* FROM (SELECT count(*)::int AS total FROM members m WHERE ${condition}) t
         LEFT JOIN LATERAL (SELECT ${MEMBER_FIELDS} FROM (SELECT * FROM members m WHERE ${condition} ORDER BY m.id
                            LIMIT $${params.length + 1} OFFSET $${params.length + 2}) m ORDER BY m.id) p ON true`,
      [...params, page.pageSize, page.offset],
    );
    const items = rows.filter((r) => r.id !== null).map(toMemberResponse);
    return paginated(items, rows[0].total, page);
  }
}

@QueryHandler(GetMemberQuery)
export class GetMemberHandler implements IQueryHandler<GetMemberQuery> {
  constructor(private readonly db: DataSource) {}

  async execute({ workspaceId, memberId, visibility, access }: GetMemberQuery): Promise<MemberResponse> {
    const params: unknown[] = [workspaceId, memberId];
    const rows = await queryPrepared<MemberRow>(
      this.db,
      `${MEMBER_SELECT} WHERE m.workspace_id = $1 AND m.id = $2 AND ${visibilityCondition(visibility, params)}`,
      params,
    );
    if (!rows.length) throw new NotFoundError('Member not found');
    if (access) assertScopeOrSelf(access.caller, access.scope, memberId);
    return withVersion(toMemberResponse(rows[0]), rows[0].version);
  }
}
