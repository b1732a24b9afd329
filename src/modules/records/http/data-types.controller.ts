import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { RequireScope, SelfAccess } from '../../../core/auth/auth.decorators';
import { CurrentPrincipal } from '../../../core/auth/current-principal.decorator';
import type { Principal } from '../../../core/auth/principal';
import { NotFoundError } from '../../../core/http/domain-errors';
import { CreatedLocation, seg } from '../../../core/http/location';
import { PageQueryDto, toPageRequest } from '../../../core/http/pagination';
import { ConditionalWrite, IfMatch, pinnedRevision } from '../../../core/http/preconditions';
import {
  CreateDataTypeCommand,
  DeleteDataTypeCommand,
  UpdateDataTypeCommand,
} from '../commands/data-type.commands';
import { GetDataTypeQuery, ListDataTypesQuery } from '../queries/data-type.queries';
import { callerOf, pathId } from './caller';
import {
  CreateDataTypeDto,
  DataTypeListResponse,
  DataTypeResponse,
  DeleteDataTypeQueryDto,
  UpdateDataTypeDto,
} from './dto/data-type.dto';

/** Data types (forms): the schema of a workspace's records. datatypes:* governs schemas (no PHI). */
@ApiTags('data-types')
@Controller('w/:wid/data-types')
export class DataTypesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly db: DataSource,
  ) {}

  private pinned(workspaceId: string, dataTypeId: number, ifMatch: number[] | undefined) {
    return pinnedRevision(this.db, ifMatch, {
      table: 'data_types',
      id: dataTypeId,
      workspaceId,
      notFound: () => new NotFoundError('Data type not found'),
    });
  }

  /** datatypes:read; without it a member still reads the workspace-wide forms. */
  @Get()
  @RequireScope('datatypes:read')
  @SelfAccess()
  @ApiOkResponse({ type: DataTypeListResponse })
  list(
    @Param('wid') wid: string,
    @Query() query: PageQueryDto,
    @CurrentPrincipal() p: Principal,
  ): Promise<DataTypeListResponse> {
    return this.queries.execute(new ListDataTypesQuery(wid.toLowerCase(), toPageRequest(query), callerOf(p)));
  }

  @Post()
  @RequireScope('datatypes:write')
  @CreatedLocation<DataTypeResponse>((r, p) => `/w/${seg(p.wid.toLowerCase())}/data-types/${seg(r.id)}`)
  @ApiCreatedResponse({ type: DataTypeResponse })
  async create(
    @Param('wid') wid: string,
    @Body() body: CreateDataTypeDto,
    @CurrentPrincipal() p: Principal,
  ): Promise<DataTypeResponse> {
    const workspaceId = wid.toLowerCase();
    const caller = callerOf(p);
    const id = await this.commands.execute<CreateDataTypeCommand, number>(
      new CreateDataTypeCommand(workspaceId, body, caller),
    );
    return this.queries.execute(new GetDataTypeQuery(workspaceId, id, caller));
  }

  @Get(':dataTypeId')
  @RequireScope('datatypes:read')
  @SelfAccess()
  @ApiOkResponse({ type: DataTypeResponse })
  get(
    @Param('wid') wid: string,
    @Param('dataTypeId') id: string,
    @CurrentPrincipal() p: Principal,
  ): Promise<DataTypeResponse> {
    return this.queries.execute(
      new GetDataTypeQuery(wid.toLowerCase(), pathId(id, 'Data type'), callerOf(p)),
    );
  }

  @Put(':dataTypeId')
  @RequireScope('datatypes:write')
  @ConditionalWrite()
  @ApiOkResponse({ type: DataTypeResponse })
  async update(
    @Param('wid') wid: string,
    @Param('dataTypeId') rawId: string,
    @Body() body: UpdateDataTypeDto,
    @CurrentPrincipal() p: Principal,
    @IfMatch() ifMatch: number[] | undefined,
  ): Promise<DataTypeResponse> {
    const workspaceId = wid.toLowerCase();
    const id = pathId(rawId, 'Data type');
    const expectedRevision = await this.pinned(workspaceId, id, ifMatch);
    const { force, ...changes } = body;
    const caller = callerOf(p);
    await this.commands.execute(
      new UpdateDataTypeCommand(workspaceId, id, changes, force ?? false, caller, expectedRevision),
    );
    return this.queries.execute(new GetDataTypeQuery(workspaceId, id, caller));
  }

  @Delete(':dataTypeId')
  @RequireScope('datatypes:admin')
  @HttpCode(204)
  @ConditionalWrite()
  @ApiNoContentResponse({ description: 'deleted; 409 while it has records unless force=true' })
  async remove(
    @Param('wid') wid: string,
    @Param('dataTypeId') rawId: string,
    @Query() query: DeleteDataTypeQueryDto,
    @CurrentPrincipal() p: Principal,
    @IfMatch() ifMatch: number[] | undefined,
  ): Promise<void> {
    const workspaceId = wid.toLowerCase();
    const id = pathId(rawId, 'Data type');
    const expectedRevision = await this.pinned(workspaceId, id, ifMatch);
    await this.commands.execute(
      new DeleteDataTypeCommand(workspaceId, id, query.force ?? false, callerOf(p), expectedRevision),
    );
  }
}
