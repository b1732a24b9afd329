import { Body, Controller, Delete, Get, Param, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { RequireScope } from '../../../core/auth/auth.decorators';
import { CreatedLocation, seg } from '../../../core/http/location';
import { CurrentPrincipal } from '../../../core/auth/current-principal.decorator';
import type { Principal } from '../../../core/auth/principal';
import { toPageRequest } from '../../../core/http/pagination';
import { CreateInvitationCommand, RevokeInvitationCommand } from '../commands/invitation.commands';
import { GetInvitationQuery, ListInvitationsQuery } from '../queries/invitation.queries';
import { callerOf, invitationIdOf } from './caller';
import {
  CreateInvitationDto,
  InvitationListResponse,
  InvitationResponse,
  ListInvitationsQueryDto,
} from './dto/invitation.dto';

/** Scopes follow the members pattern of SPEC "Scopes": read, write to invite, admin to revoke. */
@ApiTags('invitations')
@Controller('w/:wid/invitations')
export class InvitationsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Post()
  @RequireScope('members:write')
  @CreatedLocation<InvitationResponse>((r, p) => `/w/${seg(p.wid.toLowerCase())}/invitations/${seg(r.id)}`)
  @ApiCreatedResponse({ type: InvitationResponse })
  async create(
    @Param('wid') wid: string,
    @Body() body: CreateInvitationDto,
    @CurrentPrincipal() p: Principal,
  ): Promise<InvitationResponse> {
    const workspaceId = wid.toLowerCase();
    const id = await this.commands.execute<CreateInvitationCommand, string>(
      new CreateInvitationCommand(workspaceId, body, callerOf(p)),
    );
    return this.queries.execute(new GetInvitationQuery(workspaceId, id));
  }

  @Get()
  @RequireScope('members:read')
  @ApiOkResponse({ type: InvitationListResponse })
  list(@Param('wid') wid: string, @Query() q: ListInvitationsQueryDto): Promise<InvitationListResponse> {
    return this.queries.execute(
      new ListInvitationsQuery(wid.toLowerCase(), q.status ?? 'all', toPageRequest(q)),
    );
  }

  @Get(':invitationId')
  @RequireScope('members:read')
  @ApiOkResponse({ type: InvitationResponse })
  get(@Param('wid') wid: string, @Param('invitationId') id: string): Promise<InvitationResponse> {
    return this.queries.execute(new GetInvitationQuery(wid.toLowerCase(), invitationIdOf(id)));
  }

  /** Revokes a pending invitation; answers with it, now revoked. */
  @Delete(':invitationId')
  @RequireScope('members:admin')
  @ApiOkResponse({ type: InvitationResponse })
  async revoke(@Param('wid') wid: string, @Param('invitationId') rawId: string): Promise<InvitationResponse> {
    const workspaceId = wid.toLowerCase();
    const id = invitationIdOf(rawId);
    await this.commands.execute(new RevokeInvitationCommand(workspaceId, id));
    return this.queries.execute(new GetInvitationQuery(workspaceId, id));
  }
}
