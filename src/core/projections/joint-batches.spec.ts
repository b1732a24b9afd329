import { Client } from 'pg';
import { DataSource, EntityManager } from 'typeorm';
import { createTestDatabase, TestDatabase } from '../../../test/support/database';
import { createDataSource } from '../database/data-source';
import type { Position, StoredEvent } from '../event-store/event-store.port';
import { CheckpointFeed, CheckpointNotice } from './checkpoint-feed';
import { readCheckpoint } from './checkpoints';
import type { RegisteredProjection } from './projection';
import { JointProjectionBatches, projectionSpec } from './subscribers.host';
import { writeWithCommit } from './commit-statements';

let db: TestDatabase;
let ds: DataSource;
/** The transaction ids the handlers wrote in, and the BEGINs sent, per test. */
let begins: number;

beforeAll(async () => {
  db = await createTestDatabase();
  ds = createDataSource({ url: db.url, entities: [], migrations: [], poolSize: 3 });
  await ds.initialize();
  await ds.query(`CREATE TABLE joint_deferred (projection text, prepare bigint, value text NOT NULL)`);
  await ds.query(
    `CREATE TABLE joint_applied (projection text, prepare bigint, xact xid8 DEFAULT pg_current_xact_id())`,
  );
  // Counts the BEGINs every pg client of this file sends (a counting wrapper, the statements run as they are).
  const query = Client.prototype.query as (...args: unknown[]) => unknown;
  (Client.prototype as unknown as { query: (...args: unknown[]) => unknown }).query = function (
    this: Client,
    ...args: unknown[]
  ) {
    const q = args[0] as string | { text?: string };
    const text = typeof q === 'string' ? q : (q?.text ?? '');
    if (/^\s*BEGIN/.test(text)) begins++;
    sent.push(text);
    return query.apply(this, args);
  };
});
afterAll(async () => {
  await ds?.destroy();
  await db?.drop();
});

let seq = 0;
const uniq = (what: string) => `joint-${what}-${process.pid}-${++seq}`;
const at = (prepare: bigint): Position => ({ commit: 7n, prepare });

function eventAt(prepare: bigint): StoredEvent {
  return {
    id: `00000000-0000-7000-8000-${prepare.toString().padStart(12, '0')}`,
    type: 'Thing',
    data: {},
    metadata: { workspaceId: 'w', actor: { kind: 'system', id: 't' }, correlationId: 'c' },
    streamName: 'thing-1',
    revision: 0n,
    position: at(prepare),
  } as unknown as StoredEvent;
}

/** Statements sent per test (every pg client of this file), counted like the BEGINs. */
let sent: string[] = [];

/**
 * A projection that leaves its row for the commit (writeWithCommit), then, when `readBack`,
 * reads the table in the same transaction: the deferred write must be there before it.
 */
function deferring(name: string, value: string, readBack?: (count: number) => void): RegisteredProjection {
  return {
    definition: { name, eventTypes: ['Thing'], tables: ['joint_deferred'] },
    handler: {
      async handle(event: StoredEvent, em: EntityManager) {
        await writeWithCommit(
          em,
          `INSERT INTO joint_deferred (projection, prepare, value) VALUES ($1, $2, $3)`,
          [name, event.position.prepare, value],
        );
        if (readBack) {
          const rows = (await em.query(
            `SELECT count(*)::int AS n FROM joint_deferred WHERE projection = $1`,
            [name],
          )) as { n: number }[];
          readBack(rows[0].n);
        }
      },
    },
  };
}

function projection(name: string, fail = false): RegisteredProjection {
  return {
    definition: { name, eventTypes: ['Thing'], tables: ['joint_applied'] },
    handler: {
      async handle(event: StoredEvent, em: EntityManager) {
        await em.query(`INSERT INTO joint_applied (projection, prepare) VALUES ($1, $2)`, [
          name,
          event.position.prepare.toString(),
        ]);
        if (fail) throw new Error(`${name} refuses`);
      },
    },
  };
}

