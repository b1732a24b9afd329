import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Put,
  Query,
  Res,
  UseInterceptors,
} from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { DataSource } from 'typeorm';
import { RequireScope, SelfAccess } from '../../../core/auth/auth.decorators';
import { CurrentPrincipal } from '../../../core/auth/current-principal.decorator';
import type { Principal } from '../../../core/auth/principal';
import { NotFoundError } from '../../../core/http/domain-errors';
import { CreatedLocation, seg } from '../../../core/http/location';
import { toPageRequest } from '../../../core/http/pagination';
import { ConditionalWrite, IfMatch, pinnedRevision } from '../../../core/http/preconditions';
import { BulkRecordsCommand, BulkResult, MAX_BULK_RECORDS } from '../commands/bulk-records.command';
import {
  CreateRecordAnsweredCommand,
  DeleteRecordCommand,
  UpdateRecordCommand,
  UpsertOutcome,
  UpsertRecordCommand,
} from '../commands/record.commands';
import { GetRecordQuery, ListRecordsQuery } from '../queries/record.queries';
import type { RecordCaller } from '../domain/record-access.policy';
import { bulkBodyOf, callerOf, FieldFilters, FieldFiltersInterceptor, pathId, RawBody } from './caller';
import {
  BulkRecordsDto,
  BulkRecordsResponse,
  CreateRecordDto,
  ListRecordsQueryDto,
  RecordListResponse,
  RecordResponse,
  UpdateRecordDto,
  UpsertRecordDto,
  UpsertRecordResponse,
} from './dto/record.dto';

const ACCESS =
  "records:read|write|admin; without them a member reads and edits its own records (memberId = self). Another member's records need records:admin or a grant; an admin-only type's records need records:admin, and a caller without datatypes:read or records:admin gets the 404 of a type that does not exist.";

