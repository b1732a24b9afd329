/**
 * The summaries feature's public surface: its event types (ChatSummarized,
 * CallSummarized on `summary-chat-<chatId>`) and the payloads of chat:summary and
 * call:summary. Everything else under modules/summaries is internal.
 */
export { summaryStream, SUMMARY_EVENT_TYPES, SUMMARY_TRIGGERS } from './domain/summary.events';
export type {
  CallSummarized,
  ChatSummarized,
  SummaryEvent,
  SummaryFacts,
  SummaryTrigger,
} from './domain/summary.events';
export { CALL_SUMMARY, CHAT_SUMMARY } from './domain/summaries.public-events';
export type { CallSummaryPayload, ChatSummaryPayload } from './domain/summaries.public-events';
