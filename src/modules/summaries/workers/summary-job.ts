import type { JobsOptions } from 'bullmq';
import type { SummaryTrigger } from '../domain/summary.events';

export const SUMMARIES_QUEUE = 'summaries';

/** A summary job: what triggered it, and where, so the worker waits for the read models to reach it. */
export interface SummaryJob {
  workspaceId: string;
  trigger: SummaryTrigger;
  /** The chat (every trigger but an assignment's completion, which names its chats through summary_chats). */
  chatId: number | null;
  /** `idle`: the message that started the quiet period; a newer one makes the job stale. */
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
 * A chat's idle job: delayed by the quiet period and debounced per chat with BullMQ's
 * deduplication, so a chat holds one pending idle job whatever its traffic: a newer
 * message replaces the delayed job (`replace`), and one arriving while the job runs is
 * kept and queued once it ends (`keepLastIfActive`). The one gap BullMQ leaves (a message
 * while the job waits for a worker, its delay over) is closed by the worker: a stale idle
 * job hands over to the chat's newest message (SummaryWriter).
 */
export function idleJobOptions(
  workspaceId: string,
  chatId: number,
  jobId: string,
  delay: number,
): JobsOptions {
  return {
    ...SUMMARY_JOB_OPTIONS,
    jobId,
    delay: Math.max(0, delay),
    deduplication: { id: `idle-${workspaceId}-${chatId}`, replace: true, keepLastIfActive: true },
  };
}
