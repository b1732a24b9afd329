import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createDataSource } from '../../src/core/database/data-source';
import { MIGRATIONS } from '../../src/app.migrations';
import { ENTITIES } from '../../src/app.entities';

/** The server tests create their databases on (trust auth on the project's machines). */
export const TEST_SERVER_URL =
  process.env.TEST_DATABASE_SERVER_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

function urlFor(name: string): string {
  const u = new URL(TEST_SERVER_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * A fresh database per test file, so files run in parallel. With `migrate` (the
 * default) the service's migrations are applied, as at start-up.
 */
export async function createTestDatabase(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const name = `t_${process.pid}_${randomBytes(5).toString('hex')}`;
  const admin = new Client({ connectionString: TEST_SERVER_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = urlFor(name);
  if (options.migrate !== false) {
    const ds = createDataSource({ url, entities: ENTITIES, migrations: MIGRATIONS, poolSize: 2 });
    await ds.initialize();
    try {
      await ds.runMigrations({ transaction: 'each' });
    } finally {
      await ds.destroy();
    }
  }
  return {
    name,
    url,
    async drop() {
      const c = new Client({ connectionString: TEST_SERVER_URL });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
