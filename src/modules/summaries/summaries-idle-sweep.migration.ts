import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Idle summaries found by a sweep of summary_chats instead of a delayed job per message:
 * `covered_message_id` (the last message the chat's newest summary covered, from the
 * summaries' own events), `last_event` (the newest message event: its id, type,
 * correlation id and position, what an idle job is caused by and waits for) and a partial
 * index on the last message time of the chats whose last message no summary covers yet.
 * Chats already in the table count as covered: the delayed jobs scheduled before this
 * migration still run and summarise them.
 */
export class SummariesIdleSweep1764000010800 implements MigrationInterface {
  name = 'SummariesIdleSweep1764000010800';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE summary_chats ADD COLUMN IF NOT EXISTS covered_message_id integer`);
    await q.query(`ALTER TABLE summary_chats ADD COLUMN IF NOT EXISTS last_event jsonb`);
    await q.query(
      `UPDATE summary_chats SET covered_message_id = last_message_id WHERE covered_message_id IS NULL`,
    );
    await q.query(
      `CREATE INDEX IF NOT EXISTS summary_chats_idle ON summary_chats (last_message_at, chat_id)
         WHERE last_message_id IS DISTINCT FROM covered_message_id`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS summary_chats_idle`);
    await q.query(`ALTER TABLE summary_chats DROP COLUMN IF EXISTS last_event`);
    await q.query(`ALTER TABLE summary_chats DROP COLUMN IF EXISTS covered_message_id`);
  }
}
