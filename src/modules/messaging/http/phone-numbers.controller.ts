import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { RequireScope } from '../../../core/auth/auth.decorators';
import { CurrentPrincipal } from '../../../core/auth/current-principal.decorator';
import type { Principal } from '../../../core/auth/principal';
import { NotFoundError } from '../../../core/http/domain-errors';
import { CreatedLocation, seg } from '../../../core/http/location';
import { PageQueryDto, toPageRequest } from '../../../core/http/pagination';
import { ConditionalWrite, IfMatch, pinnedRevision } from '../../../core/http/preconditions';
import {
  CreatePhoneNumberCommand,
  DeletePhoneNumberCommand,
  UpdatePhoneNumberCommand,
} from '../commands/phone-number.commands';
import { GetPhoneNumberQuery, ListPhoneNumbersQuery } from '../queries/messaging.queries';
import { PhoneNumberListResponse, PhoneNumberResponse } from './chat.responses';
import { pathId } from './ids';
import { CreatePhoneNumberDto, UpdatePhoneNumberDto } from './messaging.dto';

@ApiTags('phone-numbers')
@Controller('w/:wid/phone-numbers')
export class PhoneNumbersController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly db: DataSource,
  ) {}

  private pinned(
    workspaceId: string,
    id: number,
    ifMatch: number[] | undefined,
  ): Promise<bigint | undefined> {
    return pinnedRevision(this.db, ifMatch, {
      table: 'phone_numbers',
      id,
      workspaceId,
      notFound: () => new NotFoundError('Phone number not found'),
    });
  }

  @Get()
  @RequireScope('phones:read')
  @ApiOkResponse({ type: PhoneNumberListResponse })
  list(@Param('wid') wid: string, @Query() query: PageQueryDto): Promise<PhoneNumberListResponse> {
    return this.queries.execute(new ListPhoneNumbersQuery(wid.toLowerCase(), toPageRequest(query)));
  }

  @Post()
  @RequireScope('phones:write')
  @CreatedLocation<PhoneNumberResponse>((r, p) => `/w/${seg(p.wid.toLowerCase())}/phone-numbers/${seg(r.id)}`)
  @ApiCreatedResponse({
    type: PhoneNumberResponse,
    description: '409 when the number is registered anywhere in the service',
  })
  async create(
    @Param('wid') wid: string,
    @Body() body: CreatePhoneNumberDto,
    @CurrentPrincipal() principal: Principal,
  ): Promise<PhoneNumberResponse> {
    const workspaceId = wid.toLowerCase();
    const id = await this.commands.execute<CreatePhoneNumberCommand, number>(
      new CreatePhoneNumberCommand(workspaceId, body, principal.effectiveScopes),
    );
    return this.queries.execute(new GetPhoneNumberQuery(workspaceId, id));
  }

  @Get(':phoneId')
  @RequireScope('phones:read')
  @ApiOkResponse({ type: PhoneNumberResponse })
  get(@Param('wid') wid: string, @Param('phoneId') phoneId: string): Promise<PhoneNumberResponse> {
    return this.queries.execute(new GetPhoneNumberQuery(wid.toLowerCase(), pathId(phoneId, 'Phone number')));
  }

  @Put(':phoneId')
  @RequireScope('phones:write')
  @ConditionalWrite()
  @ApiOkResponse({ type: PhoneNumberResponse })
  async update(
    @Param('wid') wid: string,
    @Param('phoneId') rawId: string,
    @Body() body: UpdatePhoneNumberDto,
    @CurrentPrincipal() principal: Principal,
    @IfMatch() ifMatch: number[] | undefined,
  ): Promise<PhoneNumberResponse> {
    const workspaceId = wid.toLowerCase();
    const id = pathId(rawId, 'Phone number');
    const expected = await this.pinned(workspaceId, id, ifMatch);
    await this.commands.execute(
      new UpdatePhoneNumberCommand(workspaceId, id, body, principal.effectiveScopes, expected),
    );
    return this.queries.execute(new GetPhoneNumberQuery(workspaceId, id));
  }

  @Delete(':phoneId')
  @RequireScope('phones:admin')
  @HttpCode(204)
  @ConditionalWrite()
  @ApiNoContentResponse({ description: 'deleted; the number is free for any workspace again' })
  async remove(
    @Param('wid') wid: string,
    @Param('phoneId') rawId: string,
    @IfMatch() ifMatch: number[] | undefined,
  ): Promise<void> {
    const workspaceId = wid.toLowerCase();
    const id = pathId(rawId, 'Phone number');
    const expected = await this.pinned(workspaceId, id, ifMatch);
    await this.commands.execute(new DeletePhoneNumberCommand(workspaceId, id, expected));
  }
}
