import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The api_keys read model, exactly as the shipped Identity1764000002000 created it before
 * each feature owned its tables. Its timestamp puts it right after that migration, before
 * ApiKeyUsage1764000004100 alters the table, so a fresh database gets the same schema as
 * before; on a database where Identity1764000002000 already created it, every statement
 * is a no-op (IF NOT EXISTS), which is why it may run after later migrations there.
 */
export class ApiKeysTable1764000002020 implements MigrationInterface {
  name = 'ApiKeysTable1764000002020';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS api_keys (
        id uuid PRIMARY KEY,
        account_uuid uuid NOT NULL,
        name text NOT NULL,
        prefix text NOT NULL UNIQUE,
        secret_hash text NOT NULL,
        scopes text[] NOT NULL,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz,
        last_used_at timestamptz
      )`);
    await q.query(`CREATE INDEX IF NOT EXISTS api_keys_account ON api_keys (account_uuid)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE api_keys`);
  }
}
