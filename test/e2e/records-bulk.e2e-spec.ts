import { startTestApp, TestApp } from '../support/app';
import { keyWithScopes, signup } from '../support/identity-fixtures';
import { CONTACT_FIELDS, createDataType, recordsPath } from '../support/records-fixtures';

describe('records: bulk, signup data and indexes (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  describe('bulk', () => {
    it('writes each record on its own and reports mixed success and failure in the spec shape', async () => {
      const a = await t.bootstrap();
      const type = await createDataType(t, a.workspaceId, a.apiKey, { slug: 'c', fields: CONTACT_FIELDS });
      const base = recordsPath(a.workspaceId, type.id);
      const existing = await t.request('POST', base, {
        token: a.apiKey,
        body: { externalId: 'old', fieldValues: { name: 'Old' } },
      });
      expect(existing.status).toBe(201);
      const records = [
        { externalId: 'n1', fieldValues: { name: 'One', phone: '+44 20 7946 0958' } },
        { externalId: 'n2', fieldValues: { email: 'no-name@example.com' } },
        { externalId: 'n1', fieldValues: { name: 'Again' } },
        { externalId: 'old', fieldValues: { name: 'Overwrite?' } },
        'not a record',
        { externalId: 'n5', fieldValues: { name: 'Five' }, colour: 'red' },
        { fieldValues: { name: 'No external id', tier: 'gold' } },
        { externalId: 'n7', memberId: 999999, fieldValues: { name: 'Ghost' } },
        { externalId: 'n8', memberId: a.memberId, fieldValues: { name: 'Mine', age: 'secret-age' } },
      ];
      const res = await t.request('POST', `${base}/bulk`, { token: a.apiKey, body: { records } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ success: false, totalCount: 9, importedCount: 2 });
      expect(res.body.results).toEqual([
        { index: 0, status: 'created', recordId: expect.any(Number), externalId: 'n1' },
        { index: 1, status: 'failed', recordId: null, externalId: 'n2' },
        { index: 2, status: 'failed', recordId: null, externalId: 'n1' },
        { index: 3, status: 'failed', recordId: null, externalId: 'old' },
        { index: 4, status: 'failed', recordId: null, externalId: null },
        { index: 5, status: 'failed', recordId: null, externalId: 'n5' },
        { index: 6, status: 'created', recordId: expect.any(Number), externalId: null },
        { index: 7, status: 'failed', recordId: null, externalId: 'n7' },
        { index: 8, status: 'failed', recordId: null, externalId: 'n8' },
      ]);
      expect(res.body.errors).toEqual([
        { index: 1, externalId: 'n2', detail: 'fieldValues.name: is required' },
        { index: 2, externalId: 'n1', detail: 'externalId: duplicates record 0 of this request' },
        {
          index: 3,
          externalId: 'old',
          detail: `externalId: record ${existing.body.id} of this data type already has this externalId; send upsert: true to update it`,
        },
        { index: 4, externalId: null, detail: 'record: must be an object' },
        { index: 5, externalId: 'n5', detail: 'colour: unknown field' },
        { index: 7, externalId: 'n7', detail: 'memberId: no member with this id in this workspace' },
        { index: 8, externalId: 'n8', detail: 'fieldValues.age: must be a number' },
      ]);
      expect(JSON.stringify(res.body)).not.toContain('secret');
      // Records are written side by side: the events' order is not the request's.
      const events = await t.eventsOf(res);
      expect(events.map((e) => e.type)).toEqual(['DataRecordCreated', 'DataRecordCreated']);
      const byExternalId = new Map(
        events.map((e) => [(e.data as { externalId: string | null }).externalId, e]),
      );
      expect(byExternalId.get('n1')!.data).toMatchObject({
        fieldValues: { name: 'One', phone: '+442079460958' },
      });
      expect(byExternalId.get(null)!.data).toMatchObject({
        fieldValues: { name: 'No external id', tier: 'gold' },
      });
      const old = await t.request('GET', `${base}/${existing.body.id}`, { token: a.apiKey });
      expect(old.body.fieldValues).toEqual({ name: 'Old' });
    });

    it('with upsert updates records matched by externalId and creates the rest', async () => {
      const a = await t.bootstrap();
      const type = await createDataType(t, a.workspaceId, a.apiKey, { slug: 'u', fields: CONTACT_FIELDS });
      const base = recordsPath(a.workspaceId, type.id);
      const first = await t.request('POST', `${base}/bulk`, {
        token: a.apiKey,
        body: {
          records: Array.from({ length: 20 }, (_, i) => ({
            externalId: `e${i}`,
            fieldValues: { name: `N${i}`, age: i },
          })),
        },
      });
      expect(first.body).toMatchObject({ success: true, totalCount: 20, importedCount: 20, errors: null });
      const ids = (first.body.results as { recordId: number }[]).map((r) => r.recordId);
      const second = await t.request('POST', `${base}/bulk`, {
        token: a.apiKey,
        body: {
          upsert: true,
          records: [
            { externalId: 'e0', fieldValues: { age: 100 } },
            { externalId: 'e1', fieldValues: { name: 'Renamed' } },
            { externalId: 'new', fieldValues: { name: 'New' } },
            { externalId: 'e2', fieldValues: { age: 'x' } },
          ],
        },
      });
      expect(second.body).toMatchObject({ success: false, totalCount: 4, importedCount: 3 });
      expect(second.body.results).toEqual([
        { index: 0, status: 'updated', recordId: ids[0], externalId: 'e0' },
        { index: 1, status: 'updated', recordId: ids[1], externalId: 'e1' },
        { index: 2, status: 'created', recordId: expect.any(Number), externalId: 'new' },
        { index: 3, status: 'failed', recordId: null, externalId: 'e2' },
      ]);
      expect(second.body.errors).toEqual([
        { index: 3, externalId: 'e2', detail: 'fieldValues.age: must be a number' },
      ]);
      const events = await t.eventsOf(second);
      expect(events.map((e) => e.type).sort()).toEqual([
        'DataRecordCreated',
        'DataRecordUpdated',
        'DataRecordUpdated',
      ]);
      const e0 = await t.request('GET', `${base}/${ids[0]}`, { token: a.apiKey });
      expect(e0.body.fieldValues).toEqual({ name: 'N0', age: 100 });
    });

    it('makes one record per externalId when bulk upserts race each other', async () => {
      const a = await t.bootstrap();
      const type = await createDataType(t, a.workspaceId, a.apiKey, {
        slug: 'r',
        fields: [{ slug: 'n', fieldType: 'number' }],
      });
      const base = recordsPath(a.workspaceId, type.id);
      const body = (k: number) => ({
        upsert: true,
        records: Array.from({ length: 30 }, (_, i) => ({ externalId: `x${i}`, fieldValues: { n: k } })),
      });
      const runs = await Promise.all(
        [1, 2, 3, 4].map((k) => t.request('POST', `${base}/bulk`, { token: a.apiKey, body: body(k) })),
      );
      for (const r of runs) expect(r.body).toMatchObject({ success: true, importedCount: 30 });
      const all = await t.request('GET', `${base}?pageSize=100`, { token: a.apiKey });
      expect(all.body.total).toBe(30);
      expect(new Set((all.body.items as { externalId: string }[]).map((r) => r.externalId)).size).toBe(30);
      const created = runs.flatMap((r) =>
        (r.body.results as { status: string }[]).filter((x) => x.status === 'created'),
      );
      expect(created).toHaveLength(30);
    });

    it('refuses more than 10,000 records and an admin-only type without records:admin', async () => {
      const a = await t.bootstrap();
      const type = await createDataType(t, a.workspaceId, a.apiKey, { slug: 'big', fields: [] });
      const tooMany = await t.request('POST', `${recordsPath(a.workspaceId, type.id)}/bulk`, {
        token: a.apiKey,
        body: { records: Array.from({ length: 10_001 }, () => ({ fieldValues: {} })) },
      });
      expect(tooMany.status).toBe(400);
      expect(tooMany.body.detail).toMatch(/^records:/);
      expect(await t.eventsOf(tooMany)).toEqual([]);
      // The body's own shape (checked without copying the records): 400 naming the field, nothing written.
      const one = [{ fieldValues: {} }];
      const badBodies: [unknown, RegExp][] = [
        [{ records: one, upsert: 'yes' }, /^upsert: must be a boolean/],
        [{ records: one, extra: 1 }, /^extra: unknown field/],
        [{ records: { 0: {} } }, /^records: must be an array/],
        [{}, /^records: must be an array/],
        [[{ fieldValues: {} }], /^body: must be a JSON object/],
      ];
      for (const [body, detail] of badBodies) {
        const res = await t.request('POST', `${recordsPath(a.workspaceId, type.id)}/bulk`, {
          token: a.apiKey,
          body,
        });
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expect(res.body.detail).toMatch(detail);
        expect(await t.eventsOf(res)).toEqual([]);
      }
      const secret = await createDataType(t, a.workspaceId, a.apiKey, {
        slug: 'secret',
        visibility: 'admin_only',
        fields: [],
      });
      // records:write without datatypes:read does not see the type (404); with it, it is told why (403).
      for (const [scopes, status] of [
        [['records:write'], 404],
        [['records:write', 'datatypes:read'], 403],
      ] as const) {
        const writer = await keyWithScopes(t, a.apiKey, [...scopes]);
        const refused = await t.request('POST', `${recordsPath(a.workspaceId, secret.id)}/bulk`, {
          token: writer,
          body: { records: [{ fieldValues: {} }] },
        });
        expect({ scopes, status: refused.status }).toEqual({ scopes, status });
      }
    });

    it('imports 10,000 records of a 6-field type (3 indexed), and the planner uses the indexes for search and field filters', async () => {
      const a = await t.bootstrap();
      const type = await createDataType(t, a.workspaceId, a.apiKey, {
        slug: 'bulk10k',
        fields: [
          { slug: 'name', fieldType: 'text', shouldIndex: true },
          { slug: 'email', fieldType: 'email', shouldIndex: true },
          { slug: 'tier', fieldType: 'select', options: ['gold', 'silver', 'bronze'], shouldIndex: true },
          { slug: 'age', fieldType: 'number' },
          { slug: 'born', fieldType: 'date' },
          { slug: 'note', fieldType: 'text' },
        ],
      });
      const base = recordsPath(a.workspaceId, type.id);
      const records = Array.from({ length: 10_000 }, (_, i) => ({
        externalId: `b${i}`,
        fieldValues: {
          name: `Person ${i} Zq${i}x`,
          email: `p${i}@example.com`,
          tier: ['gold', 'silver', 'bronze'][i % 3],
          age: i % 90,
          born: '1990-01-01',
          note: 'n',
        },
      }));
      const res = await t.request('POST', `${base}/bulk`, { token: a.apiKey, body: { records } });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        success: true,
        totalCount: 10_000,
        importedCount: 10_000,
        errors: null,
      });
      // Read your writes: queryable as soon as the response is in.
      const found = await t.request('GET', `${base}?search=zq4242x`, { token: a.apiKey });
      expect(found.body.items).toHaveLength(1);
      expect(found.body.items[0].externalId).toBe('b4242');
      const byEmail = await t.request('GET', `${base}?field.email=P777@example.com`, { token: a.apiKey });
      expect(byEmail.body.items.map((r: { externalId: string }) => r.externalId)).toEqual(['b777']);

      const pool = t.database.pool({ max: 1 });
      await pool.query('ANALYZE data_records');
      const plan = async (where: string, param: string) => {
        const { rows } = await pool.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN SELECT id FROM data_records WHERE workspace_id = $1 AND data_type_id = $2 AND ${where}`,
          [a.workspaceId, type.id, param],
        );
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      };
      expect(await plan(`search_text ILIKE $3 ESCAPE '\\'`, '%zq4242x%')).toMatch(/data_records_search/);
      expect(
        await plan('indexed_values @> $3::jsonb', JSON.stringify({ email: 'p777@example.com' })),
      ).toMatch(/data_records_indexed_values/);
    }, 120_000);
  });

  describe("signup's data part", () => {
    it('upserts the records of the data part for the member, in the same request', async () => {
      const a = await t.bootstrap();
      const profile = await createDataType(t, a.workspaceId, a.apiKey, {
        slug: 'profile',
        isCollection: false,
        fields: [
          { slug: 'dob', fieldType: 'date', required: true },
          { slug: 'mobile', fieldType: 'phone' },
        ],
      });
      const visits = await createDataType(t, a.workspaceId, a.apiKey, {
        slug: 'visits',
        fields: [{ slug: 'note', fieldType: 'text' }],
      });
      const res = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
        token: a.apiKey,
        body: {
          member: { email: 'pat@example.com', externalId: 'u-1' },
          data: {
            profile: { values: { dob: '1980-05-04', mobile: '+1 415 555 0100' } },
            visits: { externalId: 'v-1', values: { note: 'first' } },
          },
        },
      });
      expect(res.status).toBe(201);
      const memberId = res.body.member.id as number;
      const events = await t.expectEvents(res, [
        { type: 'MemberCreated' },
        { type: 'AccountRegistered' },
        { type: 'MemberTokenIssued' },
        {
          type: 'DataRecordCreated',
          data: { dataTypeId: profile.id, memberId, fieldValues: { mobile: '+14155550100' } },
        },
        {
          type: 'DataRecordCreated',
          data: {
            dataTypeId: visits.id,
            memberId,
            externalId: 'v-1',
            member: { id: memberId, email: 'pat@example.com' },
          },
        },
      ]);
      expect(events[3].streamName).toMatch(/^record-\d+$/);
      const mine = await t.request('GET', `${recordsPath(a.workspaceId, profile.id)}?memberId=${memberId}`, {
        token: res.body.token,
      });
      expect(mine.body.items).toHaveLength(1);
      expect(mine.body.items[0].fieldValues).toEqual({ dob: '1980-05-04', mobile: '+14155550100' });

      // The same person again: the member exists (200), its records are updated in place.
      const again = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
        token: a.apiKey,
        body: {
          member: { externalId: 'u-1', email: 'pat@example.com' },
          data: {
            profile: { values: { dob: '1980-05-05' } },
            visits: { externalId: 'v-1', values: { note: 'first' } },
          },
        },
      });
      expect(again.status).toBe(200);
      await t.expectEvents(again, [
        { type: 'MemberTokenIssued' },
        {
          type: 'DataRecordUpdated',
          data: { changes: { dob: '1980-05-05' }, previous: { dob: '1980-05-04' } },
        },
      ]);
    });

    it('refuses an unknown slug or a bad value with 400 and creates nothing; needs records:write', async () => {
      const a = await t.bootstrap();
      await createDataType(t, a.workspaceId, a.apiKey, {
        slug: 'profile',
        isCollection: false,
        fields: [{ slug: 'dob', fieldType: 'date', required: true }],
      });
      await createDataType(t, a.workspaceId, a.apiKey, { slug: 'visits', fields: [] });
      const cases: [unknown, RegExp][] = [
        [{ nope: { values: {} } }, /^data\.nope: no data type with this slug exists in this workspace/],
        [
          { profile: { values: { dob: 'yesterday' } } },
          /^data\.profile\.values\.dob: must be an ISO 8601 date/,
        ],
        [{ profile: { values: {} } }, /^data\.profile\.values\.dob: is required/],
        [{ profile: { values: { dob: '2000-01-01', x: 1 } } }, /^data\.profile\.values\.x: unknown field/],
        [
          { profile: { externalId: 'p', values: { dob: '2000-01-01' }, extra: 1 } },
          /^data\.profile\.extra: unknown field/,
        ],
        [{ profile: 'x' }, /^data\.profile: must be an object/],
        [
          { visits: { values: {} } },
          /^data\.visits\.externalId: is required for a data type that is a collection/,
        ],
      ];
      for (const [data, detail] of cases) {
        const res = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
          token: a.apiKey,
          body: { member: { email: 'nobody@example.com' }, data },
        });
        expect({ data, status: res.status }).toEqual({ data, status: 400 });
        expect(res.body.detail).toMatch(detail);
        expect(await t.eventsOf(res)).toEqual([]);
      }
      const membersOnly = await keyWithScopes(t, a.apiKey, ['members:write']);
      const refused = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
        token: membersOnly,
        body: {
          member: { email: 'nobody@example.com' },
          data: { profile: { values: { dob: '2000-01-01' } } },
        },
      });
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toMatch(/records:write/);
      expect(await t.eventsOf(refused)).toEqual([]);
      const members = await t.request('GET', `/w/${a.workspaceId}/members?email=nobody@example.com`, {
        token: a.apiKey,
      });
      expect(members.body.total).toBe(0);
      // Without data, members:write alone signs up as before.
      const plain = await signup(t, a.workspaceId, membersOnly, { email: 'nobody@example.com' });
      expect(plain.wasCreated).toBe(true);
    });
  });
});
