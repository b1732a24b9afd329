import { Injectable } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { jobIdFor, Reactor, ReactorHandler } from '../../../core/reactors/reactor';
import type { InvitationCreated, MemberTokenIssued } from '../domain/member.events';
import { EXPIRY_QUEUE, ExpiryJob } from '../workers/expiry.processor';

/**
 * The pattern every reactor follows (DESIGN.md, "Shape"): a checkpointed subscriber
 * that turns an event into a BullMQ job and does nothing else. The job id comes from the
 * event id (jobIdFor), so replaying the reactor from its first event enqueues nothing
 * twice; the worker then appends the outcome as events, through the feature's decider.
 *
 * Here: every invitation and member token is created with an expiry, so each gets one
 * job delayed until that instant; the worker records the lapse (InvitationExpired,
 * MemberTokenExpired) unless it was accepted or revoked first.
 */
@Injectable()
@Reactor({ name: 'identity-expiry', eventTypes: ['InvitationCreated', 'MemberTokenIssued'] })
export class ExpireWhenLapsedReactor implements ReactorHandler {
  constructor(@InjectQueue(EXPIRY_QUEUE) private readonly queue: Queue<ExpiryJob>) {}

  react(stored: StoredEvent): Promise<void> {
    return this.reactBatch([stored]);
  }

  /**
   * A batch's jobs in one addBulk: one Redis round trip for the batch (a run of signups,
   * a token each), not one per event; the same jobs and ids as one by one.
   */
  async reactBatch(events: readonly StoredEvent[]): Promise<void> {
    const now = Date.now();
    await this.queue.addBulk(
      events.map((stored) => {
        const event = { type: stored.type, data: stored.data } as InvitationCreated | MemberTokenIssued;
        // The outcome's events share the cause's correlation id: an auditor follows one request to its lapse.
        const trace = {
          workspaceId: stored.metadata.workspaceId,
          correlationId: stored.metadata.correlationId,
          causationId: stored.id,
        };
        const job: ExpiryJob =
          event.type === 'InvitationCreated'
            ? { kind: 'invitation', invitationId: event.data.invitationId, ...trace }
            : { kind: 'member-token', tokenId: event.data.tokenId, ...trace };
        return {
          name: `expire-${job.kind}`,
          data: job,
          opts: {
            jobId: jobIdFor(stored),
            // A replay long after the lapse adds a job that runs at once and finds nothing to do.
            delay: Math.max(0, Date.parse(event.data.expiresAt) - now),
          },
        };
      }),
    );
  }
}
