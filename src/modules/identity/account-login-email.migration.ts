import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Accounts by the email they registered with (`registered_email`, compared lower-cased):
 * the password sign-in's lookup (`FindAccountsByRegisteredEmailQuery`), which the oauth
 * feature made on a table of its own fed by AccountRegistered before.
 */
export class AccountLoginEmail1764000010300 implements MigrationInterface {
  name = 'AccountLoginEmail1764000010300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX IF NOT EXISTS accounts_registered_email ON accounts (lower(registered_email))
        WHERE registered_email IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS accounts_registered_email`);
  }
}
