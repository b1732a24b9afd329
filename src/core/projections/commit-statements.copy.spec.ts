import type { ClientBase } from 'pg';
import { DataSource } from 'typeorm';
import { createTestDatabase, TestDatabase } from '../../../test/support/database';
import { copyRows } from '../database/copy-rows';
import { createDataSource } from '../database/data-source';
import { CommitStatements, withCommitStatements, writeWithCommit } from './commit-statements';

let db: TestDatabase;
let ds: DataSource;
beforeAll(async () => {
  db = await createTestDatabase();
  ds = createDataSource({ url: db.url, entities: [], migrations: [], poolSize: 2 });
  await ds.initialize();
  await ds.query(`CREATE TABLE deferred_then_copied (id int PRIMARY KEY, what text NOT NULL)`);
});
afterAll(async () => {
  await ds?.destroy();
  await db?.drop();
});

/**
 * A joint batch: one projection leaves its INSERT for the COMMIT (the audit log's small
 * batch), the next one COPYs a large batch (the records projection's) on the same
 * connection. COPY is a stream, not a promise: the deferred write must not break it.
 */
it('a COPY after a deferred write in one batch copies, and both are written', async () => {
  const runner = ds.createQueryRunner();
  await runner.connect();
  const client = (runner as unknown as { databaseConnection: ClientBase }).databaseConnection;
  const later = new CommitStatements();
  try {
    await runner.query('BEGIN');
    await withCommitStatements(runner.manager, client, later, async () => {
      await writeWithCommit(runner.manager, 'INSERT INTO deferred_then_copied VALUES ($1, $2)', [
        1,
        'deferred',
      ]);
      await copyRows(runner.manager, 'deferred_then_copied', ['id', 'what'], [[2, 'copied']], async () => {
        throw new Error('no fallback expected');
      });
    });
    await client.query(`${[...later.take(), 'COMMIT'].join(';\n')}`);
  } finally {
    await runner.release();
  }
  const rows = (await ds.query('SELECT id, what FROM deferred_then_copied ORDER BY id')) as unknown[];
  expect(rows).toEqual([
    { id: 1, what: 'deferred' },
    { id: 2, what: 'copied' },
  ]);
});

it('a deferred write that fails before a COPY fails the COPY too: nothing of the batch is written', async () => {
  const runner = ds.createQueryRunner();
  await runner.connect();
  const client = (runner as unknown as { databaseConnection: ClientBase }).databaseConnection;
  const later = new CommitStatements();
  let failure: unknown;
  try {
    await runner.query('BEGIN');
    await withCommitStatements(runner.manager, client, later, async () => {
      await runner.query(`INSERT INTO deferred_then_copied VALUES (10, 'before')`);
      // NOT NULL violated: the deferred write fails once it is sent.
      await writeWithCommit(runner.manager, 'INSERT INTO deferred_then_copied VALUES ($1, $2)', [11, null]);
      await copyRows(runner.manager, 'deferred_then_copied', ['id', 'what'], [[12, 'copied']], async () => {
        throw new Error('no fallback expected');
      });
    });
  } catch (err) {
    failure = err;
    await client.query('ROLLBACK');
  } finally {
    await runner.release();
  }
  expect(failure).toBeDefined();
  const rows = (await ds.query('SELECT id FROM deferred_then_copied WHERE id >= 10')) as unknown[];
  expect(rows).toEqual([]);
});
