import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import type { CredentialKind } from '../../../core/auth/principal';
import { assertManagesKeys } from '../domain/key-management.policy';
import { NotFoundError } from '../../../core/http/domain-errors';
import { listFilterConditions, PageRequest, Paginated, paginated } from '../../../core/http/pagination';
import { ApiKeyResponse, displayPrefix } from '../http/api-key.dto';

export class ListApiKeysQuery {
  constructor(
    readonly accountUuid: string,
    readonly page: PageRequest,
    /** The asking credential's kind: only API keys manage keys (key-management.policy.ts). */
    readonly credentialKind: CredentialKind,
  ) {}
}

export class GetApiKeyQuery {
  constructor(
    readonly accountUuid: string,
    readonly keyId: string,
    readonly credentialKind: CredentialKind,
  ) {}
}

interface Row {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  created_at: Date;
  expires_at: Date;
  last_used_at: Date | null;
}

const SELECT = `SELECT k.id, k.name, k.prefix, k.scopes, k.created_at, k.expires_at, u.last_used_at
                  FROM api_keys k LEFT JOIN api_key_usage u ON u.key_id = k.id`;

function toResponse(r: Row): ApiKeyResponse {
  return {
    id: r.id,
    name: r.name,
    prefix: displayPrefix(r.prefix),
    scopes: r.scopes,
    createdAt: r.created_at.toISOString(),
    expiresAt: r.expires_at.toISOString(),
    lastUsedAt: r.last_used_at?.toISOString() ?? null,
    status: r.expires_at.getTime() <= Date.now() ? 'expired' : 'active',
  };
}

/** The caller's keys, newest first; revoked keys are gone, expired ones stay visible as such. */
@QueryHandler(ListApiKeysQuery)
export class ListApiKeysHandler implements IQueryHandler<ListApiKeysQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: ListApiKeysQuery): Promise<Paginated<ApiKeyResponse>> {
    assertManagesKeys(q.credentialKind);
    const params: unknown[] = [q.accountUuid];
    const condition = [
      'k.account_uuid = $1',
      'k.revoked_at IS NULL',
      ...listFilterConditions(q.page, { search: ['k.name'], time: 'k.created_at' }, params),
    ].join(' AND ');
    const rows = (await this.db.query(
      `${SELECT} WHERE ${condition} ORDER BY k.created_at DESC, k.id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, q.page.pageSize, q.page.offset],
    )) as Row[];
    const [{ total }] = (await this.db.query(
      `SELECT count(*)::int AS total FROM api_keys k WHERE ${condition}`,
      params,
    )) as { total: number }[];
    return paginated(rows.map(toResponse), total, q.page);
  }
}

@QueryHandler(GetApiKeyQuery)
export class GetApiKeyHandler implements IQueryHandler<GetApiKeyQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: GetApiKeyQuery): Promise<ApiKeyResponse> {
    assertManagesKeys(q.credentialKind);
    const rows = (await this.db.query(
      `${SELECT} WHERE k.id = $1 AND k.account_uuid = $2 AND k.revoked_at IS NULL`,
      [q.keyId, q.accountUuid],
    )) as Row[];
    if (!rows[0]) throw new NotFoundError('API key not found');
    return toResponse(rows[0]);
  }
}
