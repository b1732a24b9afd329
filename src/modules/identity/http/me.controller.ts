import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { RequireAccountScope, SelfAccess } from '../../../core/auth/auth.decorators';
import { ACCOUNT_ADMIN } from '../../../core/auth/scopes';
import { CurrentPrincipal } from '../../../core/auth/current-principal.decorator';
import type { Principal } from '../../../core/auth/principal';
import { PageQueryDto, toPageRequest } from '../../../core/http/pagination';
import { AcceptInvitationCommand } from '../commands/accept-invitation.command';
import { DeclineInvitationCommand } from '../commands/decline-invitation.command';
import { RevokeOwnMemberTokenCommand, UpdateMeCommand } from '../commands/me.commands';
import type { MemberSnapshot } from '../domain/member.events';
import { ListMyInvitationsQuery } from '../queries/invitation.queries';
import { invitationIdOf } from './caller';
import { MyInvitationsResponse } from './dto/invitation.dto';
import { GetMeQuery } from '../queries/me.query';
import { MeResponse, MembershipResponse, UpdateMeDto } from './dto/me.dto';
import { TakesNoBody } from '../../../core/http/input-guard';

/** The caller's own profile: no {wid}, so any authenticated credential reaches only itself. */
@ApiTags('me')
@Controller('me')
export class MeController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Get()
  @SelfAccess()
  @ApiOkResponse({ type: MeResponse })
  get(@CurrentPrincipal() p: Principal): Promise<MeResponse> {
    return this.queries.execute(new GetMeQuery(p.accountUuid, memberOnly(p), p.credential.workspaceId));
  }

  @Put()
  @SelfAccess()
  @ApiOkResponse({ type: MeResponse })
  async update(@CurrentPrincipal() p: Principal, @Body() body: UpdateMeDto): Promise<MeResponse> {
    await this.commands.execute(new UpdateMeCommand(p.credential, body));
    return this.queries.execute(new GetMeQuery(p.accountUuid, memberOnly(p), p.credential.workspaceId));
  }

  /** Pending invitations sent to the account's email (account-level data, like its keys). */
  @Get('invitations')
  @RequireAccountScope(ACCOUNT_ADMIN)
  @ApiOkResponse({ type: MyInvitationsResponse })
  invitations(@CurrentPrincipal() p: Principal, @Query() q: PageQueryDto): Promise<MyInvitationsResponse> {
    return this.queries.execute(new ListMyInvitationsQuery(p.accountUuid, toPageRequest(q)));
  }

  /** Joins the invitation's workspace with this account; answers with the new membership. */
  @Post('invitations/:invitationId/accept')
  @TakesNoBody()
  @RequireAccountScope(ACCOUNT_ADMIN)
  @HttpCode(200)
  @ApiOkResponse({ type: MembershipResponse })
  async accept(
    @CurrentPrincipal() p: Principal,
    @Param('invitationId') rawId: string,
  ): Promise<MembershipResponse> {
    const member = await this.commands.execute<AcceptInvitationCommand, MemberSnapshot>(
      new AcceptInvitationCommand(p.credential, invitationIdOf(rawId)),
    );
    const me = await this.queries.execute<GetMeQuery, MeResponse>(new GetMeQuery(p.accountUuid));
    return me.memberships.find((m) => m.member.id === member.id)!;
  }

  /** Says no to an invitation: it can no longer be accepted. */
  @Post('invitations/:invitationId/decline')
  @TakesNoBody()
  @RequireAccountScope(ACCOUNT_ADMIN)
  @HttpCode(204)
  @ApiNoContentResponse()
  async decline(@CurrentPrincipal() p: Principal, @Param('invitationId') rawId: string): Promise<void> {
    await this.commands.execute(new DeclineInvitationCommand(p.credential, invitationIdOf(rawId)));
  }

  /** Signs a member token out: it stops working at once. */
  @Delete('token')
  @SelfAccess()
  @HttpCode(204)
  @ApiNoContentResponse()
  async revokeOwnToken(@CurrentPrincipal() p: Principal): Promise<void> {
    await this.commands.execute(new RevokeOwnMemberTokenCommand(p.credential));
  }
}

function memberOnly(p: Principal): number | undefined {
  return p.credential.kind === 'member_token' ? (p.credential.memberId ?? -1) : undefined;
}
