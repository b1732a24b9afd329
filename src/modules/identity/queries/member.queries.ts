import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { queryPrepared } from '../../../core/database/prepared';
import { announcedVersion } from '../../../core/http/kept-reads';
import { withVersion } from '../../../core/http/preconditions';
import { NotFoundError } from '../../../core/http/domain-errors';
import { listFilterConditions, PageRequest } from '../../../core/http/pagination';
import { assertScopeOrSelf, Caller } from '../domain/member-access.policy';
import { REDIS } from '../../../core/redis/redis';
import { MemberResponse } from '../http/dto/member.dto';
import { KEPT_MEMBER_LIST } from '../projections/member-list-announcer';
import { KEPT_PAGE_MS, RenderedPageCache } from './member-list.cache';

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
    /**
     * The workspace's list version announced in Redis, as the rate limiter's admission read
     * it (@KeptRead on the route; null: none announced), or undefined: read it here.
     */
    readonly peeked?: string | null,
    /** The body as its UTF-8 bytes (the route sends them as they are) rather than as text. */
    readonly bytes = false,
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
  agent_model: string | null;
  agent_instructions: string | null;
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
  m.notify_sms, m.notify_email, m.notify_voice, m.timezone, m.agent_model, m.agent_instructions, ${isoMs('m.created_at')}, ${isoMs('m.updated_at')}, m.version`;

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
    agentModel: r.agent_model,
    agentInstructions: r.agent_instructions,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  });
}

function visibilityCondition(v: MemberVisibility, params: unknown[]): string {
  if (v.anonymous) return 'true';
  params.push(v.selfId ?? 0);
  return `(m.email IS NOT NULL OR m.phone IS NOT NULL OR m.name IS NOT NULL OR m.id = $${params.length})`;
}

/**
 * A member as a row whose columns are MemberResponse's fields, in its order and with its
 * types (numbers, booleans, null, ISO timestamps as `toISOString()` writes them):
 * `json_agg` of such rows writes them as MemberResponse objects (cheaper in PostgreSQL than
 * a json_build_object per row).
 */
const MEMBER_JSON_FIELDS = `m.id, m.workspace_id AS "workspaceId", m.account_uuid AS "accountUuid", m.email, m.phone,
  m.name, m.external_id AS "externalId", m.member_role_id AS "memberRoleId", m.kind, m.status,
  m.notify_sms AS "notifySms", m.notify_email AS "notifyEmail", m.notify_voice AS "notifyVoice",
  m.timezone, m.agent_model AS "agentModel", m.agent_instructions AS "agentInstructions",
  to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt",
  to_char(m.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "updatedAt"`;

/** A page of members as the response body's JSON text (`{items, total, page, pageSize}`), ready to send. */
export type MemberListJson = string & { readonly memberListJson: true };
/** The same page as its UTF-8 bytes (ListMembersQuery's `bytes`). */
export type MemberListBytes = Buffer & { readonly memberListJson: true };

/** What a list version reads as when no member of the workspace was written since member_list_versions exists. */
const NO_VERSION = 'none';
/** Known to no page: the version a request without a kept page compares with, so the page is rendered. */
const NO_PAGE = '';

@QueryHandler(ListMembersQuery)
export class ListMembersHandler implements IQueryHandler<ListMembersQuery> {
  /** Pages this process rendered, with the list version each was rendered at (member-list.cache.ts). */
  private readonly pages = new RenderedPageCache<MemberListBytes>();
  /** Statement texts by shape (condition and total): a few hundred shapes at most, from the filters given. */
  private readonly texts = new Map<string, string>();

  constructor(
    private readonly db: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async execute(query: ListMembersQuery): Promise<MemberListJson | MemberListBytes> {
    const body = await this.pageOf(query);
    return query.bytes ? body : (body.toString() as MemberListJson);
  }

  private async pageOf({
    workspaceId,
    filters,
    visibility,
    page,
    peeked,
  }: ListMembersQuery): Promise<MemberListBytes> {
    const params: unknown[] = [workspaceId];
    const where = ['m.workspace_id = $1', visibilityCondition(visibility, params)];
    const eq = (column: string, value: unknown) => {
      if (value === undefined) return;
      params.push(value);
      where.push(`${column} = $${params.length}`);
    };
    // The common list (no filter but the status, anonymous members shown) takes its total
    // from member_counts, kept by the members projection with the rows, instead of counting.
    const counted =
      visibility.anonymous &&
      [filters.email, filters.phone, filters.externalId, filters.roleId].every((v) => v === undefined);
    eq('m.email', filters.email);
    eq('m.phone', filters.phone);
    eq('m.external_id', filters.externalId);
    eq('m.member_role_id', filters.roleId);
    if (filters.status !== 'all') eq('m.status', filters.status);
    const listFilters = listFilterConditions(
      page,
      { search: ['m.name', 'm.email', 'm.phone', 'm.external_id'], time: 'm.created_at' },
      params,
    );
    where.push(...listFilters);
    const condition = where.join(' AND ');
    const total =
      counted && !listFilters.length
        ? filters.status === 'all'
          ? `(SELECT coalesce(sum(c.members), 0)::int FROM member_counts c WHERE c.workspace_id = $1)`
          : `coalesce((SELECT c.members FROM member_counts c WHERE c.workspace_id = $1 AND c.status = $${params.indexOf(filters.status) + 1}), 0)`
        : `(SELECT count(*)::int FROM members m WHERE ${condition})`;
    const limit = `$${params.length + 1}`;
    const offset = `$${params.length + 2}`;
    const pageNo = `$${params.length + 3}`;
    const known = `$${params.length + 4}`;
    // The workspace's list version, and the page only when the version is not the one of
    // the page this process keeps for this very statement and parameters: one round trip
    // either way, one snapshot, so the version always belongs to the page it comes with
    // (a kept page still current costs a primary-key read instead of the rendering).
    // The count and the page in one statement, so the total always agrees with the
    // items. PostgreSQL writes the whole body as JSON text (one column of one row): the
    // service neither parses 50 rows of 16 columns nor serialises them again, it sends the
    // text as it comes. The page's rows are built after the LIMIT: a plan that sorts the
    // workspace's members (statistics not yet taken after an import) must not format them all.
    // The statement's text follows from its condition and total (placeholders included):
    // built once per shape, so each request neither assembles nor hashes 1.5 KB of SQL
    // again (the same string is the kept pages' key prefix and pg's prepared statement).
    const shape = `${condition}\n${total}`;
    const text =
      this.texts.get(shape) ??
      this.remember(
        shape,
        `SELECT v.version, CASE WHEN v.version <> ${known}::text THEN json_build_object(
         'items', coalesce((SELECT json_agg(x ORDER BY x.id)
                            FROM (SELECT ${MEMBER_JSON_FIELDS}
                                  FROM (SELECT * FROM members m WHERE ${condition} ORDER BY m.id
                                        LIMIT ${limit} OFFSET ${offset}) m) x), '[]'::json),
         'total', ${total},
         'page', ${pageNo}::int, 'pageSize', ${limit}::int)::text END AS body
       FROM (SELECT coalesce((SELECT l.version::text FROM member_list_versions l WHERE l.workspace_id = $1),
                             '${NO_VERSION}') AS version) v`,
      );
    const values = [...params, page.pageSize, page.offset, page.page];
    const key = `${shape}\n${JSON.stringify(values)}`;
    const kept = this.pages.get(key);
    // The highest list version announced in Redis (member-list-announcer.ts), read before the
    // statement: a kept page whose version is exactly that one is served without asking
    // PostgreSQL, as core/http/kept-reads.ts serves a row (every change a list shows is
    // announced before it commits, so a page older than a write answered to any client never
    // matches). Unknown (no key, Redis not ready or failing): PostgreSQL is asked, as before.
    const announced =
      peeked === undefined
        ? await announcedVersion(this.redis, this.config.redisPrefix, KEPT_MEMBER_LIST, workspaceId)
        : announcedOf(peeked);
    const started = Date.now();
    const current = announced === undefined ? undefined : String(announced);
    if (kept && kept.version === current && kept.until > started) return kept.body;
    const [row] = await queryPrepared<{ version: string; body: string | null }>(this.db, text, [
      ...values,
      kept?.version ?? NO_PAGE,
    ]);
    // Served from memory later only when rendered (or confirmed) at the announced version,
    // for KEPT_PAGE_MS at most; otherwise the next request asks PostgreSQL again.
    const until = row.version === current ? started + KEPT_PAGE_MS : 0;
    // No body: the version is the kept page's (a request without one compares with NO_PAGE, never a version).
    if (row.body === null) {
      kept!.until = until;
      return kept!.body;
    }
    const body = Buffer.from(row.body) as MemberListBytes;
    this.pages.set(key, { version: row.version, body, until });
    return body;
  }

  private remember(shape: string, text: string): string {
    if (this.texts.size < 1_000) this.texts.set(shape, text);
    return text;
  }
}

/** A version as Redis holds it (kept-reads.ts writes integers), or undefined when none or not one. */
function announcedOf(held: string | null): number | undefined {
  if (held === null) return undefined;
  const version = Number(held);
  return Number.isSafeInteger(version) ? version : undefined;
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