/** Data records (PHI): records:* with self-access and grants, decided by record-access.policy.ts in the handlers. */
@ApiTags('records')
@Controller('w/:wid/data-types/:dataTypeId')
export class RecordsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly db: DataSource,
  ) {}

  /**
   * The revision an If-Match pins. The record is first read as the caller (GetRecordQuery's
   * rules: the type it may see, the record it may read, under this type), so a 412 naming
   * the current version never answers a caller the record is hidden from.
   */
  private async pinned(
    workspaceId: string,
    dataTypeId: number,
    recordId: number,
    ifMatch: number[] | undefined,
    caller: RecordCaller,
  ) {
    if (ifMatch === undefined) return undefined;
    await this.queries.execute(new GetRecordQuery(workspaceId, dataTypeId, recordId, caller));
    return pinnedRevision(this.db, ifMatch, {
      table: 'data_records',
      id: recordId,
      workspaceId,
      notFound: () => new NotFoundError('Record not found'),
    });
  }

  @Post('records')
  @RequireScope('records:write')
  @SelfAccess()
  @ApiOperation({ summary: 'Create a record', description: ACCESS })
  @CreatedLocation<RecordResponse>(
    (r, p) => `/w/${seg(p.wid.toLowerCase())}/data-types/${seg(r.dataTypeId)}/records/${seg(r.id)}`,
  )
  @ApiCreatedResponse({ type: RecordResponse })
  async create(
    @Param('wid') wid: string,
    @Param('dataTypeId') rawTypeId: string,
    @Body() body: CreateRecordDto,
    @CurrentPrincipal() p: Principal,
  ): Promise<RecordResponse> {
    const workspaceId = wid.toLowerCase();
    const dataTypeId = pathId(rawTypeId, 'Data type');
    const caller = callerOf(p);
    return this.commands.execute<CreateRecordAnsweredCommand, RecordResponse>(
      new CreateRecordAnsweredCommand(workspaceId, dataTypeId, body, caller),
    );
  }

  @Get('records')
  @RequireScope('records:read')
  @SelfAccess()
  @UseInterceptors(FieldFiltersInterceptor)
  @ApiOperation({
    summary: 'List records',
    description: `${ACCESS} Filters: search (indexed text-like fields, case-insensitive), memberId, externalId, field.<slug>=value on indexed fields (exact; text case-insensitive; a number as JSON writes it, e.g. 42, -1.5, 1e3; a boolean as true or false; a datetime matches the same instant in any offset, e.g. 2024-05-01T10:00:00Z finds 2024-05-01T12:00:00+02:00), sort. A malformed filter value is a 400 naming the parameter.`,
  })
  @ApiOkResponse({ type: RecordListResponse })
  list(
    @Param('wid') wid: string,
    @Param('dataTypeId') rawTypeId: string,
    @Query() query: ListRecordsQueryDto,
    @FieldFilters() fields: Record<string, string>,
    @CurrentPrincipal() p: Principal,
  ): Promise<RecordListResponse> {
    return this.queries.execute(
      new ListRecordsQuery(
        wid.toLowerCase(),
        pathId(rawTypeId, 'Data type'),
        toPageRequest(query),
        { memberId: query.memberId, externalId: query.externalId, fields, sort: query.sort },
        callerOf(p),
      ),
    );
  }

  @Post('records/bulk')
  @RequireScope('records:write')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Create or upsert up to 10,000 records',
    description: 'each record is checked and written on its own; per-record results and errors',
  })
  @ApiBody({ type: BulkRecordsDto })
  @ApiOkResponse({ type: BulkRecordsResponse })
  bulk(
    @Param('wid') wid: string,
    @Param('dataTypeId') rawTypeId: string,
    @RawBody() raw: unknown,
    @CurrentPrincipal() p: Principal,
  ): Promise<BulkResult> {
    // Checked by hand, not by the ValidationPipe: no copy of the 10,000 records (bulkBodyOf).
    const body = bulkBodyOf(raw, MAX_BULK_RECORDS);
    return this.commands.execute(
      new BulkRecordsCommand(
        wid.toLowerCase(),
        pathId(rawTypeId, 'Data type'),
        body.records,
        body.upsert,
        callerOf(p),
      ),
    );
  }

  @Get('records/:recordId')
  @RequireScope('records:read')
  @SelfAccess()
  @ApiOperation({ summary: 'Get a record', description: ACCESS })
  @ApiOkResponse({ type: RecordResponse })
  get(
    @Param('wid') wid: string,
    @Param('dataTypeId') rawTypeId: string,
    @Param('recordId') rawId: string,
    @CurrentPrincipal() p: Principal,
  ): Promise<RecordResponse> {
    return this.queries.execute(
      new GetRecordQuery(
        wid.toLowerCase(),
        pathId(rawTypeId, 'Data type'),
        pathId(rawId, 'Record'),
        callerOf(p),
      ),
    );
  }

  @Put('records/:recordId')
  @RequireScope('records:write')
  @SelfAccess()
  @ConditionalWrite()
  @ApiOperation({ summary: 'Change some values of a record (null clears one)', description: ACCESS })
  @ApiOkResponse({ type: RecordResponse })
  async update(
    @Param('wid') wid: string,
    @Param('dataTypeId') rawTypeId: string,
    @Param('recordId') rawId: string,
    @Body() body: UpdateRecordDto,
    @CurrentPrincipal() p: Principal,
    @IfMatch() ifMatch: number[] | undefined,
  ): Promise<RecordResponse> {
    const workspaceId = wid.toLowerCase();
    const dataTypeId = pathId(rawTypeId, 'Data type');
    const recordId = pathId(rawId, 'Record');
    const caller = callerOf(p);
    const expectedRevision = await this.pinned(workspaceId, dataTypeId, recordId, ifMatch, caller);
    await this.commands.execute(
      new UpdateRecordCommand(workspaceId, dataTypeId, recordId, body.fieldValues, caller, expectedRevision),
    );
    return this.queries.execute(new GetRecordQuery(workspaceId, dataTypeId, recordId, caller, true));
  }

  @Delete('records/:recordId')
  @RequireScope('records:write')
  @SelfAccess()
  @HttpCode(204)
  @ConditionalWrite()
  @ApiOperation({ summary: 'Delete a record', description: ACCESS })
  @ApiNoContentResponse({ description: 'deleted' })
  async remove(
    @Param('wid') wid: string,
    @Param('dataTypeId') rawTypeId: string,
    @Param('recordId') rawId: string,
    @CurrentPrincipal() p: Principal,
    @IfMatch() ifMatch: number[] | undefined,
  ): Promise<void> {
    const workspaceId = wid.toLowerCase();
    const recordId = pathId(rawId, 'Record');
    const dataTypeId = pathId(rawTypeId, 'Data type');
    const caller = callerOf(p);
    const expectedRevision = await this.pinned(workspaceId, dataTypeId, recordId, ifMatch, caller);
    await this.commands.execute(
      new DeleteRecordCommand(workspaceId, dataTypeId, recordId, caller, expectedRevision),
    );
  }

  @Post('upsert/:externalId')
  @RequireScope('records:write')
  @SelfAccess()
  @ApiOperation({
    summary: 'Create or update the record of an externalId',
    description: `201 with a new record, 200 with the updated one (wasCreated says which). ${ACCESS}`,
  })
  @CreatedLocation<UpsertRecordResponse>(
    (r, p) => `/w/${seg(p.wid.toLowerCase())}/data-types/${seg(r.dataTypeId)}/records/${seg(r.id)}`,
  )
  @ApiCreatedResponse({ type: UpsertRecordResponse, description: 'a new record' })
  @ApiOkResponse({ type: UpsertRecordResponse, description: 'the record holding the externalId, updated' })
  async upsert(
    @Param('wid') wid: string,
    @Param('dataTypeId') rawTypeId: string,
    @Param('externalId') externalId: string,
    @Body() body: UpsertRecordDto,
    @CurrentPrincipal() p: Principal,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<UpsertRecordResponse> {
    const workspaceId = wid.toLowerCase();
    const dataTypeId = pathId(rawTypeId, 'Data type');
    const caller = callerOf(p);
    const outcome = await this.commands.execute<UpsertRecordCommand, UpsertOutcome>(
      new UpsertRecordCommand(workspaceId, dataTypeId, externalId, body, caller),
    );
    const record = await this.queries.execute<GetRecordQuery, RecordResponse>(
      new GetRecordQuery(workspaceId, dataTypeId, outcome.recordId, caller, true),
    );
    void reply.status(outcome.wasCreated ? 201 : 200);
    return { ...record, wasCreated: outcome.wasCreated };
  }
}
