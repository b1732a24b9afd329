import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { RequireScope, SelfAccess } from '../../../core/auth/auth.decorators';
import { CurrentPrincipal } from '../../../core/auth/current-principal.decorator';
import type { Principal } from '../../../core/auth/principal';
import { CreatedLocation, seg } from '../../../core/http/location';
import { PageQueryDto, toPageRequest } from '../../../core/http/pagination';
import { CreateInboxCommand } from '../commands/inbox.commands';
import { GetInboxQuery, ListInboxesQuery } from '../queries/messaging.queries';
import { InboxListResponse, InboxResponse } from './chat.responses';
import { callerOf, pathId } from './ids';
import { CreateInboxDto } from './messaging.dto';

/** Inboxes: inboxes:read sees all; an owner or grantee sees its own (the policy, in the queries). */
@ApiTags('inboxes')
@Controller('w/:wid/inboxes')
export class InboxesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Get()
  @RequireScope('inboxes:read')
  @SelfAccess()
  @ApiOkResponse({
    type: InboxListResponse,
    description: 'without inboxes:read: the inboxes the caller owns or was granted',
  })
  list(
    @Param('wid') wid: string,
    @Query() query: PageQueryDto,
    @CurrentPrincipal() principal: Principal,
  ): Promise<InboxListResponse> {
    return this.queries.execute(
      new ListInboxesQuery(wid.toLowerCase(), callerOf(principal), toPageRequest(query)),
    );
  }

  @Post()
  @RequireScope('inboxes:write')
  @CreatedLocation<InboxResponse>((r, p) => `/w/${seg(p.wid.toLowerCase())}/inboxes/${seg(r.id)}`)
  @ApiCreatedResponse({
    type: InboxResponse,
    description: '409 when the address is an inbox anywhere in the service',
  })
  async create(
    @Param('wid') wid: string,
    @Body() body: CreateInboxDto,
    @CurrentPrincipal() principal: Principal,
  ): Promise<InboxResponse> {
    const workspaceId = wid.toLowerCase();
    const caller = callerOf(principal);
    const id = await this.commands.execute<CreateInboxCommand, number>(
      new CreateInboxCommand(workspaceId, { ...body, ownerMemberId: caller.memberId ?? null }),
    );
    return this.queries.execute(new GetInboxQuery(workspaceId, id, caller));
  }

  @Get(':inboxId')
  @RequireScope('inboxes:read')
  @SelfAccess()
  @ApiOkResponse({ type: InboxResponse })
  get(
    @Param('wid') wid: string,
    @Param('inboxId') inboxId: string,
    @CurrentPrincipal() principal: Principal,
  ): Promise<InboxResponse> {
    return this.queries.execute(
      new GetInboxQuery(wid.toLowerCase(), pathId(inboxId, 'Inbox'), callerOf(principal)),
    );
  }
}
