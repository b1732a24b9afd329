import { startTestApp, TestApp } from '../support/app';
import { createDataType, recordsPath } from '../support/records-fixtures';

/** The records claims and the bulk's one-by-one path on EventStoreDB (claim streams, no multi-stream writes). */
describe('records on EventStoreDB (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ eventStoreDb: true });
  });
  afterAll(() => t.close());

  it('keeps slugs and externalIds unique, makes one record of racing upserts, and bulk-imports record by record', async () => {
    const a = await t.bootstrap();
    const type = await createDataType(t, a.workspaceId, a.apiKey, {
      slug: 'c',
      fields: [{ slug: 'n', fieldType: 'number' }],
    });
    const dupType = await t.request('POST', `/w/${a.workspaceId}/data-types`, {
      token: a.apiKey,
      body: { name: 'C', slug: 'c', fields: [] },
    });
    expect(dupType.status).toBe(409);
    const race = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        t.request('POST', `/w/${a.workspaceId}/data-types/${type.id}/upsert/same`, {
          token: a.apiKey,
          body: { fieldValues: { n: i } },
        }),
      ),
    );
    expect(race.filter((r) => r.status === 201)).toHaveLength(1);
    expect(race.filter((r) => r.status === 200)).toHaveLength(5);
    expect(new Set(race.map((r) => r.body.id)).size).toBe(1);
    const bulk = await t.request('POST', `${recordsPath(a.workspaceId, type.id)}/bulk`, {
      token: a.apiKey,
      body: {
        records: [
          ...Array.from({ length: 10 }, (_, i) => ({ externalId: `b${i}`, fieldValues: { n: i } })),
          { externalId: 'same', fieldValues: { n: 99 } },
        ],
      },
    });
    expect(bulk.body).toMatchObject({ success: false, totalCount: 11, importedCount: 10 });
    expect(bulk.body.errors).toEqual([
      {
        index: 10,
        externalId: 'same',
        detail: `externalId: record ${race[0].body.id} of this data type already has this externalId; send upsert: true to update it`,
      },
    ]);
    const list = await t.request('GET', `${recordsPath(a.workspaceId, type.id)}?pageSize=100`, {
      token: a.apiKey,
    });
    expect(list.body.total).toBe(11);
  });
});
