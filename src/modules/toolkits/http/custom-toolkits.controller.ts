import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { RequireScope } from '../../../core/auth/auth.decorators';
import { CreatedLocation, seg } from '../../../core/http/location';
import { toPageRequest } from '../../../core/http/pagination';
import { ConditionalWrite, IfMatch } from '../../../core/http/preconditions';
import {
  CreateCustomToolkitCommand,
  DeleteCustomToolkitCommand,
  SetCustomToolkitEnabledCommand,
  UpdateCustomToolkitCommand,
} from '../commands/toolkit.commands';
import { GetCustomToolkitQuery, ListCustomToolkitsQuery } from '../queries/toolkit.queries';
import { pathIdOf } from './path-id';
import {
  CreateCustomToolkitDto,
  CustomToolkitListResponse,
  CustomToolkitResponse,
  ListCustomToolkitsQueryDto,
  UpdateCustomToolkitDto,
} from './toolkit.dto';
import { TakesNoBody } from '../../../core/http/input-guard';

const toolkitIdOf = (raw: string) => pathIdOf(raw, 'Custom toolkit');

@ApiTags('custom-toolkits')
@Controller('w/:wid/custom-toolkits')
export class CustomToolkitsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Get()
  @RequireScope('apps:read')
  @ApiOkResponse({ type: CustomToolkitListResponse })
  list(
    @Param('wid') wid: string,
    @Query() query: ListCustomToolkitsQueryDto,
  ): Promise<CustomToolkitListResponse> {
    return this.queries.execute(new ListCustomToolkitsQuery(wid.toLowerCase(), toPageRequest(query)));
  }

  @Post()
  @RequireScope('apps:write')
  @CreatedLocation<CustomToolkitResponse>(
    (r, p) => `/w/${seg(p.wid.toLowerCase())}/custom-toolkits/${seg(r.id)}`,
  )
  @ApiCreatedResponse({ type: CustomToolkitResponse })
  async create(
    @Param('wid') wid: string,
    @Body() body: CreateCustomToolkitDto,
  ): Promise<CustomToolkitResponse> {
    const workspaceId = wid.toLowerCase();
    const id = await this.commands.execute<CreateCustomToolkitCommand, number>(
      new CreateCustomToolkitCommand(workspaceId, body),
    );
    return this.queries.execute(new GetCustomToolkitQuery(workspaceId, id));
  }

  @Get(':toolkitId')
  @RequireScope('apps:read')
  @ApiOkResponse({ type: CustomToolkitResponse })
  get(@Param('wid') wid: string, @Param('toolkitId') toolkitId: string): Promise<CustomToolkitResponse> {
    return this.queries.execute(new GetCustomToolkitQuery(wid.toLowerCase(), toolkitIdOf(toolkitId)));
  }

  @Put(':toolkitId')
  @RequireScope('apps:write')
  @ApiOkResponse({ type: CustomToolkitResponse })
  @ConditionalWrite()
  async update(
    @Param('wid') wid: string,
    @Param('toolkitId') rawId: string,
    @Body() body: UpdateCustomToolkitDto,
    @IfMatch() ifMatch: number[] | undefined,
  ): Promise<CustomToolkitResponse> {
    const workspaceId = wid.toLowerCase();
    const id = toolkitIdOf(rawId);
    await this.commands.execute(new UpdateCustomToolkitCommand(workspaceId, id, body, ifMatch));
    return this.queries.execute(new GetCustomToolkitQuery(workspaceId, id));
  }

  @Post(':toolkitId/enable')
  @TakesNoBody()
  @RequireScope('apps:write')
  @HttpCode(200)
  @ApiOkResponse({ type: CustomToolkitResponse, description: 'enabled (already enabled: unchanged)' })
  enable(@Param('wid') wid: string, @Param('toolkitId') rawId: string): Promise<CustomToolkitResponse> {
    return this.setEnabled(wid, rawId, true);
  }

  @Post(':toolkitId/disable')
  @TakesNoBody()
  @RequireScope('apps:write')
  @HttpCode(200)
  @ApiOkResponse({ type: CustomToolkitResponse, description: 'disabled (already disabled: unchanged)' })
  disable(@Param('wid') wid: string, @Param('toolkitId') rawId: string): Promise<CustomToolkitResponse> {
    return this.setEnabled(wid, rawId, false);
  }

  @Delete(':toolkitId')
  @RequireScope('apps:admin')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'deleted with all its tools; its slug is free again' })
  @ConditionalWrite()
  async remove(
    @Param('wid') wid: string,
    @Param('toolkitId') rawId: string,
    @IfMatch() ifMatch: number[] | undefined,
  ): Promise<void> {
    await this.commands.execute(
      new DeleteCustomToolkitCommand(wid.toLowerCase(), toolkitIdOf(rawId), ifMatch),
    );
  }

  private async setEnabled(wid: string, rawId: string, enabled: boolean): Promise<CustomToolkitResponse> {
    const workspaceId = wid.toLowerCase();
    const id = toolkitIdOf(rawId);
    await this.commands.execute(new SetCustomToolkitEnabledCommand(workspaceId, id, enabled));
    return this.queries.execute(new GetCustomToolkitQuery(workspaceId, id));
  }
}
