import { definePublicEvent } from '../../../core/events/public-events';
import type { CallSummarized, ChatSummarized, SummaryFacts, SummaryParticipant } from './summary.events';

/** The `summary` block of chat:summary and call:summary. */
export interface SummaryBlock {
  text: string;
  source: 'model' | 'digest';
  trigger: SummaryFacts['trigger'];
  messageCount: number;
  inboundCount: number;
  outboundCount: number;
  participants: SummaryParticipant[];
  firstMessageAt: string | null;
  lastMessageAt: string | null;
  summarizedAt: string;
}

/**
 * The blocks every summary carries. `chat.channel` and `workflow.uuid` are what the
 * chat:summary rule filters (`channel`, `workflowUuid`) compare; `workflow` is null for a
 * chat that runs none.
 */
export interface ChatSummaryPayload {
  chat: { id: number; uuid: string; channel: string; memberId: number; workflowId: number | null };
  workflow: { id: number; uuid: string } | null;
  summary: SummaryBlock;
}

export interface CallSummaryPayload extends ChatSummaryPayload {
  call: { chatId: number; callSid: string; durationSeconds: number; outcome: string; completedAt: string };
}

function blocks(d: SummaryFacts): ChatSummaryPayload {
  return {
    chat: {
      id: d.chatId,
      uuid: d.chatUuid,
      channel: d.channel,
      memberId: d.memberId,
      workflowId: d.workflowId,
    },
    workflow: d.workflowId !== null && d.workflowUuid ? { id: d.workflowId, uuid: d.workflowUuid } : null,
    summary: {
      text: d.text,
      source: d.source,
      trigger: d.trigger,
      messageCount: d.messageCount,
      inboundCount: d.inboundCount,
      outboundCount: d.outboundCount,
      participants: d.participants,
      firstMessageAt: d.firstMessageAt,
      lastMessageAt: d.lastMessageAt,
      summarizedAt: d.summarizedAt,
    },
  };
}

/** chat:summary (SPEC "Events": chat summary available, any channel; `channel` and `workflowUuid` filters). */
export const CHAT_SUMMARY = definePublicEvent<'chat:summary', ChatSummaryPayload, ChatSummarized>({
  name: 'chat:summary',
  description:
    'chat summary available, any channel (when it goes idle, is paused, or its assignment completes)',
  feature: 'summaries',
  sources: ['ChatSummarized'],
  payloadFields: ['chat', 'workflow', 'summary'],
  payload: ({ data }) => blocks(data),
});

/** call:summary (SPEC "Events": phone call summary available), after call:completed. */
export const CALL_SUMMARY = definePublicEvent<'call:summary', CallSummaryPayload, CallSummarized>({
  name: 'call:summary',
  description: 'phone call summary available (after call:completed)',
  feature: 'summaries',
  sources: ['CallSummarized'],
  payloadFields: ['chat', 'workflow', 'summary', 'call'],
  payload: ({ data }) => ({
    ...blocks(data),
    call: {
      chatId: data.chatId,
      callSid: data.call.callSid,
      durationSeconds: data.call.durationSeconds,
      outcome: data.call.outcome,
      completedAt: data.call.completedAt,
    },
  }),
});

export const SUMMARIES_PUBLIC_EVENTS = [CHAT_SUMMARY, CALL_SUMMARY];
