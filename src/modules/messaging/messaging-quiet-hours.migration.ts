import { MigrationInterface, QueryRunner } from 'typeorm';

/** Quiet hours: when a held message and each held delivery go out. */
export class MessagingQuietHours1764000008900 implements MigrationInterface {
  name = 'MessagingQuietHours1764000008900';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE chat_messages ADD COLUMN scheduled_for timestamptz`);
    await q.query(`ALTER TABLE message_deliveries ADD COLUMN scheduled_for timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE message_deliveries DROP COLUMN scheduled_for`);
    await q.query(`ALTER TABLE chat_messages DROP COLUMN scheduled_for`);
  }
}
