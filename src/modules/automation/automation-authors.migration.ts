import { MigrationInterface, QueryRunner } from 'typeorm';

/** Event rules remember their author (rule-access.policy.ts): whose reach bounds what they deliver. */
export class AutomationRuleAuthors1764000009000 implements MigrationInterface {
  name = 'AutomationRuleAuthors1764000009000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE event_rules ADD COLUMN author jsonb`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE event_rules DROP COLUMN author`);
  }
}
