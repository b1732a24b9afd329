import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { NotFoundError } from '../../../core/http/domain-errors';
import { applyListFilters, PageRequest, Paginated, paginated } from '../../../core/http/pagination';
import { withVersion } from '../../../core/http/preconditions';
import type { McpServerTool } from '../domain/mcp-server.events';
import { McpServerDetailsResponse, McpServerResponse } from '../http/mcp-server.dto';
import { McpServerEntity } from '../projections/mcp-server.entity';
import { EnabledMcpServerTool, ListEnabledMcpServerToolsQuery } from './enabled-tools.query';

export class ListMcpServersQuery {
  constructor(
    readonly workspaceId: string,
    readonly page: PageRequest,
  ) {}
}

export class GetMcpServerQuery {
  constructor(
    readonly workspaceId: string,
    readonly serverId: number,
  ) {}
}

@QueryHandler(ListMcpServersQuery)
export class ListMcpServersHandler implements IQueryHandler<ListMcpServersQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: ListMcpServersQuery): Promise<Paginated<McpServerResponse>> {
    const [rows, total] = await applyListFilters(
      this.db
        .getRepository(McpServerEntity)
        .createQueryBuilder('s')
        .where('s.workspace_id = :workspaceId', { workspaceId: q.workspaceId }),
      q.page,
      { search: ['s.name', 's.slug'], time: 's.created_at' },
    )
      .orderBy('s.id', 'ASC')
      .skip(q.page.offset)
      .take(q.page.pageSize)
      .getManyAndCount();
    return paginated(rows.map(McpServerResponse.of), total, q.page);
  }
}

@QueryHandler(GetMcpServerQuery)
export class GetMcpServerHandler implements IQueryHandler<GetMcpServerQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: GetMcpServerQuery): Promise<McpServerDetailsResponse> {
    const row = await this.db
      .getRepository(McpServerEntity)
      .findOneBy({ id: q.serverId, workspaceId: q.workspaceId });
    if (!row) throw new NotFoundError('MCP server not found');
    return withVersion(McpServerDetailsResponse.details(row), row.version);
  }
}

/** The tools a workspace's agents may be offered: those of its enabled servers only. */
@QueryHandler(ListEnabledMcpServerToolsQuery)
export class ListEnabledMcpServerToolsHandler implements IQueryHandler<ListEnabledMcpServerToolsQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: ListEnabledMcpServerToolsQuery): Promise<EnabledMcpServerTool[]> {
    const rows = await this.db
      .getRepository(McpServerEntity)
      .find({ where: { workspaceId: q.workspaceId, enabled: true }, order: { id: 'ASC' } });
    return rows.flatMap((row) =>
      (row.tools as McpServerTool[]).map((tool) => ({
        serverId: row.id,
        serverSlug: row.slug,
        mcpUrl: row.mcpUrl,
        ...tool,
      })),
    );
  }
}
