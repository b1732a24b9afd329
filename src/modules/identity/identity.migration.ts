import { MigrationInterface, QueryRunner } from 'typeorm';

/** Read models of accounts, members, roles and API keys, and the integer id sequences. */
export class Identity1764000002000 implements MigrationInterface {
  name = 'Identity1764000002000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SEQUENCE member_id_seq`);
    await q.query(`CREATE SEQUENCE member_role_id_seq`);
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
    await q.query(`
      CREATE TABLE member_roles (
        id integer PRIMARY KEY,
        workspace_id uuid NOT NULL,
        name text NOT NULL,
        permissions text[] NOT NULL,
        built_in text,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX member_roles_workspace ON member_roles (workspace_id)`);
    await q.query(`
      CREATE TABLE api_keys (
        id uuid PRIMARY KEY,
        account_uuid uuid NOT NULL,
        name text NOT NULL,
        prefix text NOT NULL UNIQUE,
        secret_hash text NOT NULL,
        scopes text[] NOT NULL,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz,
        last_used_at timestamptz
      )`);
    await q.query(`CREATE INDEX api_keys_account ON api_keys (account_uuid)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE api_keys, member_roles, members, accounts`);
    await q.query(`DROP SEQUENCE member_role_id_seq, member_id_seq`);
  }
}
