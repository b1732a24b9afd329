import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The toolkits feature's read models (custom_toolkits, custom_tools) and their id
 * sequences. Each row carries `version` (the ETag) and `stream_revision`; see
 * core/http/preconditions.ts.
 */
export class CustomToolkitsTables1764000007800 implements MigrationInterface {
  name = 'CustomToolkitsTables1764000007800';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SEQUENCE IF NOT EXISTS custom_toolkit_id_seq`);
    await q.query(`CREATE SEQUENCE IF NOT EXISTS custom_tool_id_seq`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS custom_toolkits (
        id integer PRIMARY KEY,
        workspace_id uuid NOT NULL,
        name text NOT NULL,
        slug text NOT NULL,
        description text,
        enabled boolean NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        version integer NOT NULL DEFAULT 1,
        stream_revision bigint NOT NULL DEFAULT 0
      )`);
    await q.query(
      `CREATE INDEX IF NOT EXISTS custom_toolkits_workspace ON custom_toolkits (workspace_id, id)`,
    );
    await q.query(`
      CREATE TABLE IF NOT EXISTS custom_tools (
        id integer PRIMARY KEY,
        workspace_id uuid NOT NULL,
        toolkit_id integer NOT NULL,
        name text NOT NULL,
        display_name text NOT NULL,
        description text,
        prompt text,
        chat_model text,
        input_schema jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        version integer NOT NULL DEFAULT 1,
        stream_revision bigint NOT NULL DEFAULT 0
      )`);
    await q.query(
      `CREATE INDEX IF NOT EXISTS custom_tools_toolkit ON custom_tools (workspace_id, toolkit_id, id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE custom_tools`);
    await q.query(`DROP TABLE custom_toolkits`);
    await q.query(`DROP SEQUENCE custom_tool_id_seq`);
    await q.query(`DROP SEQUENCE custom_toolkit_id_seq`);
  }
}
