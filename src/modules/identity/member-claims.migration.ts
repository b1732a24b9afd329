import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Member email, phone and externalId moved from identity's claim streams onto core claims
 * (domain/member-claims.ts). On PostgreSQL those are rows of `claims`, so every active
 * member's values are claimed here, from the members read model (its values are the ones
 * the member streams carry; archived members hold none). The old claim streams stay in
 * the event store as history, no longer read. Idempotent: a row already there is kept.
 * On EventStoreDB nothing moves: the member kinds keep reading and writing the old streams.
 */
export class MemberClaims1764000006400 implements MigrationInterface {
  name = 'MemberClaims1764000006400';

  async up(q: QueryRunner): Promise<void> {
    for (const [kind, column] of [
      ['member_email', 'email'],
      ['member_phone', 'phone'],
      ['member_external_id', 'external_id'],
    ]) {
      await q.query(
        `INSERT INTO claims (scope, kind, value_hash, owner)
         SELECT workspace_id::text, $1, encode(sha256(convert_to(${column}, 'UTF8')), 'hex'), 'member-' || id
           FROM members WHERE status <> 'archived' AND ${column} IS NOT NULL AND ${column} <> ''
         ON CONFLICT (scope, kind, value_hash) DO NOTHING`,
        [kind],
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM claims WHERE kind IN ('member_email', 'member_phone', 'member_external_id')`);
  }
}
