import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The work feature's read models (workflows, assignments, tasks) and their id sequences.
 * Each row carries `version` (the ETag) and `stream_revision` (If-Match pins the write to
 * it); see core/http/preconditions.ts.
 */
export class WorkTables1764000007100 implements MigrationInterface {
  name = 'WorkTables1764000007100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SEQUENCE IF NOT EXISTS workflow_id_seq`);
    await q.query(`CREATE SEQUENCE IF NOT EXISTS assignment_id_seq`);
    await q.query(`CREATE SEQUENCE IF NOT EXISTS task_id_seq`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS workflows (
        id integer PRIMARY KEY,
        uuid uuid NOT NULL UNIQUE,
        workspace_id uuid NOT NULL,
        name text NOT NULL,
        agent_id integer NOT NULL,
        default_phone_number_id integer,
        role_gate jsonb,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        version integer NOT NULL DEFAULT 1,
        stream_revision bigint NOT NULL DEFAULT 0
      )`);
    await q.query(`CREATE INDEX IF NOT EXISTS workflows_workspace ON workflows (workspace_id, id)`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS assignments (
        id integer PRIMARY KEY,
        workspace_id uuid NOT NULL,
        workflow_id integer NOT NULL,
        workflow_uuid uuid NOT NULL,
        workflow_name text NOT NULL,
        member_id integer NOT NULL,
        status text NOT NULL,
        started_at timestamptz NOT NULL,
        completed_at timestamptz,
        updated_at timestamptz NOT NULL,
        version integer NOT NULL DEFAULT 1,
        stream_revision bigint NOT NULL DEFAULT 0
      )`);
    await q.query(`CREATE INDEX IF NOT EXISTS assignments_workspace ON assignments (workspace_id, id)`);
    await q.query(`CREATE INDEX IF NOT EXISTS assignments_member ON assignments (workspace_id, member_id)`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS tasks (
        id integer PRIMARY KEY,
        workspace_id uuid NOT NULL,
        name text NOT NULL,
        title text NOT NULL,
        slug text,
        description text,
        workflow_id integer,
        is_admin boolean NOT NULL,
        status text NOT NULL,
        priority text NOT NULL,
        due_at timestamptz,
        assignees integer[] NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        version integer NOT NULL DEFAULT 1,
        stream_revision bigint NOT NULL DEFAULT 0
      )`);
    await q.query(`CREATE INDEX IF NOT EXISTS tasks_workspace ON tasks (workspace_id, id)`);
    await q.query(`CREATE INDEX IF NOT EXISTS tasks_assignees ON tasks USING gin (assignees)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE tasks`);
    await q.query(`DROP TABLE assignments`);
    await q.query(`DROP TABLE workflows`);
    await q.query(`DROP SEQUENCE task_id_seq`);
    await q.query(`DROP SEQUENCE assignment_id_seq`);
    await q.query(`DROP SEQUENCE workflow_id_seq`);
  }
}
