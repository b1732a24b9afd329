import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { RequireScope } from '../../../core/auth/auth.decorators';
import { CreatedLocation, seg } from '../../../core/http/location';
import { toPageRequest } from '../../../core/http/pagination';
import { ConditionalWrite, IfMatch } from '../../../core/http/preconditions';
import {
  CreateCustomToolCommand,
  DeleteCustomToolCommand,
  UpdateCustomToolCommand,
} from '../commands/tool.commands';
import { GetCustomToolQuery, ListCustomToolsQuery } from '../queries/toolkit.queries';
import { pathIdOf } from './path-id';
import {
  CreateCustomToolDto,
  CustomToolListResponse,
  CustomToolResponse,
  ListCustomToolsQueryDto,
  UpdateCustomToolDto,
} from './tool.dto';

const toolkitIdOf = (raw: string) => pathIdOf(raw, 'Custom toolkit');
const toolIdOf = (raw: string) => pathIdOf(raw, 'Tool');

@ApiTags('custom-toolkits')
@Controller('w/:wid/custom-toolkits/:toolkitId/tools')
export class CustomToolsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Get()
  @RequireScope('apps:read')
  @ApiOkResponse({ type: CustomToolListResponse })
  list(
    @Param('wid') wid: string,
    @Param('toolkitId') toolkitId: string,
    @Query() query: ListCustomToolsQueryDto,
  ): Promise<CustomToolListResponse> {
    return this.queries.execute(
      new ListCustomToolsQuery(wid.toLowerCase(), toolkitIdOf(toolkitId), toPageRequest(query)),
    );
  }

  @Post()
  @RequireScope('apps:write')
  @CreatedLocation<CustomToolResponse>(
    (r, p) => `/w/${seg(p.wid.toLowerCase())}/custom-toolkits/${seg(r.toolkitId)}/tools/${seg(r.id)}`,
  )
  @ApiCreatedResponse({ type: CustomToolResponse })
  async create(
    @Param('wid') wid: string,
    @Param('toolkitId') rawToolkitId: string,
    @Body() body: CreateCustomToolDto,
  ): Promise<CustomToolResponse> {
    const workspaceId = wid.toLowerCase();
    const toolkitId = toolkitIdOf(rawToolkitId);
    const id = await this.commands.execute<CreateCustomToolCommand, number>(
      new CreateCustomToolCommand(workspaceId, toolkitId, body),
    );
    return this.queries.execute(new GetCustomToolQuery(workspaceId, toolkitId, id));
  }

  @Get(':toolId')
  @RequireScope('apps:read')
  @ApiOkResponse({ type: CustomToolResponse })
  get(
    @Param('wid') wid: string,
    @Param('toolkitId') toolkitId: string,
    @Param('toolId') toolId: string,
  ): Promise<CustomToolResponse> {
    return this.queries.execute(
      new GetCustomToolQuery(wid.toLowerCase(), toolkitIdOf(toolkitId), toolIdOf(toolId)),
    );
  }

  @Put(':toolId')
  @RequireScope('apps:write')
  @ApiOkResponse({ type: CustomToolResponse })
  @ConditionalWrite()
  async update(
    @Param('wid') wid: string,
    @Param('toolkitId') rawToolkitId: string,
    @Param('toolId') rawToolId: string,
    @Body() body: UpdateCustomToolDto,
    @IfMatch() ifMatch: number[] | undefined,
  ): Promise<CustomToolResponse> {
    const workspaceId = wid.toLowerCase();
    const toolkitId = toolkitIdOf(rawToolkitId);
    const toolId = toolIdOf(rawToolId);
    await this.commands.execute(new UpdateCustomToolCommand(workspaceId, toolkitId, toolId, body, ifMatch));
    return this.queries.execute(new GetCustomToolQuery(workspaceId, toolkitId, toolId));
  }

  @Delete(':toolId')
  @RequireScope('apps:admin')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'deleted; its name is free again in the toolkit' })
  @ConditionalWrite()
  async remove(
    @Param('wid') wid: string,
    @Param('toolkitId') rawToolkitId: string,
    @Param('toolId') rawToolId: string,
    @IfMatch() ifMatch: number[] | undefined,
  ): Promise<void> {
    await this.commands.execute(
      new DeleteCustomToolCommand(wid.toLowerCase(), toolkitIdOf(rawToolkitId), toolIdOf(rawToolId), ifMatch),
    );
  }
}
