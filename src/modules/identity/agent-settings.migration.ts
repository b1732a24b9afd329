import { MigrationInterface, QueryRunner } from 'typeorm';

/** An agent member's assistant settings: its replies' model and the instructions of their system prompt. */
export class MemberAgentSettings1764000009450 implements MigrationInterface {
  name = 'MemberAgentSettings1764000009450';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE members ADD COLUMN agent_model text, ADD COLUMN agent_instructions text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE members DROP COLUMN agent_model, DROP COLUMN agent_instructions`);
  }
}
