import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When each API key was last used. Written by the request path (throttled), not by
 * events: a use is not a domain fact worth an event per request. Kept out of api_keys
 * so a rebuild of that projection does not forget it.
 */
export class ApiKeyUsage1764000004100 implements MigrationInterface {
  name = 'ApiKeyUsage1764000004100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE api_key_usage (key_id uuid PRIMARY KEY, last_used_at timestamptz NOT NULL)`);
    await q.query(`ALTER TABLE api_keys DROP COLUMN last_used_at`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz`);
    await q.query(`DROP TABLE api_key_usage`);
  }
}
