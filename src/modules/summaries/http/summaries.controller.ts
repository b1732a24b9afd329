import { Controller, Get, Param } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { RequireScope, SelfAccess } from '../../../core/auth/auth.decorators';
import { CurrentPrincipal } from '../../../core/auth/current-principal.decorator';
import type { Principal } from '../../../core/auth/principal';
import { callerOf, pathId } from '../../messaging';
import { GetChatSummaryQuery } from '../queries/get-chat-summary.query';
import { ChatSummaryResponse } from './chat-summary.response';

/** A chat's latest summary, under the chat's own read rules (chats:read, or taking part in it). */
@ApiTags('chats')
@Controller('w/:wid/chats')
export class SummariesController {
  constructor(private readonly queries: QueryBus) {}

  @Get(':chatId/summary')
  @RequireScope('chats:read')
  @SelfAccess()
  @ApiOkResponse({
    type: ChatSummaryResponse,
    description: 'the latest summary of the chat or of its last call; 404 while there is none',
  })
  get(
    @Param('wid') wid: string,
    @Param('chatId') chatId: string,
    @CurrentPrincipal() principal: Principal,
  ): Promise<ChatSummaryResponse> {
    return this.queries.execute(
      new GetChatSummaryQuery(wid.toLowerCase(), pathId(chatId, 'Chat'), callerOf(principal)),
    );
  }
}
