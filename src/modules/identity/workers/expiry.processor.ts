import { Processor, WorkerHost } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { requestContext, SYSTEM_ACTOR } from '../../../core/cqrs/request-context';
import { invitationDecider } from '../domain/invitation';
import { memberTokenDecider } from '../domain/member-token';
import { invitationStream, memberTokenStream } from '../domain/member.events';

export const EXPIRY_QUEUE = 'identity-expiry';

interface Trace {
  workspaceId: string;
  /** Of the event that scheduled the job; the outcome's events carry both. */
  correlationId: string;
  causationId: string;
}

export type ExpiryJob =
  | ({ kind: 'invitation'; invitationId: string } & Trace)
  | ({ kind: 'member-token'; tokenId: string } & Trace);

/**
 * Runs when an invitation or member token lapses (scheduled by ExpireWhenLapsedReactor)
 * and records it through the normal command path: load the stream, decide, append.
 * The deciders make it idempotent (nothing when already accepted, revoked or expired,
 * so a job run twice appends once) and refuse a job that runs early, which BullMQ
 * then retries with backoff. Processors consume only where ROLE is not `api`.
 */
@Processor(EXPIRY_QUEUE)
export class ExpiryProcessor extends WorkerHost {
  constructor(private readonly repo: EventSourcedRepository) {
    super();
  }

  async process(job: Job<ExpiryJob>): Promise<{ appended: string[] }> {
    const data = job.data;
    const ctx = {
      requestId: data.correlationId,
      causationId: data.causationId,
      actor: SYSTEM_ACTOR,
      appended: [],
    };
    return requestContext.run(ctx, async () => {
      const now = new Date().toISOString();
      const { events } = await this.expire(data, now);
      return { appended: events.map((e) => e.type) };
    });
  }

  private expire(data: ExpiryJob, now: string): Promise<{ events: { type: string }[] }> {
    switch (data.kind) {
      case 'invitation':
        return this.repo.handle({
          streamName: invitationStream(data.invitationId),
          workspaceId: data.workspaceId,
          decider: invitationDecider,
          command: { type: 'ExpireInvitation', invitationId: data.invitationId, now },
        });
      case 'member-token':
        return this.repo.handle({
          streamName: memberTokenStream(data.tokenId),
          workspaceId: data.workspaceId,
          decider: memberTokenDecider,
          command: { type: 'ExpireMemberToken', tokenId: data.tokenId, now },
        });
    }
  }
}
