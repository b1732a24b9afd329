import { DataSource } from 'typeorm';
import { createTestDatabase, TestDatabase } from '../../../test/support/database';
import { copyRows, copyText } from './copy-rows';
import { createDataSource } from './data-source';

describe('copyRows', () => {
  let db: TestDatabase;
  let ds: DataSource;
  beforeAll(async () => {
    db = await createTestDatabase({ migrate: false });
    ds = createDataSource({ url: db.url, entities: [], migrations: [], poolSize: 2 });
    await ds.initialize();
    await ds.query(`CREATE TABLE copied (id int PRIMARY KEY, t text, j jsonb NOT NULL, n numeric(20,0))`);
  });
  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  const COLUMNS = ['id', 't', 'j', 'n'];
  const awkward = ['a\\b', 'line\nbreak', 'cr\rtab\t', '\\N', '', 'ünïcødé ✓', 'quote " and \\"'];

  it('writes every value as it was given, in the caller’s transaction', async () => {
    const rows: unknown[][] = awkward.map((t, i) => [
      i + 1,
      t,
      { t, nested: [t, null, 1.5] },
      '18446744073709551615',
    ]);
    rows.push([100, null, JSON.stringify({ already: 'json\\text' }), null]);
    const fallback = jest.fn(() => Promise.resolve());
    await ds.transaction(async (em) => {
      await copyRows(em, 'copied', COLUMNS, rows, fallback);
      // Still inside the transaction: the rows are visible to it.
      expect((await em.query(`SELECT count(*)::int AS n FROM copied`)) as unknown).toEqual([
        { n: rows.length },
      ]);
    });
    expect(fallback).not.toHaveBeenCalled();
    const stored = (await ds.query(`SELECT id, t, j, n::text AS n FROM copied ORDER BY id`)) as unknown[];
    expect(stored).toEqual([
      ...awkward.map((t, i) => ({
        id: i + 1,
        t,
        j: { t, nested: [t, null, 1.5] },
        n: '18446744073709551615',
      })),
      { id: 100, t: null, j: { already: 'json\\text' }, n: null },
    ]);
  });

  it('on a unique violation rolls back to its savepoint and lets the fallback write, keeping the transaction', async () => {
    await ds.query(`TRUNCATE copied`);
    await ds.query(`INSERT INTO copied (id, t, j) VALUES (1, 'old', '{}')`);
    await ds.transaction(async (em) => {
      await em.query(`INSERT INTO copied (id, t, j) VALUES (50, 'before', '{}')`);
      await copyRows(
        em,
        'copied',
        COLUMNS,
        [
          [1, 'new', {}, null],
          [2, 'two', {}, null],
        ],
        () =>
          em
            .query(
              `INSERT INTO copied (id, t, j) VALUES (1, 'new', '{}'), (2, 'two', '{}') ON CONFLICT (id) DO NOTHING`,
            )
            .then(() => undefined),
      );
    });
    expect(await ds.query(`SELECT id, t FROM copied ORDER BY id`)).toEqual([
      { id: 1, t: 'old' },
      { id: 2, t: 'two' },
      { id: 50, t: 'before' },
    ]);
  });

  it('outside a transaction writes nothing itself and leaves it to the fallback', async () => {
    await ds.query(`TRUNCATE copied`);
    const fallback = jest.fn(() => Promise.resolve());
    const runner = ds.createQueryRunner();
    await runner.connect();
    try {
      await copyRows(runner.manager, 'copied', COLUMNS, [[7, 'x', {}, null]], fallback);
    } finally {
      await runner.release();
    }
    await copyRows(ds.manager, 'copied', COLUMNS, [[8, 'y', {}, null]], fallback);
    expect(fallback).toHaveBeenCalledTimes(2);
    expect(await ds.query(`SELECT id FROM copied`)).toEqual([]);
  });

  it('escapes COPY’s special characters and writes null as \\N', () => {
    expect(copyText(null)).toBe('\\N');
    expect(copyText(undefined)).toBe('\\N');
    expect(copyText('a\\b\nc\rd\te')).toBe('a\\\\b\\nc\\rd\\te');
    expect(copyText({ a: 'x\ty' })).toBe('{"a":"x\\\\ty"}');
    expect(copyText(12n)).toBe('12');
    expect(copyText(-1.5)).toBe('-1.5');
    expect(copyText(18446744073709551615n)).toBe('18446744073709551615');
    expect(copyText(true)).toBe('true');
  });
});
