/**
 * The summaries of a chat: one stream per chat (`summary-chat-<chatId>`), holding every
 * summary written for it, in order. Plain typed objects; this file loads nothing of the
 * feature's internals, so index.ts can export it.
 */
export const summaryStream = (chatId: number): string => `summary-chat-${chatId}`;

/** What made the summary: the chat went quiet, was paused, its assignment completed, or a call ended. */
export const SUMMARY_TRIGGERS = ['idle', 'paused', 'assignment_completed', 'call_completed'] as const;
export type SummaryTrigger = (typeof SUMMARY_TRIGGERS)[number];

/** `model`: written by the language model; `digest`: the plain digest (ASSISTANT_PROVIDER=none, or the model failed). */
export type SummarySource = 'model' | 'digest';

export interface SummaryParticipant {
  memberId: number;
  role: string;
  name: string | null;
}

/** What every summary says, chat or call. */
export interface SummaryFacts {
  chatId: number;
  chatUuid: string;
  workspaceId: string;
  channel: string;
  /** The chat's member (role user). */
  memberId: number;
  participants: SummaryParticipant[];
  workflowId: number | null;
  workflowUuid: string | null;
  assignmentId: number | null;
  trigger: SummaryTrigger;
  /** What triggered it, unique in the chat's summaries (so a replayed job writes nothing twice). */
  key: string;
  text: string;
  source: SummarySource;
  /** The model that wrote it (source `model`). */
  model: string | null;
  /** Why a digest stands where the model's text was asked for (the model's error after retries); null otherwise. */
  fallbackReason: string | null;
  messageCount: number;
  /** Messages from the chat's people (user messages), and to them (assistant, operator, system). */
  inboundCount: number;
  outboundCount: number;
  firstMessageAt: string | null;
  lastMessageAt: string | null;
  lastMessageId: number | null;
  summarizedAt: string;
}

export interface ChatSummarized {
  type: 'ChatSummarized';
  data: SummaryFacts;
}

export interface CallFacts {
  callSid: string;
  durationSeconds: number;
  outcome: string;
  completedAt: string;
}

export interface CallSummarized {
  type: 'CallSummarized';
  data: SummaryFacts & { call: CallFacts };
}

export type SummaryEvent = ChatSummarized | CallSummarized;
export const SUMMARY_EVENT_TYPES: readonly SummaryEvent['type'][] = ['ChatSummarized', 'CallSummarized'];
