import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { NotFoundError } from '../../../core/http/domain-errors';
import { Caller, GetChatQuery } from '../../messaging';
import type { ChatSummaryResponse } from '../http/chat-summary.response';
import { ChatSummaryEntity } from '../projections/summaries.entities';

export class GetChatSummaryQuery {
  constructor(
    readonly workspaceId: string,
    readonly chatId: number,
    readonly caller: Caller,
  ) {}
}

/**
 * The latest summary of a chat, for whoever may read the chat: messaging's GetChatQuery
 * applies its rules first (chats:read, or taking part in the chat; any other chat is a
 * 404), then the summary read model answers, 404 while there is none.
 */
@QueryHandler(GetChatSummaryQuery)
export class GetChatSummaryHandler implements IQueryHandler<GetChatSummaryQuery, ChatSummaryResponse> {
  constructor(
    private readonly db: DataSource,
    private readonly queries: QueryBus,
  ) {}

  async execute(q: GetChatSummaryQuery): Promise<ChatSummaryResponse> {
    await this.queries.execute(new GetChatQuery(q.workspaceId, q.chatId, q.caller));
    const row = await this.db
      .getRepository(ChatSummaryEntity)
      .findOneBy({ chatId: q.chatId, workspaceId: q.workspaceId });
    if (!row) throw new NotFoundError('This chat has no summary yet');
    return {
      chatId: row.chatId,
      kind: row.kind,
      trigger: row.trigger,
      text: row.text,
      source: row.source,
      model: row.model,
      fallbackReason: row.fallbackReason,
      channel: row.channel,
      workflowId: row.workflowId,
      workflowUuid: row.workflowUuid,
      participants: row.participants,
      messageCount: row.messageCount,
      inboundCount: row.inboundCount,
      outboundCount: row.outboundCount,
      firstMessageAt: row.firstMessageAt?.toISOString() ?? null,
      lastMessageAt: row.lastMessageAt?.toISOString() ?? null,
      call: row.call,
      summarizedAt: row.summarizedAt.toISOString(),
    };
  }
}
