import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { createTestDatabase, TestDatabase } from '../../../test/support/database';
import { createDataSource } from './data-source';
import { nextId, nextIds } from './ids';

describe('nextId', () => {
  let db: TestDatabase;
  let ds: DataSource;
  beforeAll(async () => {
    db = await createTestDatabase({ migrate: false });
    ds = createDataSource({ url: db.url, entities: [], migrations: [], poolSize: 4 });
    await ds.initialize();
    await ds.query(`CREATE SEQUENCE thing_id_seq; CREATE SEQUENCE other_id_seq START 1000`);
  });
  afterAll(async () => {
    await ds?.destroy();
    await db?.drop();
  });

  it('gives concurrent callers distinct ids, in the order they asked, in fewer round trips', async () => {
    // Round trips as the pool sees them (ids go as named prepared statements on it).
    const query = jest.spyOn((ds.driver as unknown as { master: Pool }).master, 'query');
    try {
      const ids = await Promise.all(Array.from({ length: 20 }, () => nextId(ds, 'thing_id_seq')));
      expect(ids).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      // The first asked alone; the 19 that asked while it was on its way, together.
      expect(query).toHaveBeenCalledTimes(2);
    } finally {
      query.mockRestore();
    }
    // Nothing was held back: the sequence stands where the last id left it.
    expect(await nextIds(ds, 'thing_id_seq', 1)).toEqual([21]);
    expect(await nextId(ds, 'thing_id_seq')).toBe(22);
  });

  it('keeps sequences apart, and one failed statement fails only the ids it was taking', async () => {
    const [a, b, missing] = await Promise.allSettled([
      nextId(ds, 'thing_id_seq'),
      nextId(ds, 'other_id_seq'),
      nextId(ds, 'missing_id_seq'),
    ]);
    expect(a).toEqual({ status: 'fulfilled', value: 23 });
    expect(b).toEqual({ status: 'fulfilled', value: 1000 });
    expect(missing.status).toBe('rejected');
    // The failed sequence's batcher is not stuck.
    await ds.query(`CREATE SEQUENCE missing_id_seq`);
    expect(await nextId(ds, 'missing_id_seq')).toBe(1);
  });

  it('refuses a sequence name that is not a plain identifier', async () => {
    await expect(nextId(ds, "x'); DROP TABLE y; --")).rejects.toThrow(/Bad sequence name/);
  });
});
