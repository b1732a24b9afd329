import { useReadModelDatabase } from '../../../../test/support/database';
import { ENTITIES } from '../../../app.entities';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { meta } from '../../../core/event-store/testing/event-store.test-helpers';
import { COPY_FROM, RecordsProjection } from './records.projection';

const ws = '6f0c1f9e-3c1a-4b8e-9d57-2f1f2b0b7a12';
let seq = 0;
const stored = (type: string, data: unknown, streamName: string, revision = 0): StoredEvent => ({
  id: `0190a6c4-0000-7000-8000-${String(++seq).padStart(12, '0')}`,
  type,
  data,
  metadata: meta(),
  streamName,
  revision: BigInt(revision),
  position: { commit: 1n, prepare: BigInt(seq) },
});

const typeCreated = (dataTypeId: number) =>
  stored(
    'DataTypeCreated',
    {
      dataTypeId,
      workspaceId: ws,
      name: 'T',
      slug: `t${dataTypeId}`,
      isCollection: true,
      visibility: 'workspace',
      fields: [
        { name: 'Name', slug: 'name', fieldType: 'text', required: false, shouldIndex: true },
        { name: 'Age', slug: 'age', fieldType: 'number', required: false, shouldIndex: true },
        { name: 'Note', slug: 'note', fieldType: 'text', required: false, shouldIndex: false },
      ],
      ownerMemberId: null,
      createdAt: '2026-11-23T10:00:00.000Z',
    },
    `datatype-${dataTypeId}`,
  );

/** Values COPY's text format must escape (tab, newline, backslash, `\N`), and nulls. */
const AWKWARD = ['tab\there', 'line\nbreak\r', 'back\\slash', '\\N', '', 'ünïcødé ✓', null];

const recordCreated = (recordId: number, dataTypeId: number, i: number) =>
  stored(
    'DataRecordCreated',
    {
      recordId,
      workspaceId: ws,
      dataTypeId,
      memberId: i % 2 ? 7 : null,
      externalId: i % 3 ? `ext\t${i}` : null,
      fieldValues: {
        name: AWKWARD[i % AWKWARD.length],
        age: i,
        note: `Note ${AWKWARD[(i + 1) % AWKWARD.length]}`,
      },
      dataType: { id: dataTypeId, name: 'T', slug: `t${dataTypeId}` },
      member: null,
      createdAt: `2026-11-23T10:${String(i % 60).padStart(2, '0')}:00.123Z`,
    },
    `record-${recordId}`,
  );

/**
 * An import's batch of new records goes in by COPY: the rows must be exactly those the
 * events make one by one (the INSERT), and a replayed batch must change nothing.
 */
describe('RecordsProjection: a batch of new records by COPY', () => {
  const scratch = useReadModelDatabase(ENTITIES);
  const projection = new RecordsProjection();
  const rows = async (dataTypeId: number) =>
    (await scratch.ds.query(
      `SELECT id % 1000 AS n, workspace_id, member_id, external_id, field_values, indexed_values, search_text,
              created_at, updated_at, version, stream_revision::text AS rev
         FROM data_records WHERE data_type_id = $1 ORDER BY id`,
      [dataTypeId],
    )) as Record<string, unknown>[];

  it('writes the rows the events one by one write, and skips them when replayed', async () => {
    const count = COPY_FROM + 10;
    const batch = Array.from({ length: count }, (_, i) => recordCreated(2000 + i, 2, i));
    await scratch.ds.transaction(async (em) => {
      await projection.handle(typeCreated(1), em);
      await projection.handle(typeCreated(2), em);
      for (let i = 0; i < count; i++) await projection.handle(recordCreated(1000 + i, 1, i), em);
    });
    const statements: string[] = [];
    const batched = async () =>
      scratch.ds.transaction(async (em) => {
        const query = em.query.bind(em);
        em.query = ((sql: string, params?: unknown[]) => {
          statements.push(sql.trim().split(/\s+/)[0]);
          return query(sql, params);
        }) as typeof em.query;
        await projection.handleBatch(batch, em);
      });
    await batched();
    // COPY and the types' read (a named statement) go through the connection itself: no
    // statement through the manager (the INSERT a batch without COPY sends would).
    expect(statements).toEqual([]);
    const oneByOne = await rows(1);
    expect(oneByOne).toHaveLength(count);
    expect(await rows(2)).toEqual(oneByOne);
    expect(oneByOne[1]).toMatchObject({
      member_id: 7,
      external_id: 'ext\t1',
      field_values: { name: 'line\nbreak\r', age: 1, note: 'Note back\\slash' },
      indexed_values: { name: 'line\nbreak\r', age: 1 },
      search_text: 'line\nbreak\r',
      version: 1,
    });
    expect(oneByOne[6]).toMatchObject({ field_values: { name: null }, search_text: null, external_id: null });

    statements.length = 0;
    await batched();
    // The replay's COPY hits the rows already there and falls back to the INSERT, which skips them.
    expect(statements).toEqual(['INSERT']);
    expect(await rows(2)).toEqual(oneByOne);
  });
});
