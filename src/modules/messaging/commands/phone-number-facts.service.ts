import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AuthCache } from '../../../core/auth/auth-cache';
import { queryPrepared } from '../../../core/database/prepared';
import { CheckpointFeed } from '../../../core/projections/checkpoint-feed';

/**
 * The service's phone numbers as the SMS paths read them, once per number and
 * AUTH_CACHE_TTL_MS (1 s) at most rather than per text: the workspace number an inbound
 * text was sent to, and the number an outbound SMS goes out from. Kept in core's AuthCache,
 * which every process empties once a projection batch holding a PhoneNumberUpdated or
 * PhoneNumberDeleted commits (this process at once, the others through the checkpoint
 * NOTIFY, milliseconds later): a number changed or deleted through the API is not used
 * after the change's response and that notice. A number not found is never kept, so a new
 * one answers at once (and a deleted sender fails `no_sender`).
 */
@Injectable()
export class PhoneNumberFacts {
  constructor(
    private readonly db: DataSource,
    private readonly cache: AuthCache,
    feed: CheckpointFeed,
  ) {
    feed.invalidateAuthOn((e) => e.type === 'PhoneNumberUpdated' || e.type === 'PhoneNumberDeleted');
  }

  /** The workspace number `number` (E.164), of whichever workspace holds it, with its signup role. */
  byNumber(
    number: string,
  ): Promise<{ id: number; workspaceId: string; signupRoleId: number | null } | undefined> {
    return this.cache.get(`messaging-number:${number}`, async () => {
      const [row] = await queryPrepared<{ id: number; workspace_id: string; signup_role_id: number | null }>(
        this.db,
        `SELECT id, workspace_id, signup_role_id FROM phone_numbers WHERE number = $1`,
        [number],
      );
      return row
        ? { id: row.id, workspaceId: row.workspace_id, signupRoleId: row.signup_role_id }
        : undefined;
    });
  }

  /** The number of the workspace's phone number `id`. */
  numberOf(workspaceId: string, id: number | null): Promise<string | undefined> {
    if (id === null) return Promise.resolve(undefined);
    return this.cache.get(`messaging-sender:${workspaceId}:${id}`, async () => {
      const [row] = await queryPrepared<{ number: string | null }>(
        this.db,
        `SELECT number FROM phone_numbers WHERE workspace_id = $1 AND id = $2`,
        [workspaceId, id],
      );
      return row?.number ?? undefined;
    });
  }
}
