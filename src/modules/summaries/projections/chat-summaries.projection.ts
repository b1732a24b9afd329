import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';
import { SUMMARY_EVENT_TYPES, SummaryEvent } from '../domain/summary.events';
import { ChatSummaryEntity } from './summaries.entities';

/** chat_summaries: the latest summary of each chat, chat or call (events arrive in order, so the last one wins). */
@Injectable()
@Projection({ name: 'chat-summaries', eventTypes: SUMMARY_EVENT_TYPES, tables: ['chat_summaries'] })
export class ChatSummariesProjection implements ProjectionHandler {
  async handle(stored: StoredEvent, em: EntityManager): Promise<void> {
    const event = { type: stored.type, data: stored.data } as SummaryEvent;
    const d = event.data;
    await em.getRepository(ChatSummaryEntity).upsert(
      {
        chatId: d.chatId,
        workspaceId: d.workspaceId,
        kind: event.type === 'CallSummarized' ? 'call' : 'chat',
        trigger: d.trigger,
        text: d.text,
        source: d.source,
        model: d.model,
        fallbackReason: d.fallbackReason,
        channel: d.channel,
        workflowId: d.workflowId,
        workflowUuid: d.workflowUuid,
        participants: d.participants,
        messageCount: d.messageCount,
        inboundCount: d.inboundCount,
        outboundCount: d.outboundCount,
        firstMessageAt: d.firstMessageAt ? new Date(d.firstMessageAt) : null,
        lastMessageAt: d.lastMessageAt ? new Date(d.lastMessageAt) : null,
        call: event.type === 'CallSummarized' ? event.data.call : null,
        summarizedAt: new Date(d.summarizedAt),
        eventId: stored.id,
      },
      ['chatId'],
    );
  }
}
