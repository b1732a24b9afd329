import { MigrationInterface, QueryRunner } from 'typeorm';

/** A member's own time zone (SMS quiet hours); null: the workspace's applies. */
export class MemberTimezone1764000008910 implements MigrationInterface {
  name = 'MemberTimezone1764000008910';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE members ADD COLUMN timezone text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE members DROP COLUMN timezone`);
  }
}
