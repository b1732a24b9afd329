import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Uniqueness claims of the PostgreSQL event store (src/core/claims/postgres-claims.ts):
 * one row per (scope, kind, value) naming the owner stream, written in the transaction
 * that appends the owner's events. Values are stored as SHA-256 hashes (hex), so the key
 * stays small and no personal data sits in it.
 */
export class Claims1764000006000 implements MigrationInterface {
  name = 'Claims1764000006000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE claims (
        scope text NOT NULL,
        kind text NOT NULL,
        value_hash text NOT NULL,
        owner text NOT NULL,
        claimed_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (scope, kind, value_hash)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE claims`);
  }
}
