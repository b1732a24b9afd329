import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { RequireScope, SelfAccess } from '../../../core/auth/auth.decorators';
import { CurrentPrincipal } from '../../../core/auth/current-principal.decorator';
import type { Principal } from '../../../core/auth/principal';
import { CreatedLocation, seg } from '../../../core/http/location';
import { PageQueryDto, toPageRequest } from '../../../core/http/pagination';
import { CreateRecordGrantCommand, RevokeRecordGrantCommand } from '../commands/record-grant.commands';
import { GetRecordGrantQuery, ListRecordGrantsQuery } from '../queries/record-grant.queries';
import { callerOf, pathId } from './caller';
import { CreateRecordGrantDto, RecordGrantListResponse, RecordGrantResponse } from './dto/record-grant.dto';

/** Sharing grants: one member's records (of a type, or all) readable or writable by another (SPEC "Scopes", 5). */
@ApiTags('records')
@Controller('w/:wid/record-grants')
export class RecordGrantsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Post()
  @RequireScope('records:admin')
  @SelfAccess()
  @ApiOperation({
    summary: 'Share a member’s records',
    description:
      'records:admin for any owner; a member shares its own records (ownerMemberId = self) without it',
  })
  @CreatedLocation<RecordGrantResponse>((r, p) => `/w/${seg(p.wid.toLowerCase())}/record-grants/${seg(r.id)}`)
  @ApiCreatedResponse({ type: RecordGrantResponse })
  async create(
    @Param('wid') wid: string,
    @Body() body: CreateRecordGrantDto,
    @CurrentPrincipal() p: Principal,
  ): Promise<RecordGrantResponse> {
    const workspaceId = wid.toLowerCase();
    const id = await this.commands.execute<CreateRecordGrantCommand, number>(
      new CreateRecordGrantCommand(workspaceId, body, callerOf(p)),
    );
    return this.queries.execute(new GetRecordGrantQuery(workspaceId, id, callerOf(p)));
  }

  @Get()
  @RequireScope('records:admin')
  @SelfAccess()
  @ApiOperation({
    summary: 'List record grants',
    description: 'records:admin sees every grant; a member the grants it gave or holds',
  })
  @ApiOkResponse({ type: RecordGrantListResponse })
  list(
    @Param('wid') wid: string,
    @Query() query: PageQueryDto,
    @CurrentPrincipal() p: Principal,
  ): Promise<RecordGrantListResponse> {
    return this.queries.execute(
      new ListRecordGrantsQuery(wid.toLowerCase(), toPageRequest(query), callerOf(p)),
    );
  }

  @Get(':grantId')
  @RequireScope('records:admin')
  @SelfAccess()
  @ApiOperation({
    summary: 'Get a record grant',
    description: 'records:admin sees any grant; a member one it gave or holds (others answer 404)',
  })
  @ApiOkResponse({ type: RecordGrantResponse })
  get(
    @Param('wid') wid: string,
    @Param('grantId') rawId: string,
    @CurrentPrincipal() p: Principal,
  ): Promise<RecordGrantResponse> {
    return this.queries.execute(
      new GetRecordGrantQuery(wid.toLowerCase(), pathId(rawId, 'Grant'), callerOf(p)),
    );
  }

  @Delete(':grantId')
  @RequireScope('records:admin')
  @SelfAccess()
  @HttpCode(204)
  @ApiOperation({
    summary: 'Revoke a record grant',
    description: 'records:admin, the owner of the shared records, or the grantee giving it up',
  })
  @ApiNoContentResponse({ description: 'revoked' })
  async remove(
    @Param('wid') wid: string,
    @Param('grantId') rawId: string,
    @CurrentPrincipal() p: Principal,
  ): Promise<void> {
    await this.commands.execute(
      new RevokeRecordGrantCommand(wid.toLowerCase(), pathId(rawId, 'Grant'), callerOf(p)),
    );
  }
}
