import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Roles carry a Site audience and grants on Files and Folders (editable on built-in
 * roles too).
 */
export class MemberRoleAccess1764000004000 implements MigrationInterface {
  name = 'MemberRoleAccess1764000004000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE member_roles ADD COLUMN site_audience jsonb NOT NULL DEFAULT '{"allSites": false, "siteIds": []}'`,
    );
    await q.query(
      `ALTER TABLE member_roles ADD COLUMN file_access jsonb NOT NULL DEFAULT '{"folders": [], "files": []}'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE member_roles DROP COLUMN file_access, DROP COLUMN site_audience`);
  }
}
