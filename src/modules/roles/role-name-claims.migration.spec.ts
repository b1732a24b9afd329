import { Pool } from 'pg';
import { createTestDatabase, TestDatabase } from '../../../test/support/database';
import { MIGRATIONS } from '../../app.migrations';
import { PostgresClaims } from '../../core/claims/postgres-claims';
import { createDataSource } from '../../core/database/data-source';
import { migrationTimestamp } from '../../core/features/feature';
import { PostgresEventStore } from '../../core/event-store/postgres/postgres-event-store';
import { ROLE_NAME_CLAIM } from './domain/role-name-claim';
import { normalizeRoleName } from './domain/role-aliases';

/** Roles created before role names became claims keep their names: the migration claims them. */
describe('RoleNameClaims1764000006100', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ migrate: false });
  });
  afterAll(() => db?.drop());

  async function migrate(until: number): Promise<void> {
    const migrations = MIGRATIONS.filter((m) => migrationTimestamp(m) < until);
    const ds = createDataSource({ url: db.url, entities: [], migrations, poolSize: 1 });
    await ds.initialize();
    try {
      await ds.runMigrations({ transaction: 'each' });
    } finally {
      await ds.destroy();
    }
  }

  it('claims the normalised names of existing custom roles, not of built-in ones', async () => {
    await migrate(1764000006000);
    const ws = '0190a6c4-0000-7000-8000-000000000001';
    const pool = new Pool({ connectionString: db.url, max: 2 });
    const store = new PostgresEventStore({ connectionString: db.url, pool });
    try {
      await pool.query(
        `INSERT INTO member_roles (id, workspace_id, name, permissions, built_in, created_at, updated_at)
         VALUES (1, $1, 'Manager', '{}', 'manager', now(), now()),
                (7, $1, ' Field_Sales ', '{}', NULL, now(), now()),
                (8, $1, 'Ops Team', '{}', NULL, now(), now())`,
        [ws],
      );
      await migrate(Number.MAX_SAFE_INTEGER);
      const claims = new PostgresClaims(store, pool);
      expect(await claims.ownerOf(ws, ROLE_NAME_CLAIM, normalizeRoleName('field sales'))).toBe(
        'memberrole-7',
      );
      expect(await claims.ownerOf(ws, ROLE_NAME_CLAIM, normalizeRoleName('OPS-team'))).toBe('memberrole-8');
      expect(await claims.ownerOf(ws, ROLE_NAME_CLAIM, 'manager')).toBeUndefined();
    } finally {
      await store.close();
      await pool.end();
    }
  });
});
