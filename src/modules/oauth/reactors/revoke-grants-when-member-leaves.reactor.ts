import { Injectable } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { jobIdFor, Reactor, ReactorHandler } from '../../../core/reactors/reactor';
import type { MemberEvent } from '../../identity';
import { MEMBER_LEFT_QUEUE, MemberLeftJob } from '../workers/member-left.processor';

type MemberArchived = Extract<MemberEvent, { type: 'MemberArchived' }>;

/**
 * A member leaving a workspace ends the OAuth grants its account holds there (the
 * pattern of README "A reactor and its worker"): identity's `MemberArchived` becomes one
 * job, its id from the event (a replay enqueues nothing twice), which MemberLeftProcessor
 * runs. Access tokens stop before that, at the archive itself: the bearer principal finds
 * no active membership. A member without an account (a contact) holds no grant.
 */
@Injectable()
@Reactor({ name: 'oauth-member-left', eventTypes: ['MemberArchived'] })
export class RevokeGrantsWhenMemberLeavesReactor implements ReactorHandler {
  constructor(@InjectQueue(MEMBER_LEFT_QUEUE) private readonly queue: Queue<MemberLeftJob>) {}

  react(stored: StoredEvent): Promise<void> {
    return this.reactBatch([stored]);
  }

  /** A batch's jobs in one addBulk; the same jobs and ids as one by one. */
  async reactBatch(events: readonly StoredEvent[]): Promise<void> {
    const jobs = [];
    for (const stored of events) {
      const { data } = { type: stored.type, data: stored.data } as MemberArchived;
      const accountUuid = data.member?.accountUuid;
      if (!accountUuid) continue;
      const job: MemberLeftJob = {
        workspaceId: data.workspaceId,
        accountUuid,
        memberId: data.memberId,
        leftAt: data.archivedAt,
        correlationId: stored.metadata.correlationId,
        causationId: stored.id,
      };
      jobs.push({ name: 'revoke-grants', data: job, opts: { jobId: jobIdFor(stored) } });
    }
    if (jobs.length) await this.queue.addBulk(jobs);
  }
}
