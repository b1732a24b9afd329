import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Secrets rotated out before a rule's previous one and still in their overlap: a second
 * rotation no longer cuts the first one's overlap short (EventRuleSecretRotated.earlierSecrets).
 */
export class AutomationEarlierSecrets1764000011300 implements MigrationInterface {
  name = 'AutomationEarlierSecrets1764000011300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE event_rules ADD COLUMN earlier_secrets jsonb NOT NULL DEFAULT '[]'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE event_rules DROP COLUMN earlier_secrets`);
  }
}
