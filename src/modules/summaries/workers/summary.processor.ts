import { Processor, WorkerHost } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import { requestContext, SYSTEM_ACTOR } from '../../../core/cqrs/request-context';
import { SUMMARIES_QUEUE, SummaryJob } from './summary-job';
import { SummaryOutcome, SummaryWriter } from './summary-writer.service';

/** Runs summary jobs as the system, correlated with the event that triggered them. */
@Processor(SUMMARIES_QUEUE)
export class SummaryProcessor extends WorkerHost {
  constructor(private readonly writer: SummaryWriter) {
    super();
  }

  process(job: Job<SummaryJob>): Promise<SummaryOutcome[]> {
    const ctx = {
      requestId: job.data.correlationId,
      causationId: job.data.triggerEvent.id,
      actor: SYSTEM_ACTOR,
      appended: [],
    };
    const attempt = job.attemptsMade + 1;
    return requestContext.run(ctx, () =>
      this.writer.run(job.data, { attempt, final: attempt >= (job.opts.attempts ?? 1) }),
    );
  }
}
