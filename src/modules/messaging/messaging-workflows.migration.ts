import { MigrationInterface, QueryRunner } from 'typeorm';

/** Chats that run a workflow: the workflow and the assignment running it (filter by workflowId). */
export class MessagingWorkflows1764000008000 implements MigrationInterface {
  name = 'MessagingWorkflows1764000008000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE chats ADD COLUMN workflow_id integer, ADD COLUMN assignment_id integer`);
    await q.query(
      `CREATE INDEX chats_workflow ON chats (workspace_id, workflow_id) WHERE workflow_id IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS chats_workflow`);
    await q.query(`ALTER TABLE chats DROP COLUMN assignment_id, DROP COLUMN workflow_id`);
  }
}
