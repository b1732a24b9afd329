import { DataSource } from 'typeorm';

/** Any constant: the advisory lock that serialises migrations across processes. */
const MIGRATION_LOCK = 7_420_001;

/**
 * Runs pending migrations under a session advisory lock so that several processes
 * starting together (api + workers) apply each migration once.
 */
export async function runMigrationsLocked(ds: DataSource): Promise<string[]> {
  const runner = ds.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const applied = await ds.runMigrations({ transaction: 'each' });
    return applied.map((m) => m.name);
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await runner.release();
  }
}
