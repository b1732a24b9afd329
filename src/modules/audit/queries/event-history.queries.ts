import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { decodePosition } from '../../../core/event-store/event-store.port';
import { GuardedEventDataCatalogue } from '../../../core/events/guarded-event-data';
import { NotFoundError } from '../../../core/http/domain-errors';
import { listFilterConditions, PageRequest, Paginated, paginated } from '../../../core/http/pagination';
import { StoredEventResponse } from '../http/audit.dto';

export class ListWorkspaceEventsQuery {
  constructor(
    readonly workspaceId: string,
    readonly filters: { type?: string; stream?: string; after?: string },
    readonly page: PageRequest,
    /** The caller's effective scopes: guarded keys of the data it lacks the scope for are left out. */
    readonly scopes: readonly string[],
  ) {}
}

export class ReadWorkspaceStreamQuery {
  constructor(
    readonly workspaceId: string,
    readonly streamName: string,
    readonly page: PageRequest,
    readonly scopes: readonly string[],
  ) {}
}

interface Row {
  event_id: string;
  type: string;
  stream_name: string;
  revision: string;
  position_commit: string;
  position_prepare: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
  total: string;
}

function toResponse(
  r: Row,
  guards: GuardedEventDataCatalogue,
  scopes: readonly string[],
): StoredEventResponse {
  return {
    id: r.event_id,
    type: r.type,
    streamName: r.stream_name,
    revision: r.revision,
    position: `${r.position_commit}-${r.position_prepare}`,
    data: guards.visibleData(r.type, r.data, scopes),
    metadata: r.metadata,
  };
}

const EVENT_FILTER_COLUMNS = { search: ['type', 'stream_name'], time: 'occurred_at' };

const COLUMNS = `event_id, type, stream_name, revision::text, position_commit::text, position_prepare::text, data, metadata,
                 count(*) OVER () AS total`;

/** Newest first, always within the caller's workspace. */
@QueryHandler(ListWorkspaceEventsQuery)
export class ListWorkspaceEventsHandler implements IQueryHandler<ListWorkspaceEventsQuery> {
  constructor(
    private readonly db: DataSource,
    private readonly guards: GuardedEventDataCatalogue,
  ) {}

  async execute(q: ListWorkspaceEventsQuery): Promise<Paginated<StoredEventResponse>> {
    const where = ['workspace_id = $1'];
    const params: unknown[] = [q.workspaceId];
    if (q.filters.type) {
      params.push(q.filters.type);
      where.push(`type = $${params.length}`);
    }
    if (q.filters.stream) {
      params.push(q.filters.stream);
      where.push(`stream_name = $${params.length}`);
    }
    if (q.filters.after) {
      const p = decodePosition(q.filters.after)!;
      params.push(p.commit.toString(), p.prepare.toString());
      where.push(
        `(position_commit, position_prepare) > ($${params.length - 1}::numeric, $${params.length}::numeric)`,
      );
    }
    where.push(...listFilterConditions(q.page, EVENT_FILTER_COLUMNS, params));
    params.push(q.page.pageSize, q.page.offset);
    const rows = (await this.db.query(
      `SELECT ${COLUMNS} FROM event_log WHERE ${where.join(' AND ')}
        ORDER BY position_commit DESC, position_prepare DESC LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    )) as Row[];
    const total = rows.length ? Number(rows[0].total) : await this.count(where, params.slice(0, -2));
    return paginated(
      rows.map((r) => toResponse(r, this.guards, q.scopes)),
      total,
      q.page,
    );
  }

  private async count(where: string[], params: unknown[]): Promise<number> {
    const rows = (await this.db.query(
      `SELECT count(*)::int AS n FROM event_log WHERE ${where.join(' AND ')}`,
      params,
    )) as { n: number }[];
    return rows[0].n;
  }
}

/** One stream, oldest first; 404 when the workspace has no such stream. */
@QueryHandler(ReadWorkspaceStreamQuery)
export class ReadWorkspaceStreamHandler implements IQueryHandler<ReadWorkspaceStreamQuery> {
  constructor(
    private readonly db: DataSource,
    private readonly guards: GuardedEventDataCatalogue,
  ) {}

  async execute(q: ReadWorkspaceStreamQuery): Promise<Paginated<StoredEventResponse>> {
    const params: unknown[] = [q.workspaceId, q.streamName];
    const condition = [
      'workspace_id = $1',
      'stream_name = $2',
      ...listFilterConditions(q.page, EVENT_FILTER_COLUMNS, params),
    ].join(' AND ');
    const rows = (await this.db.query(
      `SELECT ${COLUMNS} FROM event_log WHERE ${condition}
        ORDER BY revision ASC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, q.page.pageSize, q.page.offset],
    )) as Row[];
    if (!rows.length) {
      // 404 only when the stream does not exist at all; filters that match nothing give an empty page.
      const exists = (await this.db.query(
        `SELECT 1 FROM event_log WHERE workspace_id = $1 AND stream_name = $2 LIMIT 1`,
        [q.workspaceId, q.streamName],
      )) as unknown[];
      if (!exists.length) throw new NotFoundError(`No stream named "${q.streamName}" in this workspace`);
      const total = (await this.db.query(
        `SELECT count(*)::int AS n FROM event_log WHERE ${condition}`,
        params,
      )) as { n: number }[];
      return paginated([], total[0].n, q.page);
    }
    return paginated(
      rows.map((r) => toResponse(r, this.guards, q.scopes)),
      Number(rows[0].total),
      q.page,
    );
  }
}
