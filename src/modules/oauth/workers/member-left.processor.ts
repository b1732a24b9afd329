import { Processor, WorkerHost } from '@nestjs/bullmq';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import type { Job } from 'bullmq';
import { DataSource } from 'typeorm';
import { requestContext, SYSTEM_ACTOR } from '../../../core/cqrs/request-context';
import { ListMembershipsOfAccountQuery } from '../../identity';
import { RevokeOAuthGrantCommand } from '../commands/oauth-grant.commands';

export const MEMBER_LEFT_QUEUE = 'oauth-member-left';

/** A member with an account left a workspace (identity's MemberArchived). */
export interface MemberLeftJob {
  workspaceId: string;
  accountUuid: string;
  memberId: number;
  leftAt: string;
  /** Of the archive; the revocations carry both, so an auditor follows the archive to them. */
  correlationId: string;
  causationId: string;
}

/**
 * Ends the OAuth grants of a member who left the workspace (scheduled by
 * RevokeGrantsWhenMemberLeavesReactor): every live grant the account holds there is
 * revoked through the grant's decider, `OAuthGrantRevoked` with reason `member_left` in
 * the grant's own stream. A grant approved after the departure (the person rejoined and
 * consented again) is left alone while the account is a member again, so a late job or a
 * replay never ends a newer grant; one approved concurrently with the departure, by an
 * account that is no member now, is revoked too. The decider appends nothing for a grant
 * already revoked, so a job run twice revokes once. Processors consume only where ROLE is
 * not `api`.
 */
@Processor(MEMBER_LEFT_QUEUE)
export class MemberLeftProcessor extends WorkerHost {
  constructor(
    private readonly db: DataSource,
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {
    super();
  }

  async process(job: Job<MemberLeftJob>): Promise<{ revoked: string[] }> {
    const data = job.data;
    const ctx = {
      requestId: data.correlationId,
      causationId: data.causationId,
      actor: SYSTEM_ACTOR,
      appended: [],
    };
    return requestContext.run(ctx, async () => {
      const grants = (await this.db.query(
        `SELECT id, created_at <= $3::timestamptz AS before_leaving
           FROM oauth_grants
          WHERE account_uuid = $1 AND workspace_id = $2 AND revoked_at IS NULL
          ORDER BY created_at, id`,
        [data.accountUuid, data.workspaceId, data.leftAt],
      )) as { id: string; before_leaving: boolean }[];
      let memberAgain: boolean | undefined;
      const revoked: string[] = [];
      for (const grant of grants) {
        if (!grant.before_leaving) {
          memberAgain ??= (
            await this.queries.execute<ListMembershipsOfAccountQuery, string[]>(
              new ListMembershipsOfAccountQuery(data.accountUuid),
            )
          ).includes(data.workspaceId);
          if (memberAgain) continue;
        }
        await this.commands.execute(new RevokeOAuthGrantCommand(grant.id, 'member_left'));
        revoked.push(grant.id);
      }
      return { revoked };
    });
  }
}
