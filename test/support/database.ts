import { randomBytes } from 'node:crypto';
import { Client, Pool, PoolConfig } from 'pg';
import type { DataSource } from 'typeorm';
import { createDataSource, EntityClass } from '../../src/core/database/data-source';
import { MIGRATIONS } from '../../src/app.migrations';
import { ENTITIES } from '../../src/app.entities';

/** The server tests create their databases on (trust auth on the project's machines). */
export const TEST_SERVER_URL =
  process.env.TEST_DATABASE_SERVER_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** How long drop() waits for the database's last session to end before it names the leak. */
const DRAIN_TIMEOUT_MS = 10_000;

export interface TestDatabase {
  name: string;
  url: string;
  /**
   * A pg Pool on this database for the test's own queries. Errors it raises are
   * recorded (never left to crash the jest worker) and make drop() fail; drop() ends it.
   */
  pool(config?: Omit<PoolConfig, 'connectionString'>): Pool;
  /**
   * Ends the pools from pool(), waits until no session is left on the database (child
   * processes killed and pools ended before: their backends exit on their own), then
   * drops it. Throws, after dropping, when a session outlived the wait (naming it) or a
   * pool recorded an error: a leak fails the file's teardown plainly instead of showing
   * up now and then as an unhandled 57P01 (admin_shutdown) from a forced drop.
   */
  drop(): Promise<void>;
}

function urlFor(name: string): string {
  const u = new URL(TEST_SERVER_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

async function onServer<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: TEST_SERVER_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

interface Session {
  pid: number;
  application_name: string;
  state: string | null;
}

/** Sessions on `name` other than the asking one (it is on the server's own database anyway). */
async function sessionsOn(c: Client, name: string): Promise<Session[]> {
  const { rows } = await c.query<Session>(
    `SELECT pid, application_name, state FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
    [name],
  );
  return rows;
}

/**
 * A fresh database per test file, so files run in parallel. With `migrate` (the
 * default) the service's migrations are applied, as at start-up.
 */
export async function createTestDatabase(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const name = `t_${process.pid}_${randomBytes(5).toString('hex')}`;
  await onServer((c) => c.query(`CREATE DATABASE "${name}"`));
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
  const pools: Pool[] = [];
  const errors: string[] = [];
  return {
    name,
    url,
    pool(config = {}) {
      const pool = new Pool({ ...config, connectionString: url, application_name: 'test-pool' });
      // pg-pool forwards an idle (or ending) client's error to the pool; without a listener it is thrown.
      pool.on('error', (err: Error & { code?: string }) =>
        errors.push(`${err.code ?? err.name}: ${err.message}`),
      );
      pools.push(pool);
      return pool;
    },
    async drop() {
      await Promise.all(pools.filter((p) => !p.ending).map((p) => p.end()));
      // pool.end() resolves once its clients are told to end, not once their sessions are gone.
      const leaked = await onServer(async (c) => {
        const deadline = Date.now() + DRAIN_TIMEOUT_MS;
        let left = await sessionsOn(c, name);
        while (left.length && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 50));
          left = await sessionsOn(c, name);
        }
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        return left;
      });
      const problems = [
        ...leaked.map(
          (s) => `session still open at drop: ${s.application_name || '?'} (pid ${s.pid}, ${s.state})`,
        ),
        ...errors.map((e) => `test pool error: ${e}`),
      ];
      if (problems.length) throw new Error(`database ${name}:\n  ${problems.join('\n  ')}`);
    },
  };
}

/**
 * For a projection's spec: a fresh migrated database and a one-connection DataSource over
 * `entities`, opened before the enclosing block's tests and dropped after them (`ds` is
 * set once its beforeAll has run).
 */
export function useReadModelDatabase(entities: EntityClass[]): { ds: DataSource } {
  const scratch = {} as { ds: DataSource; db?: TestDatabase };
  beforeAll(async () => {
    scratch.db = await createTestDatabase();
    scratch.ds = createDataSource({ url: scratch.db.url, entities, migrations: [], poolSize: 1 });
    await scratch.ds.initialize();
  });
  afterAll(async () => {
    await scratch.ds?.destroy();
    await scratch.db?.drop();
  });
  return scratch;
}
