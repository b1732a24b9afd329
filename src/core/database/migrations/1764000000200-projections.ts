import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Checkpoints of projections and reactors. Positions are stored as two numerics so
 * row comparison `(commit, prepare) >= (...)` works for both event-store adapters.
 */
export class Projections1764000000200 implements MigrationInterface {
  name = 'Projections1764000000200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE subscriber_checkpoints (
        name text PRIMARY KEY,
        kind text NOT NULL CHECK (kind IN ('projection', 'reactor', 'rebuild')),
        position_commit numeric(20, 0) NOT NULL,
        position_prepare numeric(20, 0) NOT NULL,
        events_handled bigint NOT NULL DEFAULT 0,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE subscriber_checkpoints`);
  }
}