async function applied(name: string): Promise<{ prepare: string; xact: string }[]> {
  return (await ds.query(
    `SELECT prepare::text AS prepare, xact::text AS xact FROM joint_applied WHERE projection = $1 ORDER BY prepare`,
    [name],
  )) as { prepare: string; xact: string }[];
}

describe('JointProjectionBatches', () => {
  let notices: CheckpointNotice[];
  let feed: CheckpointFeed;

  beforeEach(() => {
    begins = 0;
    sent = [];
    notices = [];
    feed = new CheckpointFeed(ds);
    feed.subscribe((n) => notices.push(n));
  });

  it('commits the batches asked for together in one transaction, each with its own checkpoint', async () => {
    const joint = new JointProjectionBatches(ds, feed);
    const [a, b] = [uniq('a'), uniq('b')];
    const specA = projectionSpec(projection(a), ds, a, feed, joint);
    const specB = projectionSpec(projection(b), ds, b, feed, joint);
    const outcomes = await Promise.all([
      specA.commitBatch([eventAt(1n), eventAt(2n)], undefined),
      specB.commitBatch([eventAt(2n)], undefined),
    ]);
    expect(outcomes).toEqual(['committed', 'committed']);
    expect(begins).toBe(1);
    const rowsA = await applied(a);
    const rowsB = await applied(b);
    expect(rowsA.map((r) => r.prepare)).toEqual(['1', '2']);
    expect(rowsB.map((r) => r.prepare)).toEqual(['2']);
    expect(new Set([...rowsA, ...rowsB].map((r) => r.xact)).size).toBe(1);
    expect(await readCheckpoint(ds.manager, a)).toEqual(at(2n));
    expect(await readCheckpoint(ds.manager, b)).toEqual(at(2n));
    // Announced in this process after the commit, one notice each.
    expect(notices.map((n) => n.name).sort()).toEqual([a, b].sort());
  });

  it('leaves a stale batch out and commits the others', async () => {
    const joint = new JointProjectionBatches(ds, feed);
    const [a, b] = [uniq('a'), uniq('b')];
    const specA = projectionSpec(projection(a), ds, a, feed, joint);
    const specB = projectionSpec(projection(b), ds, b, feed, joint);
    await Promise.all([
      specA.commitBatch([eventAt(1n)], undefined),
      specB.commitBatch([eventAt(1n)], undefined),
    ]);
    // B's loop believes its checkpoint is still absent (a rebuild moved it under it).
    const outcomes = await Promise.all([
      specA.commitBatch([eventAt(2n)], at(1n)),
      specB.commitBatch([eventAt(2n)], undefined),
    ]);
    expect(outcomes).toEqual(['committed', 'stale']);
    expect((await applied(a)).map((r) => r.prepare)).toEqual(['1', '2']);
    expect((await applied(b)).map((r) => r.prepare)).toEqual(['1']);
    expect(await readCheckpoint(ds.manager, b)).toEqual(at(1n));
  });

  it('fails only the batch whose handler fails: the others commit on their own', async () => {
    const joint = new JointProjectionBatches(ds, feed);
    const [good, bad] = [uniq('good'), uniq('bad')];
    const specGood = projectionSpec(projection(good), ds, good, feed, joint);
    const specBad = projectionSpec(projection(bad, true), ds, bad, feed, joint);
    const [g, x] = await Promise.allSettled([
      specGood.commitBatch([eventAt(1n)], undefined),
      specBad.commitBatch([eventAt(1n)], undefined),
    ]);
    expect(g).toEqual({ status: 'fulfilled', value: 'committed' });
    expect(x.status).toBe('rejected');
    expect(((x as PromiseRejectedResult).reason as Error).message).toBe(`${bad} refuses`);
    expect((await applied(good)).map((r) => r.prepare)).toEqual(['1']);
    // Nothing of the failing batch, and its checkpoint did not move.
    expect(await applied(bad)).toEqual([]);
    expect(await readCheckpoint(ds.manager, bad)).toBeUndefined();
    expect(notices.map((n) => n.name)).toEqual([good]);
  });

  it('commits a batch asked for alone as before', async () => {
    const joint = new JointProjectionBatches(ds, feed);
    const a = uniq('alone');
    const spec = projectionSpec(projection(a), ds, a, feed, joint);
    await expect(spec.commitBatch([eventAt(5n)], undefined)).resolves.toBe('committed');
    expect(begins).toBe(1);
    expect(await readCheckpoint(ds.manager, a)).toEqual(at(5n));
  });

  it("sends a handler's deferred write with the COMMIT: two round trips, values intact", async () => {
    const a = uniq('deferred');
    // Quotes, backslashes, a $1 and non-ASCII text survive the literal.
    const value = `it's \\ a "test" $1 \\' ünï ☃ \n end\\`;
    const spec = projectionSpec(deferring(a, value), ds, a, feed, new JointProjectionBatches(ds, feed));
    await expect(spec.commitBatch([eventAt(1n), eventAt(2n)], undefined)).resolves.toBe('committed');
    const mine = sent.filter(
      (t) => !/joint_deferred WHERE|pg_stat|subscriber_checkpoints WHERE name = \$1/.test(t),
    );
    expect(mine).toHaveLength(2);
    expect(mine[1]).toMatch(/INSERT INTO joint_deferred[\s\S]*COMMIT$/);
    const rows = (await ds.query(
      `SELECT prepare::text, value FROM joint_deferred WHERE projection = $1 ORDER BY prepare`,
      [a],
    )) as { prepare: string; value: string }[];
    expect(rows).toEqual([
      { prepare: '1', value },
      { prepare: '2', value },
    ]);
    expect(await readCheckpoint(ds.manager, a)).toEqual(at(2n));
  });

  it('sends deferred writes before any later statement of the transaction', async () => {
    const a = uniq('ordered');
    const counts: number[] = [];
    const spec = projectionSpec(
      deferring(a, 'v', (n) => counts.push(n)),
      ds,
      a,
      feed,
      new JointProjectionBatches(ds, feed),
    );
    await expect(spec.commitBatch([eventAt(1n), eventAt(2n)], undefined)).resolves.toBe('committed');
    expect(counts).toEqual([1, 2]);
  });

  it('fails the batch, with nothing written, when a deferred write fails at the commit', async () => {
    const joint = new JointProjectionBatches(ds, feed);
    const [good, bad] = [uniq('good'), uniq('badly-deferred')];
    const specGood = projectionSpec(projection(good), ds, good, feed, joint);
    const refusing: RegisteredProjection = {
      definition: { name: bad, eventTypes: ['Thing'], tables: ['joint_deferred'] },
      handler: {
        async handle(_event: StoredEvent, em: EntityManager) {
          // NOT NULL refuses it, at the commit.
          await writeWithCommit(em, `INSERT INTO joint_deferred (projection, value) VALUES ($1, $2)`, [
            bad,
            null,
          ]);
        },
      },
    };
    const specBad = projectionSpec(refusing, ds, bad, feed, joint);
    const [g, x] = await Promise.allSettled([
      specGood.commitBatch([eventAt(1n)], undefined),
      specBad.commitBatch([eventAt(1n)], undefined),
    ]);
    expect(g).toEqual({ status: 'fulfilled', value: 'committed' });
    expect(x.status).toBe('rejected');
    expect(
      (await ds.query(`SELECT 1 FROM joint_deferred WHERE projection = $1`, [bad])) as unknown[],
    ).toEqual([]);
    expect(await readCheckpoint(ds.manager, bad)).toBeUndefined();
    expect((await applied(good)).map((r) => r.prepare)).toEqual(['1']);
  });

  it('runs a deferred write at once outside a batch', async () => {
    const a = uniq('outside');
    await writeWithCommit(ds.manager, `INSERT INTO joint_deferred (projection, value) VALUES ($1, $2)`, [
      a,
      'x',
    ]);
    expect(
      (await ds.query(`SELECT value FROM joint_deferred WHERE projection = $1`, [a])) as unknown[],
    ).toEqual([{ value: 'x' }]);
  });
});
