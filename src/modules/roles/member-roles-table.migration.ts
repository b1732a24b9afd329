import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The member_roles read model and the role id sequence, exactly as the shipped
 * Identity1764000002000 created them before each feature owned its tables. Its timestamp
 * puts it right after that migration, before MemberRoleAccess1764000004000 alters the
 * table, so a fresh database gets the same schema as before; on a database where
 * Identity1764000002000 already created them, every statement is a no-op (IF NOT EXISTS),
 * which is why it may run after later migrations there.
 */
export class MemberRolesTable1764000002010 implements MigrationInterface {
  name = 'MemberRolesTable1764000002010';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SEQUENCE IF NOT EXISTS member_role_id_seq`);
    await q.query(`
      CREATE TABLE IF NOT EXISTS member_roles (
        id integer PRIMARY KEY,
        workspace_id uuid NOT NULL,
        name text NOT NULL,
        permissions text[] NOT NULL,
        built_in text,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX IF NOT EXISTS member_roles_workspace ON member_roles (workspace_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE member_roles`);
    await q.query(`DROP SEQUENCE member_role_id_seq`);
  }
}
