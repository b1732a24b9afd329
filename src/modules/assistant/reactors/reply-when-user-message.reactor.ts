import { Inject, Injectable } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { Reactor, ReactorHandler } from '../../../core/reactors/reactor';
import type { MessageReceived } from '../../messaging';
import { LANGUAGE_MODEL, LanguageModel } from '../model/language-model.port';
import type { ReplyJob } from '../replies/reply.service';
import { ASSISTANT_QUEUE } from '../workers/reply-job';

/**
 * A member's message (API, SMS, email, web chat, transcript) → one reply job, delayed by
 * ASSISTANT_DEBOUNCE_MS. Its id is the chat's and the message's, so a replay adds nothing;
 * the job of an earlier message of a burst finds a later one and leaves it the answer,
 * so a burst gets one reply. Whether the chat is `ai` and not paused is the job's check
 * (on the chat's stream when it runs). Under ASSISTANT_PROVIDER=none nothing is enqueued,
 * nor for a message older than ASSISTANT_REPLY_WINDOW_MINUTES (history read again).
 */
@Injectable()
@Reactor({ name: 'assistant-replies', eventTypes: ['MessageReceived'] })
export class ReplyWhenUserMessageReactor implements ReactorHandler {
  constructor(
    @InjectQueue(ASSISTANT_QUEUE) private readonly queue: Queue<ReplyJob>,
    @Inject(LANGUAGE_MODEL) private readonly model: LanguageModel,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async react(stored: StoredEvent): Promise<void> {
    return this.reactBatch([stored]);
  }

  async reactBatch(events: readonly StoredEvent[]): Promise<void> {
    if (!this.model.available) return;
    // A first deployment reads every message ever received, and a replay reads them again:
    // old unanswered chats are for a human, not for a reply out of the blue.
    const oldest = Date.now() - this.config.assistantReplyWindowMinutes * 60_000;
    const recent = events.filter((e) => Date.parse(e.metadata.occurredAt) >= oldest);
    const jobs = recent.map((stored) => {
      const data = stored.data as MessageReceived['data'];
      return {
        name: 'reply',
        data: {
          workspaceId: data.workspaceId,
          chatId: data.chatId,
          replyTo: data.messageId,
          memberId: data.memberId,
          correlationId: stored.metadata.correlationId,
          causationId: stored.id,
        },
        opts: {
          jobId: `reply-chat-${data.chatId}-message-${data.messageId}`,
          delay: this.config.assistantDebounceMs,
          attempts: this.config.assistantAttempts,
          backoff: { type: 'exponential', delay: this.config.assistantBackoffMs },
        },
      };
    });
    if (jobs.length) await this.queue.addBulk(jobs);
  }
}
