import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The oauth feature's tables. Read models fed by events: account logins (from identity's
 * AccountRegistered), passwords, apps (versioned: ETag/If-Match) and grants. Written by
 * the authorization server itself, as an OAuth library's storage adapter would be:
 * authorization codes, tokens and browser sessions; each row holds only a SHA-256 of its
 * secret, and single use is one conditional UPDATE.
 */
export class OAuth1764000007700 implements MigrationInterface {
  name = 'OAuth1764000007700';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE oauth_account_logins (
      account_uuid uuid PRIMARY KEY,
      email text NOT NULL,
      created_at timestamptz NOT NULL)`);
    await q.query(`CREATE INDEX oauth_account_logins_email ON oauth_account_logins (lower(email))`);
    await q.query(`CREATE TABLE oauth_passwords (
      account_uuid uuid PRIMARY KEY,
      password_hash text NOT NULL,
      set_at timestamptz NOT NULL)`);
    await q.query(`CREATE TABLE oauth_apps (
      id uuid PRIMARY KEY,
      client_id text NOT NULL UNIQUE,
      account_uuid uuid,
      name text NOT NULL,
      redirect_uris text[] NOT NULL,
      scopes text[] NOT NULL,
      mcp_server_url text,
      client_type text NOT NULL,
      secret_hash text,
      registered_dynamically boolean NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      deleted_at timestamptz,
      version integer NOT NULL DEFAULT 1,
      stream_revision bigint NOT NULL DEFAULT 0)`);
    await q.query(`CREATE INDEX oauth_apps_account ON oauth_apps (account_uuid, created_at)`);
    await q.query(`CREATE TABLE oauth_grants (
      id uuid PRIMARY KEY,
      app_id uuid NOT NULL,
      account_uuid uuid NOT NULL,
      workspace_id uuid NOT NULL,
      scopes text[] NOT NULL,
      created_at timestamptz NOT NULL,
      revoked_at timestamptz,
      revoke_reason text)`);
    await q.query(`CREATE INDEX oauth_grants_app ON oauth_grants (app_id)`);
    await q.query(`CREATE TABLE oauth_codes (
      code_hash text PRIMARY KEY,
      grant_id uuid NOT NULL,
      app_id uuid NOT NULL,
      redirect_uri text NOT NULL,
      code_challenge text,
      expires_at timestamptz NOT NULL,
      used_at timestamptz)`);
    await q.query(`CREATE TABLE oauth_tokens (
      id uuid PRIMARY KEY,
      token_hash text NOT NULL UNIQUE,
      kind text NOT NULL,
      grant_id uuid NOT NULL,
      app_id uuid NOT NULL,
      scopes text[] NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      revoked_at timestamptz)`);
    await q.query(`CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id)`);
    await q.query(`CREATE TABLE oauth_sessions (
      id_hash text PRIMARY KEY,
      account_uuid uuid NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of [
      'oauth_sessions',
      'oauth_tokens',
      'oauth_codes',
      'oauth_grants',
      'oauth_apps',
      'oauth_passwords',
      'oauth_account_logins',
    ])
      await q.query(`DROP TABLE ${t}`);
  }
}
