import { Inject, OnApplicationBootstrap } from '@nestjs/common';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { requestContext, SYSTEM_ACTOR } from '../../../core/cqrs/request-context';
import { ReplyError, ReplyJob, ReplyOutcome, ReplyService } from '../replies/reply.service';
import { ASSISTANT_QUEUE } from './reply-job';

/**
 * Runs a reply as the system, in a context carrying its cause's correlation id. A
 * retryable failure (429, 5xx, timeout, unreachable tool server) is thrown while attempts
 * remain, so BullMQ retries with backoff; the last one, or a failure that cannot pass,
 * is recorded as AssistantReplyFailed and nothing is sent.
 */
@Processor(ASSISTANT_QUEUE)
export class ReplyProcessor extends WorkerHost implements OnApplicationBootstrap {
  constructor(
    private readonly replies: ReplyService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  onApplicationBootstrap(): void {
    this.worker.concurrency = this.config.assistantConcurrency;
  }

  async process(job: Job<ReplyJob>): Promise<ReplyOutcome> {
    const attempt = job.attemptsMade + 1;
    const last = attempt >= (job.opts.attempts ?? 1);
    const ctx = {
      requestId: job.data.correlationId,
      causationId: job.data.causationId,
      actor: SYSTEM_ACTOR,
      appended: [],
    };
    return requestContext.run(ctx, async () => {
      try {
        return await this.replies.reply(job.data, attempt);
      } catch (error) {
        const failure =
          error instanceof ReplyError
            ? error
            : new ReplyError('internal_error', 'the reply could not be completed', true);
        if (failure.retryable && !last) throw error;
        await this.replies.recordFailure(job.data, failure, attempt);
        return { status: 'failed', reason: failure.reason };
      }
    });
  }
}
