import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { RequireScope } from '../../../core/auth/auth.decorators';
import { NotFoundError } from '../../../core/http/domain-errors';
import { CreatedLocation, seg } from '../../../core/http/location';
import { toPageRequest } from '../../../core/http/pagination';
import { ConditionalWrite, IfMatch } from '../../../core/http/preconditions';
import { MAX_ID } from '../../../core/http/validation';
import {
  CreateMcpServerCommand,
  DeleteMcpServerCommand,
  RefreshMcpServerToolsCommand,
  SetMcpServerEnabledCommand,
  UpdateMcpServerCommand,
} from '../commands/mcp-server.commands';
import { GetMcpServerQuery, ListMcpServersQuery } from '../queries/mcp-server.queries';
import {
  CreateMcpServerDto,
  ListMcpServersQueryDto,
  McpServerDetailsResponse,
  McpServerListResponse,
  UpdateMcpServerDto,
} from './mcp-server.dto';
import { TakesNoBody } from '../../../core/http/input-guard';

/** A path id that is not a positive 32-bit integer names nothing: 404, like an unknown id. */
function serverIdOf(raw: string): number {
  if (!/^[1-9]\d{0,9}$/.test(raw) || Number(raw) > MAX_ID) throw new NotFoundError('MCP server not found');
  return Number(raw);
}

@ApiTags('mcp-servers')
@Controller('w/:wid/mcp-servers')
export class McpServersController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Get()
  @RequireScope('apps:read')
  @ApiOkResponse({ type: McpServerListResponse })
  list(@Param('wid') wid: string, @Query() query: ListMcpServersQueryDto): Promise<McpServerListResponse> {
    return this.queries.execute(new ListMcpServersQuery(wid.toLowerCase(), toPageRequest(query)));
  }

  @Post()
  @RequireScope('apps:write')
  @CreatedLocation<McpServerDetailsResponse>(
    (r, p) => `/w/${seg(p.wid.toLowerCase())}/mcp-servers/${seg(r.id)}`,
  )
  @ApiCreatedResponse({
    type: McpServerDetailsResponse,
    description: 'created enabled, with no tools until refresh-tools',
  })
  async create(
    @Param('wid') wid: string,
    @Body() body: CreateMcpServerDto,
  ): Promise<McpServerDetailsResponse> {
    const workspaceId = wid.toLowerCase();
    const id = await this.commands.execute<CreateMcpServerCommand, number>(
      new CreateMcpServerCommand(workspaceId, body),
    );
    return this.queries.execute(new GetMcpServerQuery(workspaceId, id));
  }

  @Get(':serverId')
  @RequireScope('apps:read')
  @ApiOkResponse({ type: McpServerDetailsResponse })
  get(@Param('wid') wid: string, @Param('serverId') rawId: string): Promise<McpServerDetailsResponse> {
    return this.queries.execute(new GetMcpServerQuery(wid.toLowerCase(), serverIdOf(rawId)));
  }

  @Put(':serverId')
  @RequireScope('apps:write')
  @ApiOkResponse({ type: McpServerDetailsResponse })
  @ConditionalWrite()
  async update(
    @Param('wid') wid: string,
    @Param('serverId') rawId: string,
    @Body() body: UpdateMcpServerDto,
    @IfMatch() ifMatch: number[] | undefined,
  ): Promise<McpServerDetailsResponse> {
    const workspaceId = wid.toLowerCase();
    const id = serverIdOf(rawId);
    await this.commands.execute(new UpdateMcpServerCommand(workspaceId, id, body, ifMatch));
    return this.queries.execute(new GetMcpServerQuery(workspaceId, id));
  }

  @Post(':serverId/enable')
  @TakesNoBody()
  @RequireScope('apps:write')
  @HttpCode(200)
  @ApiOkResponse({ type: McpServerDetailsResponse, description: 'enabled, and its tools refreshed' })
  enable(@Param('wid') wid: string, @Param('serverId') rawId: string): Promise<McpServerDetailsResponse> {
    return this.run(wid, rawId, (w, id) => new SetMcpServerEnabledCommand(w, id, true));
  }

  @Post(':serverId/disable')
  @TakesNoBody()
  @RequireScope('apps:write')
  @HttpCode(200)
  @ApiOkResponse({ type: McpServerDetailsResponse, description: 'disabled: its tools are offered to nobody' })
  disable(@Param('wid') wid: string, @Param('serverId') rawId: string): Promise<McpServerDetailsResponse> {
    return this.run(wid, rawId, (w, id) => new SetMcpServerEnabledCommand(w, id, false));
  }

  @Post(':serverId/refresh-tools')
  @TakesNoBody()
  @RequireScope('apps:write')
  @HttpCode(200)
  @ApiOkResponse({
    type: McpServerDetailsResponse,
    description: 'the tools as listed now, or lastRefreshError with the reason (the previous tools stay)',
  })
  refresh(@Param('wid') wid: string, @Param('serverId') rawId: string): Promise<McpServerDetailsResponse> {
    return this.run(wid, rawId, (w, id) => new RefreshMcpServerToolsCommand(w, id));
  }

  @Delete(':serverId')
  @RequireScope('apps:admin')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'deleted; its slug is free again' })
  @ConditionalWrite()
  async remove(
    @Param('wid') wid: string,
    @Param('serverId') rawId: string,
    @IfMatch() ifMatch: number[] | undefined,
  ): Promise<void> {
    await this.commands.execute(new DeleteMcpServerCommand(wid.toLowerCase(), serverIdOf(rawId), ifMatch));
  }

  private async run(
    wid: string,
    rawId: string,
    command: (workspaceId: string, id: number) => object,
  ): Promise<McpServerDetailsResponse> {
    const workspaceId = wid.toLowerCase();
    const id = serverIdOf(rawId);
    await this.commands.execute(command(workspaceId, id));
    return this.queries.execute(new GetMcpServerQuery(workspaceId, id));
  }
}
