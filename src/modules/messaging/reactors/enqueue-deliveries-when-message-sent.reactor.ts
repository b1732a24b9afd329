import { Injectable } from '@nestjs/common';
import { getQueueToken } from '@nestjs/bullmq';
import { ModuleRef } from '@nestjs/core';
import type { Queue } from 'bullmq';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { jobIdFor, Reactor, ReactorHandler } from '../../../core/reactors/reactor';
import type { MessageSent } from '../domain/chat.events';
import { DeliveryJob, QUEUE_OF_CHANNEL } from '../workers/delivery-job';

/**
 * MessageSent → one job per recipient on the channel's queue (sms, email, web-chat), with
 * a job id from the event and the recipient, so a replay enqueues nothing twice. A
 * delivery held by quiet hours (`scheduledFor`) is a delayed job, due at that time. A batch
 * of events is enqueued in one addBulk per queue.
 */
@Injectable()
@Reactor({ name: 'messaging-deliveries', eventTypes: ['MessageSent'] })
export class EnqueueDeliveriesWhenMessageSentReactor implements ReactorHandler {
  constructor(private readonly modules: ModuleRef) {}

  react(stored: StoredEvent): Promise<void> {
    return this.reactBatch([stored]);
  }

  /** A batch's jobs in one addBulk per queue: one Redis round trip for the batch, not one per message. */
  async reactBatch(events: readonly StoredEvent[]): Promise<void> {
    const now = Date.now();
    const byQueue = new Map<string, Parameters<Queue<DeliveryJob>['addBulk']>[0]>();
    for (const stored of events) {
      const event = stored as unknown as StoredEvent<'MessageSent', MessageSent['data']>;
      const name = QUEUE_OF_CHANNEL[event.data.channel];
      if (!name) continue;
      const delayOf = (memberId: number): number => {
        const at = event.data.scheduledFor?.[String(memberId)];
        return at === undefined ? 0 : Math.max(0, Date.parse(at) - now);
      };
      const jobs = byQueue.get(name) ?? [];
      byQueue.set(name, jobs);
      for (const recipientMemberId of event.data.recipientMemberIds) {
        const delay = delayOf(recipientMemberId);
        jobs.push({
          name: 'deliver',
          data: {
            workspaceId: event.data.workspaceId,
            chatId: event.data.chatId,
            messageId: event.data.messageId,
            recipientMemberId,
            correlationId: stored.metadata.correlationId,
            causationId: stored.id,
          },
          opts: {
            jobId: jobIdFor(stored, `recipient-${recipientMemberId}`),
            ...(delay > 0 ? { delay } : {}),
          },
        });
      }
    }
    for (const [name, jobs] of byQueue) {
      const queue = this.modules.get<Queue<DeliveryJob>>(getQueueToken(name), { strict: false });
      await queue.addBulk(jobs);
    }
  }
}
