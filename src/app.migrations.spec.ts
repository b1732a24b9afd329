import { Client } from 'pg';
import { MigrationInterface, QueryRunner } from 'typeorm';
import { createTestDatabase, TestDatabase } from '../test/support/database';
import { ENTITIES } from './app.entities';
import { MIGRATIONS } from './app.migrations';
import { createDataSource, MigrationClass } from './core/database/data-source';

/**
 * Identity1764000002000 shipped creating the tables of roles and api-keys too; each feature
 * now creates its own (MemberRolesTable1764000002010, ApiKeysTable1764000002020). A
 * database migrated by the shipped code must take the new migrations without error, and
 * every database must end with the schema the shipped migrations gave.
 */

/** Identity1764000002000 exactly as it shipped (frozen here; the live one has moved on). */
class ShippedIdentity1764000002000 implements MigrationInterface {
  name = 'Identity1764000002000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SEQUENCE member_id_seq`);
    await q.query(`CREATE SEQUENCE member_role_id_seq`);
    await q.query(`
      CREATE TABLE accounts (uuid uuid PRIMARY KEY, email text, phone text, name text, created_at timestamptz NOT NULL)`);
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

  async down(): Promise<void> {}
}

const SPLIT = ['MemberRolesTable1764000002010', 'ApiKeysTable1764000002020'];

async function migrate(url: string, migrations: MigrationClass[]): Promise<string[]> {
  const ds = createDataSource({ url, entities: ENTITIES, migrations, poolSize: 1 });
  await ds.initialize();
  try {
    return (await ds.runMigrations({ transaction: 'each' })).map((m) => m.name);
  } finally {
    await ds.destroy();
  }
}

/** Tables, columns, indexes, constraints and sequences of the public schema, in a stable order. */
async function schemaOf(url: string): Promise<string[]> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const columns = await c.query<{ d: string }>(
      `SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '') AS d
         FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> 'schema_migrations'`,
    );
    const indexes = await c.query<{ d: string }>(
      `SELECT indexdef AS d FROM pg_indexes WHERE schemaname = 'public' AND tablename <> 'schema_migrations'`,
    );
    const sequences = await c.query<{ d: string }>(
      `SELECT 'sequence ' || sequence_name AS d FROM information_schema.sequences WHERE sequence_schema = 'public'`,
    );
    return [...columns.rows, ...indexes.rows, ...sequences.rows].map((r) => r.d).sort();
  } finally {
    await c.end();
  }
}

describe('migrations split by feature', () => {
  const dbs: TestDatabase[] = [];
  afterAll(async () => {
    await Promise.all(dbs.map((d) => d.drop()));
  });

  it('declares the split-out tables right after Identity1764000002000', () => {
    const names = MIGRATIONS.map((m) => m.name);
    expect(
      names.slice(names.indexOf('Identity1764000002000'), names.indexOf('Identity1764000002000') + 3),
    ).toEqual(['Identity1764000002000', ...SPLIT]);
  });

  it('gives a database migrated before the split the new migrations as no-ops, and the same schema as a fresh one', async () => {
    const shipped = await createTestDatabase({ migrate: false });
    dbs.push(shipped);
    const before = MIGRATIONS.filter((m) => !SPLIT.includes(m.name)).map((m) =>
      m.name === 'Identity1764000002000' ? ShippedIdentity1764000002000 : m,
    );
    await migrate(shipped.url, before);
    const shippedSchema = await schemaOf(shipped.url);

    expect(await migrate(shipped.url, MIGRATIONS)).toEqual(SPLIT);
    const afterUpgrade = await schemaOf(shipped.url);

    const fresh = await createTestDatabase();
    dbs.push(fresh);
    const freshSchema = await schemaOf(fresh.url);

    expect(afterUpgrade).toEqual(shippedSchema);
    expect(freshSchema).toEqual(shippedSchema);
    expect(freshSchema).toEqual(expect.arrayContaining(['sequence member_role_id_seq']));
  });
});
