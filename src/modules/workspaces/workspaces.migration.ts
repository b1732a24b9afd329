import { MigrationInterface, QueryRunner } from 'typeorm';

export class Workspaces1764000001000 implements MigrationInterface {
  name = 'Workspaces1764000001000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE workspaces (
        id uuid PRIMARY KEY,
        name text NOT NULL,
        settings jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE workspaces`);
  }
}
