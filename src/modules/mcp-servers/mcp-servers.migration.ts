import { MigrationInterface, QueryRunner } from 'typeorm';

/** The mcp-servers feature's read model (mcp_servers) and its id sequence. */
export class McpServersTables1764000008200 implements MigrationInterface {
  name = 'McpServersTables1764000008200';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SEQUENCE IF NOT EXISTS mcp_server_id_seq`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS mcp_servers (
        id integer PRIMARY KEY,
        workspace_id uuid NOT NULL,
        name text NOT NULL,
        slug text NOT NULL,
        description text,
        mcp_url text NOT NULL,
        supports_direct_auth boolean NOT NULL,
        direct_auth_token text,
        oauth_client_id text,
        oauth_client_secret text,
        enabled boolean NOT NULL,
        tools jsonb NOT NULL DEFAULT '[]'::jsonb,
        transport text,
        tools_fetched_at timestamptz,
        last_error_reason text,
        last_error_detail text,
        last_error_at timestamptz,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        version integer NOT NULL DEFAULT 1,
        stream_revision bigint NOT NULL DEFAULT 0
      )`);
    await q.query(`CREATE INDEX IF NOT EXISTS mcp_servers_workspace ON mcp_servers (workspace_id, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE mcp_servers`);
    await q.query(`DROP SEQUENCE mcp_server_id_seq`);
  }
}
