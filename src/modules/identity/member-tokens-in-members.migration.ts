import { MigrationInterface, QueryRunner } from 'typeorm';

/** An event's position, comparable with a checkpoint's (numeric pair). */
const AT = `(e.transaction_id::text::numeric, e.global_position::numeric)`;

/**
 * The members projection now writes `member_tokens` too (MemberTokenIssued, Revoked,
 * Expired), in the transaction of the signup's member and account; the `member-tokens`
 * projection is gone. From here on the members projection's checkpoint covers the tokens:
 *
 * - token events the members projection has passed but `member-tokens` had not (its
 *   checkpoint behind) are applied here, as that projection applied them;
 * - those `member-tokens` had passed but members not yet (its checkpoint ahead) the members
 *   projection applies again: an insert that keeps the row there (ON CONFLICT DO NOTHING)
 *   and updates that set the same value, so nothing changes twice.
 *
 * The old checkpoint row is removed. Idempotent; `down` restores nothing (the old code
 * would replay the token events from the start into rows already there, which its handlers
 * also allow).
 */
export class MemberTokensInMembers1764000010320 implements MigrationInterface {
  name = 'MemberTokensInMembers1764000010320';

  async up(q: QueryRunner): Promise<void> {
    const range = `
      FROM events e
      JOIN subscriber_checkpoints m ON m.name = 'members'
      LEFT JOIN subscriber_checkpoints t ON t.name = 'member-tokens'
     WHERE ${AT} > (coalesce(t.position_commit, 0), coalesce(t.position_prepare, 0))
       AND ${AT} <= (m.position_commit, m.position_prepare)`;
    await q.query(
      `INSERT INTO member_tokens (id, prefix, secret_hash, workspace_id, member_id, account_uuid, created_at, expires_at)
       SELECT (e.data->>'tokenId')::uuid, e.data->>'prefix', e.data->>'secretHash', (e.data->>'workspaceId')::uuid,
              (e.data->>'memberId')::int, (e.data->>'accountUuid')::uuid, (e.data->>'issuedAt')::timestamptz,
              (e.data->>'expiresAt')::timestamptz
       ${range} AND e.type = 'MemberTokenIssued'
       ON CONFLICT (id) DO NOTHING`,
    );
    await q.query(
      `UPDATE member_tokens mt SET revoked_at = (e.data->>'revokedAt')::timestamptz
       ${range} AND e.type = 'MemberTokenRevoked'
         AND mt.id = (e.data->>'tokenId')::uuid`,
    );
    await q.query(
      `UPDATE member_tokens mt SET expired_at = (e.data->>'expiredAt')::timestamptz
       ${range} AND e.type = 'MemberTokenExpired' AND mt.id = (e.data->>'tokenId')::uuid`,
    );
    await q.query(`DELETE FROM subscriber_checkpoints WHERE name = 'member-tokens'`);
  }

  async down(): Promise<void> {
    // Nothing to undo: the rows stay, and the old projection starts over from the beginning.
  }
}
