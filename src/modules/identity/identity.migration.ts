import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Read models of accounts and members, and the member id sequence. As shipped it also
 * created member_roles, api_keys and member_role_id_seq; those moved, unchanged, to
 * MemberRolesTable1764000002010 (roles) and ApiKeysTable1764000002020 (api-keys), which
 * run right after it on a fresh database and do nothing where this already ran.
 */
export class Identity1764000002000 implements MigrationInterface {
  name = 'Identity1764000002000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SEQUENCE member_id_seq`);
    await q.query(`
      CREATE TABLE accounts (
        uuid uuid PRIMARY KEY,
        email text,
        phone text,
        name text,
        created_at timestamptz NOT NULL
      )`);
    await q.query(`
      CREATE TABLE members (
        id integer PRIMARY KEY,
        workspace_id uuid NOT NULL,
        account_uuid uuid NOT NULL,
        email text,
        phone text,
        name text,
        external_id text,
        member_role_id integer NOT NULL,
        kind text NOT NULL,
        status text NOT NULL DEFAULT 'active',
        notify_sms boolean NOT NULL DEFAULT false,
        notify_email boolean NOT NULL DEFAULT false,
        notify_voice boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX members_workspace_account ON members (workspace_id, account_uuid)`);
    await q.query(`CREATE INDEX members_account ON members (account_uuid)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE members, accounts`);
    await q.query(`DROP SEQUENCE member_id_seq`);
  }
}
