import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `accounts.email_verified`: false once an account changed its email itself (PUT /me), so
 * that address no longer finds invitations. Accounts that already did so on the PostgreSQL
 * store are marked from their events; on EventStoreDB, `projections rebuild` fills it.
 */
export class AccountEmailVerified1764000006300 implements MigrationInterface {
  name = 'AccountEmailVerified1764000006300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE accounts ADD COLUMN email_verified boolean NOT NULL DEFAULT true`);
    await q.query(
      `UPDATE accounts a SET email_verified = false WHERE EXISTS (
         SELECT 1 FROM events e WHERE e.stream_name = 'account-' || a.uuid
           AND e.type = 'AccountUpdated' AND e.data->'changes' ? 'email')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE accounts DROP COLUMN email_verified`);
  }
}
