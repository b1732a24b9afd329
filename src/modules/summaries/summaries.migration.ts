import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The summaries feature's read models: the latest summary of each chat (chat_summaries,
 * from its own events), and what it keeps of other features' events to write one
 * (summary_chats: a chat's assignment, workflow and message counts; summary_workflows:
 * a workflow's uuid).
 */
export class Summaries1764000008800 implements MigrationInterface {
  name = 'Summaries1764000008800';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS chat_summaries (
        chat_id integer PRIMARY KEY,
        workspace_id uuid NOT NULL,
        kind text NOT NULL,
        trigger text NOT NULL,
        text text NOT NULL,
        source text NOT NULL,
        model text,
        fallback_reason text,
        channel text NOT NULL,
        workflow_id integer,
        workflow_uuid uuid,
        participants jsonb NOT NULL,
        message_count integer NOT NULL,
        inbound_count integer NOT NULL,
        outbound_count integer NOT NULL,
        first_message_at timestamptz,
        last_message_at timestamptz,
        call jsonb,
        summarized_at timestamptz NOT NULL,
        event_id uuid NOT NULL
      )`);
    await q.query(
      `CREATE INDEX IF NOT EXISTS chat_summaries_workspace ON chat_summaries (workspace_id, chat_id)`,
    );
    await q.query(`
      CREATE TABLE IF NOT EXISTS summary_chats (
        chat_id integer PRIMARY KEY,
        workspace_id uuid NOT NULL,
        workflow_id integer,
        assignment_id integer,
        inbound_count integer NOT NULL DEFAULT 0,
        outbound_count integer NOT NULL DEFAULT 0,
        first_message_at timestamptz,
        last_message_at timestamptz,
        last_message_id integer
      )`);
    await q.query(
      `CREATE INDEX IF NOT EXISTS summary_chats_assignment ON summary_chats (workspace_id, assignment_id)`,
    );
    await q.query(`
      CREATE TABLE IF NOT EXISTS summary_workflows (
        workflow_id integer PRIMARY KEY,
        workspace_id uuid NOT NULL,
        uuid uuid NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE summary_workflows`);
    await q.query(`DROP TABLE summary_chats`);
    await q.query(`DROP TABLE chat_summaries`);
  }
}
