import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { NotFoundError } from '../../../core/http/domain-errors';
import { applyListFilters, PageRequest, Paginated, paginated } from '../../../core/http/pagination';
import { withVersion } from '../../../core/http/preconditions';
import { validateToolArguments } from '../domain/tool-arguments';
import type { JsonSchemaObject } from '../domain/toolkit.events';
import { CustomToolkitResponse } from '../http/toolkit.dto';
import { CustomToolResponse } from '../http/tool.dto';
import { CustomToolEntity, CustomToolkitEntity } from '../projections/toolkit.entities';
import {
  EnabledCustomTool,
  ListEnabledCustomToolsQuery,
  ValidateCustomToolArgumentsQuery,
  ValidatedToolCall,
} from './validate-tool-arguments.query';

export class ListCustomToolkitsQuery {
  constructor(
    readonly workspaceId: string,
    readonly page: PageRequest,
  ) {}
}

export class GetCustomToolkitQuery {
  constructor(
    readonly workspaceId: string,
    readonly toolkitId: number,
  ) {}
}

export class ListCustomToolsQuery {
  constructor(
    readonly workspaceId: string,
    readonly toolkitId: number,
    readonly page: PageRequest,
  ) {}
}

export class GetCustomToolQuery {
  constructor(
    readonly workspaceId: string,
    readonly toolkitId: number,
    readonly toolId: number,
  ) {}
}

async function toolkitRow(
  db: DataSource,
  workspaceId: string,
  toolkitId: number,
): Promise<CustomToolkitEntity> {
  const row = await db.getRepository(CustomToolkitEntity).findOneBy({ id: toolkitId, workspaceId });
  if (!row) throw new NotFoundError('Custom toolkit not found');
  return row;
}

@QueryHandler(ListCustomToolkitsQuery)
export class ListCustomToolkitsHandler implements IQueryHandler<ListCustomToolkitsQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: ListCustomToolkitsQuery): Promise<Paginated<CustomToolkitResponse>> {
    const [rows, total] = await applyListFilters(
      this.db
        .getRepository(CustomToolkitEntity)
        .createQueryBuilder('k')
        .where('k.workspace_id = :workspaceId', { workspaceId: q.workspaceId }),
      q.page,
      { search: ['k.name', 'k.slug'], time: 'k.created_at' },
    )
      .orderBy('k.id', 'ASC')
      .skip(q.page.offset)
      .take(q.page.pageSize)
      .getManyAndCount();
    return paginated(rows.map(CustomToolkitResponse.of), total, q.page);
  }
}

@QueryHandler(GetCustomToolkitQuery)
export class GetCustomToolkitHandler implements IQueryHandler<GetCustomToolkitQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: GetCustomToolkitQuery): Promise<CustomToolkitResponse> {
    const row = await toolkitRow(this.db, q.workspaceId, q.toolkitId);
    return withVersion(CustomToolkitResponse.of(row), row.version);
  }
}

/** A toolkit's tools; a toolkit the workspace does not have is 404, not an empty list. */
@QueryHandler(ListCustomToolsQuery)
export class ListCustomToolsHandler implements IQueryHandler<ListCustomToolsQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: ListCustomToolsQuery): Promise<Paginated<CustomToolResponse>> {
    await toolkitRow(this.db, q.workspaceId, q.toolkitId);
    const [rows, total] = await applyListFilters(
      this.db
        .getRepository(CustomToolEntity)
        .createQueryBuilder('t')
        .where('t.workspace_id = :workspaceId AND t.toolkit_id = :toolkitId', {
          workspaceId: q.workspaceId,
          toolkitId: q.toolkitId,
        }),
      q.page,
      { search: ['t.name', 't.display_name'], time: 't.created_at' },
    )
      .orderBy('t.id', 'ASC')
      .skip(q.page.offset)
      .take(q.page.pageSize)
      .getManyAndCount();
    return paginated(rows.map(CustomToolResponse.of), total, q.page);
  }
}

@QueryHandler(GetCustomToolQuery)
export class GetCustomToolHandler implements IQueryHandler<GetCustomToolQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: GetCustomToolQuery): Promise<CustomToolResponse> {
    const row = await this.db
      .getRepository(CustomToolEntity)
      .findOneBy({ id: q.toolId, toolkitId: q.toolkitId, workspaceId: q.workspaceId });
    if (!row) throw new NotFoundError('Tool not found');
    return withVersion(CustomToolResponse.of(row), row.version);
  }
}

@QueryHandler(ValidateCustomToolArgumentsQuery)
export class ValidateCustomToolArgumentsHandler implements IQueryHandler<ValidateCustomToolArgumentsQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: ValidateCustomToolArgumentsQuery): Promise<ValidatedToolCall> {
    const tool = await this.db
      .getRepository(CustomToolEntity)
      .findOneBy({ id: q.toolId, workspaceId: q.workspaceId });
    const toolkit =
      tool &&
      (await this.db
        .getRepository(CustomToolkitEntity)
        .findOneBy({ id: tool.toolkitId, workspaceId: q.workspaceId }));
    if (!tool || !toolkit) throw new NotFoundError('Tool not found');
    const args = validateToolArguments(
      { toolId: tool.id, version: tool.version, inputSchema: tool.inputSchema as JsonSchemaObject },
      q.args,
    );
    return {
      toolId: tool.id,
      toolkitId: tool.toolkitId,
      name: tool.name,
      toolkitSlug: toolkit.slug,
      toolkitEnabled: toolkit.enabled,
      version: tool.version,
      arguments: args,
    };
  }
}

/** The tools of the workspace's enabled toolkits (a disabled toolkit's tools are offered to nobody). */
@QueryHandler(ListEnabledCustomToolsQuery)
export class ListEnabledCustomToolsHandler implements IQueryHandler<ListEnabledCustomToolsQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: ListEnabledCustomToolsQuery): Promise<EnabledCustomTool[]> {
    const toolkits = await this.db
      .getRepository(CustomToolkitEntity)
      .find({ where: { workspaceId: q.workspaceId, enabled: true }, order: { id: 'ASC' } });
    if (!toolkits.length) return [];
    const slugOf = new Map(toolkits.map((k) => [k.id, k.slug]));
    const tools = await this.db
      .getRepository(CustomToolEntity)
      .createQueryBuilder('t')
      .where('t.workspace_id = :ws AND t.toolkit_id = ANY(:ids)', {
        ws: q.workspaceId,
        ids: [...slugOf.keys()],
      })
      .orderBy('t.id', 'ASC')
      .getMany();
    return tools.map((t) => ({
      toolId: t.id,
      toolkitId: t.toolkitId,
      toolkitSlug: slugOf.get(t.toolkitId)!,
      name: t.name,
      displayName: t.displayName,
      description: t.description,
      prompt: t.prompt,
      chatModel: t.chatModel,
      inputSchema: t.inputSchema as Record<string, unknown>,
    }));
  }
}
