import { DataSource } from 'typeorm';
import { createTestDatabase, TestDatabase } from '../../../../test/support/database';
import { createDataSource } from '../../../core/database/data-source';
import type { EventStore, StoredEvent } from '../../../core/event-store/event-store.port';
import { PostgresEventStore } from '../../../core/event-store/postgres/postgres-event-store';
import { meta } from '../../../core/event-store/testing/event-store.test-helpers';
import { EventLogProjection } from './event-log.projection';

/**
 * On the PostgreSQL store the audit log copies a batch's rows from `events` inside the
 * database: they must be exactly the rows the events themselves make (the COPY and INSERT
 * of every other store), for awkward metadata too, and a replay must change nothing.
 */
describe('EventLogProjection: rows copied from the PostgreSQL store', () => {
  let db: TestDatabase;
  let ds: DataSource;
  let store: PostgresEventStore;
  const ws = '6f0c1f9e-3c1a-4b8e-9d57-2f1f2b0b7a11';

  beforeAll(async () => {
    db = await createTestDatabase();
    ds = createDataSource({ url: db.url, entities: [], migrations: [], poolSize: 1 });
    await ds.initialize();
    store = new PostgresEventStore({ connectionString: db.url, poolSize: 2 });
  });
  afterAll(async () => {
    await store?.close();
    await ds?.destroy();
    await db?.drop();
  });

  const rows = async (table: 'event_log', ids: string[]) =>
    (await ds.query(
      `SELECT event_id, workspace_id, stream_name, revision::text, type, data, metadata, position_commit::text,
              position_prepare::text, occurred_at FROM ${table} WHERE event_id = ANY($1::uuid[]) ORDER BY ${table}.position_prepare`,
      [ids],
    )) as Record<string, unknown>[];

  it('writes the rows the events make, and skips them when replayed', async () => {
    // Metadata a row must take as the event has it: no workspace, one that is no uuid,
    // one that is no string, an upper-case uuid, no occurredAt.
    const metadatas = [
      meta({ workspaceId: ws }),
      meta({ workspaceId: undefined as unknown as string }),
      meta({ workspaceId: 'not-a-uuid' }),
      meta({ workspaceId: 42 as unknown as string }),
      meta({ workspaceId: ws.toUpperCase() }),
      { ...meta({ workspaceId: ws }), occurredAt: undefined as unknown as string },
    ];
    const appended = await store.createStreams(
      Array.from({ length: 60 }, (_, i) => ({
        streamName: `audit-${i}`,
        events: [
          {
            type: i % 2 ? 'Thing\tHappened' : 'ThingHappened',
            data: i % 7 ? { n: i, text: 'tab\there\nline \\N', nested: { a: [1, null] } } : null,
            metadata: metadatas[i % metadatas.length],
          },
        ],
      })),
    );
    const events: StoredEvent[] = appended.flatMap((r) => r.events);
    const ids = events.map((e) => e.id);

    // The same events through the path of every other store (COPY from what the events hold).
    const elsewhere = new EventLogProjection({ kind: 'memory' } as EventStore);
    await ds.transaction((em) => elsewhere.handleBatch(events, em));
    const expected = await rows('event_log', ids);
    expect(expected).toHaveLength(60);
    await ds.query(`DELETE FROM event_log`);

    const projection = new EventLogProjection(store);
    const statements: string[] = [];
    const batched = () =>
      ds.transaction(async (em) => {
        const query = em.query.bind(em);
        em.query = ((sql: string, params?: unknown[]) => {
          statements.push(sql.trim().split(/\s+/)[0]);
          return query(sql, params);
        }) as typeof em.query;
        await projection.handleBatch(events, em);
      });
    await batched();
    expect(statements).toEqual(['WITH']);
    const copied = await rows('event_log', ids);
    // occurredAt absent: the time of the write, on either path.
    const timeless = (r: Record<string, unknown>[]) =>
      r.map((row, i) => (i % metadatas.length === 5 ? { ...row, occurred_at: null } : row));
    expect(timeless(copied)).toEqual(timeless(expected));
    expect(copied.map((r) => r.workspace_id)).toEqual(
      events.map((_, i) => ([0, 4, 5].includes(i % metadatas.length) ? ws : null)),
    );
    expect(copied[5].occurred_at).toBeInstanceOf(Date);

    statements.length = 0;
    await batched();
    // A replay inserts nothing from `events`, so the batch goes through the INSERT, which skips it.
    expect(statements).toEqual(['WITH', 'INSERT']);
    expect(await rows('event_log', ids)).toEqual(copied);
  });

  it('writes an event the store does not hold from the event itself', async () => {
    const appended = await store.createStreams(
      Array.from({ length: 50 }, (_, i) => ({
        streamName: `held-${i}`,
        events: [{ type: 'Held', data: { i }, metadata: meta({ workspaceId: ws }) }],
      })),
    );
    const held = appended.flatMap((r) => r.events);
    const foreign: StoredEvent = {
      id: '0190a6c4-0000-7000-8000-000000000999',
      type: 'Elsewhere',
      data: { x: 1 },
      metadata: meta({ workspaceId: ws }),
      streamName: 'elsewhere-1',
      revision: 0n,
      position: { commit: 1n, prepare: 1n },
    };
    await ds.transaction((em) => new EventLogProjection(store).handleBatch([...held, foreign], em));
    expect(
      await rows(
        'event_log',
        held.map((e) => e.id),
      ),
    ).toHaveLength(50);
    expect(await rows('event_log', [foreign.id])).toEqual([
      expect.objectContaining({
        event_id: foreign.id,
        workspace_id: ws,
        data: { x: 1 },
        position_prepare: '1',
      }),
    ]);
  });
});
