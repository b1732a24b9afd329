import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `accounts.registered_email` (the email the account was registered with) and
 * `accounts.email_verified` (whether `email` is still that one): an address the account set
 * itself through PUT /me is unproven and finds no invitations. Filled from the PostgreSQL
 * store's events; on EventStoreDB, `projections rebuild` fills them.
 */
export class AccountEmailVerified1764000006300 implements MigrationInterface {
  name = 'AccountEmailVerified1764000006300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE accounts ADD COLUMN registered_email text`);
    await q.query(`ALTER TABLE accounts ADD COLUMN email_verified boolean NOT NULL DEFAULT true`);
    await q.query(
      `UPDATE accounts a SET registered_email = (
         SELECT e.data->>'email' FROM events e
          WHERE e.stream_name = 'account-' || a.uuid AND e.type = 'AccountRegistered'
          ORDER BY e.stream_revision LIMIT 1)`,
    );
    await q.query(
      `UPDATE accounts SET email_verified = (registered_email IS NOT NULL AND registered_email = email)
        WHERE registered_email IS NOT NULL OR email IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE accounts DROP COLUMN email_verified, DROP COLUMN registered_email`);
  }
}
