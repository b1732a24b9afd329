import { Inject, Injectable } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import type { JobsOptions, Queue } from 'bullmq';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { jobIdFor, Reactor, ReactorHandler } from '../../../core/reactors/reactor';
import type { CallCompleted, ChatUpdated, MessageReceived, MessageSent } from '../../messaging';
import type { AssignmentEvent } from '../../work';
import { idleJobOptions, SUMMARIES_QUEUE, SUMMARY_JOB_OPTIONS, SummaryJob } from '../workers/summary-job';

type AssignmentCompleted = Extract<AssignmentEvent, { type: 'AssignmentCompleted' }>;
type Trigger = MessageReceived | MessageSent | ChatUpdated | CallCompleted | AssignmentCompleted;

/**
 * The moments a chat is summarised, as jobs on the `summaries` queue:
 * - every message (either way) schedules the chat's idle summary CHAT_SUMMARY_IDLE_MINUTES
 *   later, debounced per chat (idleJobOptions: a newer message replaces the delayed job and
 *   restarts the wait), the job id from the message's event, so a replay adds nothing
 *   twice; the worker drops (hands over) a job that a newer message made stale;
 * - a chat paused (ChatUpdated with `paused: true`), an assignment completed (its chats),
 *   a call completed: at once, one job per event.
 */
@Injectable()
@Reactor({
  name: 'summaries-schedule',
  eventTypes: ['MessageReceived', 'MessageSent', 'ChatUpdated', 'CallCompleted', 'AssignmentCompleted'],
})
export class ScheduleSummariesReactor implements ReactorHandler {
  private readonly idleMs: number;

  constructor(
    @InjectQueue(SUMMARIES_QUEUE) private readonly queue: Queue<SummaryJob>,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.idleMs = Math.max(1, Math.round(config.chatSummaryIdleMinutes * 60_000));
  }

  async react(stored: StoredEvent): Promise<void> {
    await this.reactBatch([stored]);
  }

  /** The batch's jobs in one Redis call, in event order (a later message of a chat replaces an earlier one's job). */
  async reactBatch(events: readonly StoredEvent[]): Promise<void> {
    const jobs = events.flatMap((e) => this.jobFor(e) ?? []);
    if (jobs.length)
      await this.queue.addBulk(jobs.map((j) => ({ name: j.data.trigger, data: j.data, opts: j.opts })));
  }

  private jobFor(stored: StoredEvent): { data: SummaryJob; opts: JobsOptions } | null {
    const event = { type: stored.type, data: stored.data } as Trigger;
    const base = {
      workspaceId: stored.metadata.workspaceId,
      triggerEvent: {
        id: stored.id,
        type: stored.type,
        commit: stored.position.commit.toString(),
        prepare: stored.position.prepare.toString(),
      },
      correlationId: stored.metadata.correlationId,
    };
    const now = { ...SUMMARY_JOB_OPTIONS, jobId: jobIdFor(stored, 'summary') };
    switch (event.type) {
      case 'MessageReceived':
      case 'MessageSent':
        return {
          data: { ...base, trigger: 'idle', chatId: event.data.chatId, messageId: event.data.messageId },
          opts: idleJobOptions(event.data.workspaceId, event.data.chatId, now.jobId, this.idleMs),
        };
      case 'ChatUpdated':
        if (event.data.changes.paused !== true) return null;
        return { data: { ...base, trigger: 'paused', chatId: event.data.chatId }, opts: now };
      case 'CallCompleted': {
        const d = event.data;
        return {
          data: {
            ...base,
            trigger: 'call_completed',
            chatId: d.chatId,
            call: {
              callSid: d.callSid,
              durationSeconds: d.durationSeconds,
              outcome: d.outcome,
              completedAt: d.completedAt,
            },
          },
          opts: now,
        };
      }
      case 'AssignmentCompleted':
        return {
          data: {
            ...base,
            trigger: 'assignment_completed',
            chatId: null,
            assignmentId: event.data.assignmentId,
          },
          opts: now,
        };
    }
  }
}
