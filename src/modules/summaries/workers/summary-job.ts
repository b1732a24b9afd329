import type { SummaryTrigger } from '../domain/summary.events';

export const SUMMARIES_QUEUE = 'summaries';

/** A summary job: what triggered it, and where, so the worker waits for the read models to reach it. */
export interface SummaryJob {
  workspaceId: string;
  trigger: SummaryTrigger;
  /** The chat (every trigger but an assignment's completion, which names its chats through summary_chats). */
  chatId: number | null;
  /** `idle`: the chat's last message, a quiet period old; a newer one makes the job stale. */
  messageId?: number;
  /** `assignment_completed`. */
  assignmentId?: number;
  /** `call_completed`: the call as CallCompleted tells it. */
  call?: { callSid: string; durationSeconds: number; outcome: string; completedAt: string };
  triggerEvent: { id: string; type: string; commit: string; prepare: string };
  correlationId: string;
}

/**
 * Model errors the job retries (429, 5xx, timeouts) before it falls back to the digest:
 * three attempts, 0.5 s then 1 s apart. Other failures (the database) use the same budget
 * and then stay failed for an operator, as every queue's jobs do.
 */
export const SUMMARY_JOB_OPTIONS = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 500 },
} as const;

/**
 * A chat's idle job, added by IdleSummarySweep for the chat's last message once it is a
 * quiet period old: its id is the chat's and the message's, so the sweeps that find the
 * chat again before its summary is projected add nothing.
 */
export const idleJobId = (chatId: number, messageId: number): string =>
  `idle-chat-${chatId}-message-${messageId}`;
