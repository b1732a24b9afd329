import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { NotFoundError } from '../../../core/http/domain-errors';
import { listFilterConditions, PageRequest, Paginated, paginated } from '../../../core/http/pagination';
import { withVersion } from '../../../core/http/preconditions';
import type { OAuthAppResponse } from '../http/oauth-app.dto';

export class ListOAuthAppsQuery {
  constructor(
    readonly accountUuid: string,
    readonly page: PageRequest,
  ) {}
}

export class GetOAuthAppQuery {
  constructor(
    readonly accountUuid: string,
    readonly appId: string,
  ) {}
}

interface Row {
  id: string;
  client_id: string;
  name: string;
  redirect_uris: string[];
  scopes: string[];
  mcp_server_url: string | null;
  client_type: 'confidential' | 'public';
  created_at: Date;
  updated_at: Date;
  version: number;
}

const SELECT = `SELECT id, client_id, name, redirect_uris, scopes, mcp_server_url, client_type, created_at, updated_at, version
                  FROM oauth_apps a`;

function toResponse(r: Row): OAuthAppResponse {
  return {
    id: r.id,
    clientId: r.client_id,
    name: r.name,
    redirectUris: r.redirect_uris,
    scopes: r.scopes,
    mcpServerUrl: r.mcp_server_url,
    clientType: r.client_type,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

/** The account's apps, newest first; deleted ones are gone. */
@QueryHandler(ListOAuthAppsQuery)
export class ListOAuthAppsHandler implements IQueryHandler<ListOAuthAppsQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: ListOAuthAppsQuery): Promise<Paginated<OAuthAppResponse>> {
    const params: unknown[] = [q.accountUuid];
    const condition = [
      'a.account_uuid = $1',
      'a.deleted_at IS NULL',
      ...listFilterConditions(q.page, { search: ['a.name'], time: 'a.created_at' }, params),
    ].join(' AND ');
    const rows = (await this.db.query(
      `${SELECT} WHERE ${condition} ORDER BY a.created_at DESC, a.id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, q.page.pageSize, q.page.offset],
    )) as Row[];
    const [{ total }] = (await this.db.query(
      `SELECT count(*)::int AS total FROM oauth_apps a WHERE ${condition}`,
      params,
    )) as { total: number }[];
    return paginated(rows.map(toResponse), total, q.page);
  }
}

/** One of the account's apps, with its version (ETag); another account's reads as absent. */
@QueryHandler(GetOAuthAppQuery)
export class GetOAuthAppHandler implements IQueryHandler<GetOAuthAppQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: GetOAuthAppQuery): Promise<OAuthAppResponse> {
    const rows = (await this.db.query(
      `${SELECT} WHERE a.id = $1 AND a.account_uuid = $2 AND a.deleted_at IS NULL`,
      [q.appId, q.accountUuid],
    )) as Row[];
    if (!rows[0]) throw new NotFoundError('App not found');
    return withVersion(toResponse(rows[0]), rows[0].version);
  }
}
