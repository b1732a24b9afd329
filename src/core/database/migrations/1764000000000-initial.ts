import { MigrationInterface, QueryRunner } from 'typeorm';

/** Extensions and helpers every later migration may rely on. */
export class Initial1764000000000 implements MigrationInterface {
  name = 'Initial1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS pgcrypto`);
  }

  async down(): Promise<void> {
    // The first migration is not undone.
  }
}
