import { MigrationInterface, QueryRunner } from 'typeorm';

/** The auditors' copy of the history, per workspace, whichever event store holds it. */
export class AuditLog1764000003000 implements MigrationInterface {
  name = 'AuditLog1764000003000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE event_log (
        event_id uuid PRIMARY KEY,
        workspace_id uuid,
        stream_name text NOT NULL,
        revision bigint NOT NULL,
        type text NOT NULL,
        data jsonb NOT NULL,
        metadata jsonb NOT NULL,
        position_commit numeric(20, 0) NOT NULL,
        position_prepare numeric(20, 0) NOT NULL,
        occurred_at timestamptz NOT NULL
      )`);
    await q.query(
      `CREATE INDEX event_log_workspace_position ON event_log (workspace_id, position_commit DESC, position_prepare DESC)`,
    );
    await q.query(`CREATE INDEX event_log_workspace_type ON event_log (workspace_id, type)`);
    await q.query(`CREATE INDEX event_log_stream ON event_log (stream_name, revision)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE event_log`);
  }
}
