import { MigrationInterface, QueryRunner } from 'typeorm';

/** The files read model and the sequence of file ids. */
export class FilesTable1764000007300 implements MigrationInterface {
  name = 'FilesTable1764000007300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SEQUENCE IF NOT EXISTS file_id_seq`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS files (
        id integer PRIMARY KEY,
        workspace_id uuid NOT NULL,
        name text NOT NULL,
        content_type text NOT NULL,
        size bigint NOT NULL,
        sha256 text NOT NULL,
        storage_key text NOT NULL,
        staging_key text NOT NULL,
        created_at timestamptz NOT NULL,
        version integer NOT NULL DEFAULT 1,
        stream_revision bigint NOT NULL
      )`);
    await q.query(`CREATE INDEX IF NOT EXISTS files_workspace ON files (workspace_id, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE files`);
    await q.query(`DROP SEQUENCE file_id_seq`);
  }
}
