import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Members grow their full lifecycle: contacts without an account (import), archive,
 * token revocation; plus the member tokens and invitations read models. The lookup
 * indexes serve the list filters; uniqueness is not here but in the claim streams.
 */
export class IdentityMembers1764000002500 implements MigrationInterface {
  name = 'IdentityMembers1764000002500';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE members ALTER COLUMN account_uuid DROP NOT NULL`);
    await q.query(
      `ALTER TABLE members ADD COLUMN archived_at timestamptz, ADD COLUMN tokens_revoked_before timestamptz`,
    );
    await q.query(`CREATE INDEX members_workspace_id ON members (workspace_id, id)`);
    await q.query(`CREATE INDEX members_workspace_email ON members (workspace_id, email)`);
    await q.query(`CREATE INDEX members_workspace_phone ON members (workspace_id, phone)`);
    await q.query(`CREATE INDEX members_workspace_external_id ON members (workspace_id, external_id)`);
    await q.query(`CREATE INDEX members_workspace_role ON members (workspace_id, member_role_id)`);
    await q.query(`ALTER TABLE accounts ADD COLUMN updated_at timestamptz`);
    await q.query(`UPDATE accounts SET updated_at = created_at`);
    await q.query(`ALTER TABLE accounts ALTER COLUMN updated_at SET NOT NULL`);
    await q.query(`
      CREATE TABLE member_tokens (
        id uuid PRIMARY KEY,
        prefix text NOT NULL UNIQUE,
        secret_hash text NOT NULL,
        workspace_id uuid NOT NULL,
        member_id integer NOT NULL,
        account_uuid uuid NOT NULL,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz
      )`);
    await q.query(`CREATE INDEX member_tokens_member ON member_tokens (member_id)`);
    await q.query(`
      CREATE TABLE invitations (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL,
        email text NOT NULL,
        member_role_id integer NOT NULL,
        status text NOT NULL,
        invited_by_member_id integer,
        member_id integer,
        account_uuid uuid,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        accepted_at timestamptz,
        revoked_at timestamptz,
        updated_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX invitations_workspace ON invitations (workspace_id, created_at, id)`);
    await q.query(`CREATE INDEX invitations_email ON invitations (email) WHERE status = 'pending'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE invitations, member_tokens`);
    await q.query(`ALTER TABLE accounts DROP COLUMN updated_at`);
    await q.query(
      `DROP INDEX members_workspace_id, members_workspace_email, members_workspace_phone, members_workspace_external_id, members_workspace_role`,
    );
    await q.query(`ALTER TABLE members DROP COLUMN archived_at, DROP COLUMN tokens_revoked_before`);
    await q.query(`ALTER TABLE members ALTER COLUMN account_uuid SET NOT NULL`);
  }
}
