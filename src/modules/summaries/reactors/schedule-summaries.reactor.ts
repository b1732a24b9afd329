import { Injectable } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import type { JobsOptions, Queue } from 'bullmq';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { jobIdFor, Reactor, ReactorHandler } from '../../../core/reactors/reactor';
import type { CallCompleted, ChatUpdated } from '../../messaging';
import type { AssignmentEvent } from '../../work';
import { SUMMARIES_QUEUE, SUMMARY_JOB_OPTIONS, SummaryJob } from '../workers/summary-job';

type AssignmentCompleted = Extract<AssignmentEvent, { type: 'AssignmentCompleted' }>;
type Trigger = ChatUpdated | CallCompleted | AssignmentCompleted;

/**
 * The moments a chat is summarised at once, as jobs on the `summaries` queue, one per
 * event: a chat paused (ChatUpdated with `paused: true`), an assignment completed (its
 * chats), a call completed. A chat gone quiet is found by IdleSummarySweep instead, so a
 * message costs this reactor nothing: it does not read messages at all.
 */
@Injectable()
@Reactor({
  name: 'summaries-schedule',
  eventTypes: ['ChatUpdated', 'CallCompleted', 'AssignmentCompleted'],
})
export class ScheduleSummariesReactor implements ReactorHandler {
  constructor(@InjectQueue(SUMMARIES_QUEUE) private readonly queue: Queue<SummaryJob>) {}

  async react(stored: StoredEvent): Promise<void> {
    await this.reactBatch([stored]);
  }

  /** The batch's jobs in one Redis call, in event order. */
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
