import { DataSource, EntityManager } from 'typeorm';
import { createTestDatabase, TestDatabase } from '../../../test/support/database';
import { createDataSource } from '../database/data-source';
import type { Position, StoredEvent } from '../event-store/event-store.port';
import { advanceCheckpoint, readCheckpoint } from './checkpoints';
import { reactorSpec } from './subscribers.host';

let db: TestDatabase;
let ds: DataSource;

beforeAll(async () => {
  db = await createTestDatabase();
  ds = createDataSource({ url: db.url, entities: [], migrations: [], poolSize: 2 });
  await ds.initialize();
});
afterAll(async () => {
  await ds?.destroy();
  await db?.drop();
});

let seq = 0;
const uniq = () => `cp-${process.pid}-${++seq}`;
const at = (prepare: bigint): Position => ({ commit: 7n, prepare });

function eventAt(prepare: bigint): StoredEvent {
  return {
    id: `00000000-0000-7000-8000-${prepare.toString().padStart(12, '0')}`,
    type: 'Thing',
    data: {},
    metadata: { workspaceId: 'w', actor: { type: 'system' }, correlationId: 'c' },
    streamName: 'thing-1',
    revision: 0n,
    position: at(prepare),
  } as unknown as StoredEvent;
}

async function stored(name: string): Promise<{ position?: Position; handled?: number }> {
  const rows = (await ds.query('SELECT events_handled FROM subscriber_checkpoints WHERE name = $1', [
    name,
  ])) as {
    events_handled: string;
  }[];
  return {
    position: await readCheckpoint(ds.manager, name),
    handled: rows[0] && Number(rows[0].events_handled),
  };
}

describe('advanceCheckpoint (compare and set)', () => {
  it('creates the row of a first batch, and moves a checkpoint only from where it is', async () => {
    const name = uniq();
    await expect(advanceCheckpoint(ds.manager, name, 'reactor', undefined, at(3n), 2)).resolves.toBe(true);
    expect(await stored(name)).toEqual({ position: at(3n), handled: 2 });

    // Another "first batch" (a leader that had read no row) finds one: nothing written.
    await expect(advanceCheckpoint(ds.manager, name, 'reactor', undefined, at(9n), 5)).resolves.toBe(false);
    // A leader that read an older checkpoint cannot move it back.
    await expect(advanceCheckpoint(ds.manager, name, 'reactor', at(1n), at(2n), 1)).resolves.toBe(false);
    expect(await stored(name)).toEqual({ position: at(3n), handled: 2 });

    await expect(advanceCheckpoint(ds.manager, name, 'reactor', at(3n), at(5n), 2)).resolves.toBe(true);
    expect(await stored(name)).toEqual({ position: at(5n), handled: 4 });
  });

  it('treats the (0, 0) row made before a first batch as no checkpoint', async () => {
    const name = uniq();
    await ds.query(
      `INSERT INTO subscriber_checkpoints (name, kind, position_commit, position_prepare) VALUES ($1, 'reactor', 0, 0)`,
      [name],
    );
    await expect(advanceCheckpoint(ds.manager, name, 'reactor', at(1n), at(2n), 1)).resolves.toBe(false);
    await expect(advanceCheckpoint(ds.manager, name, 'reactor', undefined, at(2n), 1)).resolves.toBe(true);
    expect(await stored(name)).toEqual({ position: at(2n), handled: 1 });
  });
});

describe('a reactor batch', () => {
  /** The DataSource, counting the statements the reactor's spec sends through its manager. */
  function counting(): { db: DataSource; statements: string[] } {
    const statements: string[] = [];
    const manager = Object.create(ds.manager) as EntityManager;
    manager.query = (sql: string, params?: unknown[]) => {
      statements.push(sql);
      return ds.manager.query(sql, params);
    };
    const db = Object.create(ds) as DataSource;
    Object.defineProperty(db, 'manager', { value: manager });
    return { db, statements };
  }

  it('reacts, then moves its checkpoint in one statement; a stale batch writes nothing', async () => {
    const name = uniq();
    const reacted: bigint[] = [];
    const { db: countingDb, statements } = counting();
    const spec = reactorSpec(
      {
        definition: { name, eventTypes: ['Thing'] },
        handler: {
          react: (event) => {
            reacted.push(event.position.prepare);
            return Promise.resolve();
          },
        },
      },
      countingDb,
    );

    await expect(spec.commitBatch([eventAt(1n), eventAt(2n)], undefined)).resolves.toBe('committed');
    expect(statements).toHaveLength(1);
    await expect(spec.commitBatch([eventAt(3n)], at(2n))).resolves.toBe('committed');
    expect(statements).toHaveLength(2);
    expect(await stored(name)).toEqual({ position: at(3n), handled: 3 });

    // A leader still at 2 (another moved on to 3): its enqueue is a no-op by job id, its
    // checkpoint write must not take the stored one back.
    await expect(spec.commitBatch([eventAt(3n)], at(2n))).resolves.toBe('stale');
    expect(await stored(name)).toEqual({ position: at(3n), handled: 3 });
    expect(reacted).toEqual([1n, 2n, 3n, 3n]);
  });
});
