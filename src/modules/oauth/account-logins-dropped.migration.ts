import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `oauth_account_logins` (email → account, from identity's AccountRegistered) is gone: the
 * password sign-in asks identity for the accounts registered with an email
 * (FindAccountsByRegisteredEmailQuery, over `accounts.registered_email`, the same address),
 * so a signup no longer causes a transaction of the oauth projection. `down` brings the
 * table back empty; its rows were a copy of `accounts.registered_email`.
 */
export class OAuthAccountLoginsDropped1764000010310 implements MigrationInterface {
  name = 'OAuthAccountLoginsDropped1764000010310';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS oauth_account_logins`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE oauth_account_logins (
      account_uuid uuid PRIMARY KEY,
      email text NOT NULL,
      created_at timestamptz NOT NULL)`);
    await q.query(`CREATE INDEX oauth_account_logins_email ON oauth_account_logins (lower(email))`);
  }
}
