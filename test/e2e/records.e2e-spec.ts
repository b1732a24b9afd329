import { startTestApp, TestApp } from '../support/app';
import { CONTACT_FIELDS, createDataType, recordsPath } from '../support/records-fixtures';

describe('data types and records (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  describe('data types', () => {
    it('creates a type with its fields, answers it with id, ETag and Location, and appends DataTypeCreated', async () => {
      const a = await t.bootstrap();
      const res = await t.request('POST', `/w/${a.workspaceId}/data-types`, {
        token: a.apiKey,
        body: {
          name: 'Patient profile',
          slug: 'patient_profile',
          isCollection: false,
          fields: [
            { name: 'Full name', slug: 'full_name', fieldType: 'text', required: true, shouldIndex: true },
            { name: 'Email', slug: 'email', fieldType: 'email' },
            { name: 'Plan', slug: 'plan', fieldType: 'select', options: ['basic', 'plus'] },
          ],
        },
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        name: 'Patient profile',
        slug: 'patient_profile',
        isCollection: false,
        visibility: 'workspace',
        ownerMemberId: a.memberId,
        fields: [
          { name: 'Full name', slug: 'full_name', fieldType: 'text', required: true, shouldIndex: true },
          { name: 'Email', slug: 'email', fieldType: 'email', required: false, shouldIndex: false },
          { slug: 'plan', fieldType: 'select', options: ['basic', 'plus'] },
        ],
      });
      expect(typeof res.body.id).toBe('number');
      expect(res.headers.get('location')).toBe(`/api/v2/w/${a.workspaceId}/data-types/${res.body.id}`);
      expect(res.headers.get('etag')).toBe('"1"');
      await t.expectEvents(res, [
        {
          type: 'DataTypeCreated',
          stream: `datatype-${res.body.id}`,
          data: {
            dataTypeId: res.body.id,
            slug: 'patient_profile',
            isCollection: false,
            visibility: 'workspace',
          },
        },
      ]);
      const get = await t.request('GET', `/w/${a.workspaceId}/data-types/${res.body.id}`, {
        token: a.apiKey,
      });
      expect(get.status).toBe(200);
      expect(get.body).toEqual(res.body);
      const list = await t.request('GET', `/w/${a.workspaceId}/data-types?search=patient`, {
        token: a.apiKey,
      });
      expect(list.body).toMatchObject({ total: 1, page: 1, pageSize: 50, items: [{ id: res.body.id }] });
    });

    it('defaults to a workspace-wide collection', async () => {
      const a = await t.bootstrap();
      const type = await createDataType(t, a.workspaceId, a.apiKey, { slug: 'notes', fields: [] });
      expect(type).toMatchObject({ isCollection: true, visibility: 'workspace', fields: [] });
    });

    it('refuses bad schemas with 400 naming the field, appending nothing', async () => {
      const a = await t.bootstrap();
      const field = { name: 'F', slug: 'f', fieldType: 'text' };
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ name: 'X', slug: 'Bad-Slug', fields: [] }, /^slug: must start with a lower-case letter/],
        [{ name: 'X', slug: '1abc', fields: [] }, /^slug:/],
        [{ name: 'X', slug: 'x'.repeat(65), fields: [] }, /^slug: must be (at most|shorter)/],
        [{ name: ' ', slug: 'x', fields: [] }, /^name: must not be empty/],
        [{ name: 'X', fields: [] }, /^slug:/],
        [{ name: 'X', slug: 'x' }, /^fields:/],
        [{ name: 'X', slug: 'x', fields: [{ ...field, slug: 'F' }] }, /^fields\.0\.slug:/],
        [
          { name: 'X', slug: 'x', fields: [field, { ...field }] },
          /^fields\.1\.slug: "f" is used by another field/,
        ],
        [
          { name: 'X', slug: 'x', fields: [{ ...field, fieldType: 'colour' }] },
          /^fields\.0\.fieldType: must be one of/,
        ],
        [
          { name: 'X', slug: 'x', fields: [{ ...field, fieldType: 'select' }] },
          /^fields\.0\.options: a select field needs/,
        ],
        [
          { name: 'X', slug: 'x', fields: [{ ...field, options: ['a'] }] },
          /^fields\.0\.options: only a select field/,
        ],
        [
          { name: 'X', slug: 'x', fields: [{ ...field, fieldType: 'select', options: ['a', 'a'] }] },
          /options must be distinct/,
        ],
        [{ name: 'X', slug: 'x', visibility: 'secret', fields: [] }, /^visibility:/],
        [{ name: 'X', slug: 'x', fields: [{ ...field, colour: 'red' }] }, /fields\.0\.colour: unknown field/],
      ];
      for (const [body, detail] of cases) {
        const res = await t.request('POST', `/w/${a.workspaceId}/data-types`, { token: a.apiKey, body });
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expect(res.body.detail).toMatch(detail);
        expect(await t.eventsOf(res)).toEqual([]);
      }
    });

    it('keeps slugs unique per workspace (409), concurrent creations included, and frees a deleted slug', async () => {
      const a = await t.bootstrap();
      const b = await t.bootstrap();
      const tries = await Promise.all(
        Array.from({ length: 8 }, () =>
          t.request('POST', `/w/${a.workspaceId}/data-types`, {
            token: a.apiKey,
            body: { name: 'C', slug: 'contacts', fields: [] },
          }),
        ),
      );
      expect(tries.filter((r) => r.status === 201)).toHaveLength(1);
      for (const r of tries.filter((x) => x.status !== 201)) {
        expect(r.status).toBe(409);
        expect(r.body.detail).toMatch(
          /^slug: another data type of this workspace already has the slug "contacts"/,
        );
      }
      // Another workspace has its own slugs.
      await createDataType(t, b.workspaceId, b.apiKey, { slug: 'contacts', fields: [] });
      const id = tries.find((r) => r.status === 201)!.body.id;
      const del = await t.request('DELETE', `/w/${a.workspaceId}/data-types/${id}`, { token: a.apiKey });
      expect(del.status).toBe(204);
      await t.expectEvents(del, [{ type: 'DataTypeDeleted', stream: `datatype-${id}` }]);
      await createDataType(t, a.workspaceId, a.apiKey, { slug: 'contacts', fields: [] });
    });

    it('updates name, fields and flags; removing or retyping a field with values is 409 unless force', async () => {
      const a = await t.bootstrap();
      const type = await createDataType(t, a.workspaceId, a.apiKey, {
        slug: 'visits',
        fields: [
          { slug: 'note', fieldType: 'text' },
          { slug: 'score', fieldType: 'number' },
          { slug: 'empty', fieldType: 'text' },
        ],
      });
      const path = `/w/${a.workspaceId}/data-types/${type.id}`;
      const rec = await t.request('POST', recordsPath(a.workspaceId, type.id), {
        token: a.apiKey,
        body: { fieldValues: { note: 'hello', score: 3 } },
      });
      expect(rec.status).toBe(201);

      const renamed = await t.request('PUT', path, {
        token: a.apiKey,
        body: {
          name: 'Visits',
          fields: [
            { name: 'Note', slug: 'note', fieldType: 'text', shouldIndex: true, required: true },
            { name: 'Score', slug: 'score', fieldType: 'number' },
            { name: 'Empty', slug: 'empty', fieldType: 'text' },
            { name: 'Extra', slug: 'extra', fieldType: 'boolean' },
          ],
        },
      });
      expect(renamed.status).toBe(200);
      expect(renamed.headers.get('etag')).toBe('"2"');
      expect(renamed.body.fields.map((f: { slug: string }) => f.slug)).toEqual([
        'note',
        'score',
        'empty',
        'extra',
      ]);
      await t.expectEvents(renamed, [{ type: 'DataTypeUpdated', data: { name: 'Visits' } }]);

      // 'empty' holds no value: it may go; 'score' holds one: not without force.
      const keep = [{ name: 'Note', slug: 'note', fieldType: 'text' }];
      const refused = await t.request('PUT', path, {
        token: a.apiKey,
        body: { fields: [...keep, { name: 'Score', slug: 'score', fieldType: 'text' }] },
      });
      expect(refused.status).toBe(409);
      expect(refused.body.detail).toMatch(/^fields: score hold values in existing records/);
      expect(refused.body.detail).not.toContain('hello');
      const refused2 = await t.request('PUT', path, { token: a.apiKey, body: { fields: keep } });
      expect(refused2.status).toBe(409);
      expect(await t.eventsOf(refused2)).toEqual([]);
      const forced = await t.request('PUT', path, { token: a.apiKey, body: { fields: keep, force: true } });
      expect(forced.status).toBe(200);
      await t.expectEvents(forced, [
        { type: 'DataTypeUpdated', data: { removedFields: ['score', 'empty', 'extra'] } },
      ]);
      const after = await t.request('GET', `${recordsPath(a.workspaceId, type.id)}/${rec.body.id}`, {
        token: a.apiKey,
      });
      expect(after.body.fieldValues).toEqual({ note: 'hello' });

      // isCollection cannot change while records exist.
      const coll = await t.request('PUT', path, { token: a.apiKey, body: { isCollection: false } });
      expect(coll.status).toBe(409);
      expect(coll.body.detail).toMatch(/^isCollection:/);
      // If-Match: a stale version is 412.
      const stale = await t.request('PUT', path, {
        token: a.apiKey,
        headers: { 'if-match': '"1"' },
        body: { name: 'X' },
      });
      expect(stale.status).toBe(412);
    });

    it('refuses to delete a type with records (409) unless force; needs datatypes:admin', async () => {
      const a = await t.bootstrap();
      const type = await createDataType(t, a.workspaceId, a.apiKey, {
        slug: 'd',
        fields: [{ slug: 'n', fieldType: 'text' }],
      });
      const rec = await t.request('POST', recordsPath(a.workspaceId, type.id), {
        token: a.apiKey,
        body: { fieldValues: { n: 'x' }, externalId: 'kept-id' },
      });
      expect(rec.status).toBe(201);
      const path = `/w/${a.workspaceId}/data-types/${type.id}`;
      const refused = await t.request('DELETE', path, { token: a.apiKey });
      expect(refused.status).toBe(409);
      expect(refused.body.detail).toMatch(/has 1 record/);
      const { keyWithScopes } = await import('../support/identity-fixtures');
      const writer = await keyWithScopes(t, a.apiKey, ['datatypes:write']);
      const noAdmin = await t.request('DELETE', `${path}?force=true`, { token: writer });
      expect(noAdmin.status).toBe(403);
      const forced = await t.request('DELETE', `${path}?force=true`, { token: a.apiKey });
      expect(forced.status).toBe(204);
      // The record's history ends too (webhooks see it go), after the type's own event.
      await t.expectEvents(forced, [
        { type: 'DataTypeDeleted', stream: `datatype-${type.id}` },
        { type: 'DataRecordDeleted', stream: `record-${rec.body.id}` },
      ]);
      expect((await t.request('GET', path, { token: a.apiKey })).status).toBe(404);
      expect((await t.request('GET', recordsPath(a.workspaceId, type.id), { token: a.apiKey })).status).toBe(
        404,
      );
    });
  });

  describe('records', () => {
    it('creates, reads, updates (partial, null clears), lists and deletes a record, with its events in its own stream', async () => {
      const a = await t.bootstrap();
      const type = await createDataType(t, a.workspaceId, a.apiKey, {
        slug: 'contacts',
        fields: CONTACT_FIELDS,
      });
      const base = recordsPath(a.workspaceId, type.id);
      const created = await t.request('POST', base, {
        token: a.apiKey,
        body: {
          externalId: 'crm-1',
          memberId: a.memberId,
          fieldValues: {
            name: 'Ann Smith',
            email: 'Ann@Example.COM',
            phone: '+1 (415) 555-0123',
            age: 41,
            tier: 'gold',
            born: '1983-02-28',
          },
        },
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        dataTypeId: type.id,
        memberId: a.memberId,
        externalId: 'crm-1',
        fieldValues: {
          name: 'Ann Smith',
          email: 'ann@example.com',
          phone: '+14155550123',
          age: 41,
          tier: 'gold',
          born: '1983-02-28',
        },
      });
      const id = created.body.id as number;
      expect(created.headers.get('location')).toBe(`/api/v2${base}/${id}`);
      expect(created.headers.get('etag')).toBe('"1"');
      await t.expectEvents(created, [
        {
          type: 'DataRecordCreated',
          stream: `record-${id}`,
          data: {
            recordId: id,
            dataTypeId: type.id,
            externalId: 'crm-1',
            fieldValues: { phone: '+14155550123' },
            dataType: { id: type.id, slug: 'contacts', name: 'contacts' },
            member: { id: a.memberId },
          },
        },
      ]);
      // The POST answers with the record as decided, not read back: exactly what GET shows.
      const read = await t.request('GET', `${base}/${id}`, { token: a.apiKey });
      expect(read.status).toBe(200);
      expect(read.body).toEqual(created.body);
      expect(read.headers.get('etag')).toBe(created.headers.get('etag'));

      const updated = await t.request('PUT', `${base}/${id}`, {
        token: a.apiKey,
        headers: { 'if-match': '"1"' },
        body: { fieldValues: { age: 42, born: null, tier: 'gold' } },
      });
      expect(updated.status).toBe(200);
      expect(updated.headers.get('etag')).toBe('"2"');
      expect(updated.body.fieldValues).toEqual({
        name: 'Ann Smith',
        email: 'ann@example.com',
        phone: '+14155550123',
        age: 42,
        tier: 'gold',
      });
      await t.expectEvents(updated, [
        {
          type: 'DataRecordUpdated',
          stream: `record-${id}`,
          data: { changes: { age: 42, born: null }, previous: { age: 41, born: '1983-02-28' } },
        },
      ]);
      // Nothing changes: no event.
      const same = await t.request('PUT', `${base}/${id}`, {
        token: a.apiKey,
        body: { fieldValues: { age: 42 } },
      });
      expect(same.status).toBe(200);
      await t.expectEvents(same, []);
      const stale = await t.request('PUT', `${base}/${id}`, {
        token: a.apiKey,
        headers: { 'if-match': '"1"' },
        body: { fieldValues: { age: 1 } },
      });
      expect(stale.status).toBe(412);

      const list = await t.request('GET', `${base}?page_size=10`, { token: a.apiKey });
      expect(list.body).toMatchObject({
        total: 1,
        page: 1,
        pageSize: 10,
        items: [{ id, externalId: 'crm-1' }],
      });

      const del = await t.request('DELETE', `${base}/${id}`, { token: a.apiKey });
      expect(del.status).toBe(204);
      await t.expectEvents(del, [
        { type: 'DataRecordDeleted', stream: `record-${id}`, data: { recordId: id } },
      ]);
      expect((await t.request('GET', `${base}/${id}`, { token: a.apiKey })).status).toBe(404);
      // The whole history is the record's stream.
      const history = await t.store.readStream(`record-${id}`);
      expect(history.map((e) => e.type)).toEqual([
        'DataRecordCreated',
        'DataRecordUpdated',
        'DataRecordDeleted',
      ]);
      // Its externalId is free again.
      const again = await t.request('POST', base, {
        token: a.apiKey,
        body: { externalId: 'crm-1', fieldValues: { name: 'B' } },
      });
      expect(again.status).toBe(201);
    });

    it('validates every value against its field (400 naming the field, never echoing the value)', async () => {
      const a = await t.bootstrap();
      const type = await createDataType(t, a.workspaceId, a.apiKey, {
        slug: 'everything',
        fields: [
          ...CONTACT_FIELDS,
          { slug: 'active', fieldType: 'boolean' },
          { slug: 'seen', fieldType: 'datetime' },
          { slug: 'site', fieldType: 'url' },
        ],
      });
      const base = recordsPath(a.workspaceId, type.id);
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ fieldValues: { email: 'a@b.co' } }, /^fieldValues\.name: is required/],
        [{ fieldValues: { name: null } }, /^fieldValues\.name: is required/],
        [{ fieldValues: { name: 'A', colour: 'red' } }, /^fieldValues\.colour: unknown field/],
        [{ fieldValues: { name: 7 } }, /^fieldValues\.name: must be a string/],
        [
          { fieldValues: { name: 'A', email: 'secret-not-an-email' } },
          /^fieldValues\.email: must be an email address$/,
        ],
        [
          { fieldValues: { name: 'A', phone: 'call 555 secret' } },
          /^fieldValues\.phone: must be a phone number/,
        ],
        [{ fieldValues: { name: 'A', age: '41' } }, /^fieldValues\.age: must be a number/],
        [{ fieldValues: { name: 'A', tier: 'bronze' } }, /^fieldValues\.tier: must be one of gold, silver/],
        [{ fieldValues: { name: 'A', born: '1983-02-30' } }, /^fieldValues\.born: must be an ISO 8601 date/],
        [{ fieldValues: { name: 'A', born: '28/02/1983' } }, /^fieldValues\.born:/],
        [{ fieldValues: { name: 'A', active: 'yes' } }, /^fieldValues\.active: must be a boolean/],
        [
          { fieldValues: { name: 'A', seen: '2024-05-01 12:00' } },
          /^fieldValues\.seen: must be an ISO 8601 date-time/,
        ],
        [
          { fieldValues: { name: 'A', site: 'ftp://x.org' } },
          /^fieldValues\.site: must be an http or https URL/,
        ],
        [{ fieldValues: { name: 'A' }, memberId: 999999 }, /^memberId: no member with this id/],
        [{ fieldValues: { name: 'A' }, memberId: 0 }, /^memberId:/],
        [{ fieldValues: { name: 'A' }, externalId: 'x'.repeat(256) }, /^externalId:/],
        [{ fieldValues: [] }, /^fieldValues:/],
        [{}, /^fieldValues:/],
        [{ fieldValues: {}, colour: 1 }, /colour: unknown field/],
      ];
      for (const [body, detail] of cases) {
        const res = await t.request('POST', base, { token: a.apiKey, body });
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expect(res.body.detail).toMatch(detail);
        expect(res.body.detail).not.toMatch(/secret/);
        expect(await t.eventsOf(res)).toEqual([]);
      }
      const ok = await t.request('POST', base, {
        token: a.apiKey,
        body: {
          fieldValues: {
            name: 'A',
            active: true,
            seen: '2024-05-01T14:00:00+02:00',
            site: 'https://example.org/a',
            born: null,
          },
        },
      });
      expect(ok.status).toBe(201);
      expect(ok.body.fieldValues).toEqual({
        name: 'A',
        active: true,
        seen: '2024-05-01T14:00:00+02:00',
        site: 'https://example.org/a',
      });
      const badUpdate = await t.request('PUT', `${base}/${ok.body.id}`, {
        token: a.apiKey,
        body: { fieldValues: { name: null } },
      });
      expect(badUpdate.status).toBe(400);
      expect(badUpdate.body.detail).toMatch(/^fieldValues\.name: is required and cannot be cleared/);
    });

    it('keeps externalId unique per data type (409), and one record per member in a type that is no collection', async () => {
      const a = await t.bootstrap();
      const one = await createDataType(t, a.workspaceId, a.apiKey, {
        slug: 'one',
        fields: [{ slug: 'n', fieldType: 'text' }],
      });
      const two = await createDataType(t, a.workspaceId, a.apiKey, {
        slug: 'two',
        fields: [{ slug: 'n', fieldType: 'text' }],
      });
      const first = await t.request('POST', recordsPath(a.workspaceId, one.id), {
        token: a.apiKey,
        body: { externalId: 'x-1', fieldValues: {} },
      });
      expect(first.status).toBe(201);
      const dup = await t.request('POST', recordsPath(a.workspaceId, one.id), {
        token: a.apiKey,
        body: { externalId: 'x-1', fieldValues: {} },
      });
      expect(dup.status).toBe(409);
      expect(dup.body.detail).toBe(
        `externalId: record ${first.body.id} of this data type already has this externalId`,
      );
      const other = await t.request('POST', recordsPath(a.workspaceId, two.id), {
        token: a.apiKey,
        body: { externalId: 'x-1', fieldValues: {} },
      });
      expect(other.status).toBe(201);

      const profile = await createDataType(t, a.workspaceId, a.apiKey, {
        slug: 'profile',
        isCollection: false,
        fields: [],
      });
      const p1 = await t.request('POST', recordsPath(a.workspaceId, profile.id), {
        token: a.apiKey,
        body: { memberId: a.memberId, fieldValues: {} },
      });
      expect(p1.status).toBe(201);
      const p2 = await t.request('POST', recordsPath(a.workspaceId, profile.id), {
        token: a.apiKey,
        body: { memberId: a.memberId, fieldValues: {} },
      });
      expect(p2.status).toBe(409);
      expect(p2.body.detail).toMatch(/^memberId: this data type is not a collection/);
      // Unowned records are not limited.
      for (let i = 0; i < 2; i++)
        expect(
          (
            await t.request('POST', recordsPath(a.workspaceId, profile.id), {
              token: a.apiKey,
              body: { fieldValues: {} },
            })
          ).status,
        ).toBe(201);
    });

    it('upserts by externalId: 201 then 200 with wasCreated, and concurrent upserts of one externalId make one record', async () => {
      const a = await t.bootstrap();
      const type = await createDataType(t, a.workspaceId, a.apiKey, {
        slug: 'ups',
        fields: [{ slug: 'n', fieldType: 'number' }],
      });
      const path = `/w/${a.workspaceId}/data-types/${type.id}/upsert/ext-9`;
      const created = await t.request('POST', path, { token: a.apiKey, body: { fieldValues: { n: 1 } } });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ wasCreated: true, externalId: 'ext-9', fieldValues: { n: 1 } });
      expect(created.headers.get('location')).toBe(
        `/api/v2${recordsPath(a.workspaceId, type.id)}/${created.body.id}`,
      );
      await t.expectEvents(created, [{ type: 'DataRecordCreated', data: { externalId: 'ext-9' } }]);
      const updated = await t.request('POST', path, { token: a.apiKey, body: { fieldValues: { n: 2 } } });
      expect(updated.status).toBe(200);
      expect(updated.body).toMatchObject({ id: created.body.id, wasCreated: false, fieldValues: { n: 2 } });
      await t.expectEvents(updated, [
        { type: 'DataRecordUpdated', data: { changes: { n: 2 }, previous: { n: 1 } } },
      ]);
      const bad = await t.request('POST', path, { token: a.apiKey, body: { fieldValues: { n: 'two' } } });
      expect(bad.status).toBe(400);

      const race = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          t.request('POST', `/w/${a.workspaceId}/data-types/${type.id}/upsert/racer`, {
            token: a.apiKey,
            body: { fieldValues: { n: i } },
          }),
        ),
      );

      expect(race.map((r) => r.status).sort()).toEqual([
        200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 201,
      ]);
      expect(new Set(race.map((r) => r.body.id)).size).toBe(1);
      const list = await t.request('GET', `${recordsPath(a.workspaceId, type.id)}?externalId=racer`, {
        token: a.apiKey,
      });
      expect(list.body.total).toBe(1);
    });

    it('lists with search, field filters, memberId, externalId, time window, sort and pagination', async () => {
      const a = await t.bootstrap();
      const type = await createDataType(t, a.workspaceId, a.apiKey, {
        slug: 'people',
        fields: CONTACT_FIELDS,
      });
      const base = recordsPath(a.workspaceId, type.id);
      const people = [
        { name: 'Ann Smith', email: 'ann@example.com', tier: 'gold', age: 30 },
        { name: 'Bob Stone', email: 'bob@corp.io', tier: 'silver', age: 40 },
        { name: 'Cara 100%_done', email: 'cara@example.com', tier: 'gold', age: 50 },
      ];
      const ids: number[] = [];
      for (const [i, p] of people.entries()) {
        const res = await t.request('POST', base, {
          token: a.apiKey,
          body: { externalId: `p${i}`, memberId: i === 0 ? a.memberId : undefined, fieldValues: p },
        });
        expect(res.status).toBe(201);
        ids.push(res.body.id);
      }
      const q = async (query: string) => {
        const res = await t.request('GET', `${base}?${query}`, { token: a.apiKey });
        expect({ query, status: res.status }).toEqual({ query, status: 200 });
        return (res.body.items as { id: number }[]).map((r) => r.id);
      };
      expect(await q('search=SMITH')).toEqual([ids[0]]);
      expect(await q('search=example.com')).toEqual([ids[0], ids[2]]);
      expect(await q('search=100%25_')).toEqual([ids[2]]);
      expect(await q('search=0%25')).toEqual([ids[2]]);
      // age is not indexed: search never matches it.
      expect(await q('search=40')).toEqual([]);
      expect(await q('field.tier=gold')).toEqual([ids[0], ids[2]]);
      expect(await q('field.email=BOB@corp.io')).toEqual([ids[1]]);
      expect(await q('field.tier=gold&field.name=ann%20smith')).toEqual([ids[0]]);
      expect(await q(`memberId=${a.memberId}`)).toEqual([ids[0]]);
      expect(await q('externalId=p1')).toEqual([ids[1]]);
      expect(await q('sort=-id')).toEqual([...ids].reverse());
      expect(await q('sort=-createdAt&page=2&pageSize=2')).toEqual([ids[0]]);
      expect(await q('startTime=2000-01-01T00:00:00Z&endTime=2000-01-02T00:00:00Z')).toEqual([]);
      const page = await t.request('GET', `${base}?page_size=2`, { token: a.apiKey });
      expect(page.body).toMatchObject({ total: 3, page: 1, pageSize: 2 });

      for (const [query, detail] of [
        ['field.age=30', /^query field\.age: only fields with shouldIndex/],
        ['field.nope=1', /^query field\.nope: the data type has no such field/],
        ['field.tier=bronze', /^query field\.tier: must be one of/],
        ['sort=name', /^sort:/],
        ['memberId=abc', /^memberId:/],
        ['pageSize=1001', /^pageSize:/],
        ['colour=red', /^colour: unknown field/],
      ] as const) {
        const res = await t.request('GET', `${base}?${query}`, { token: a.apiKey });
        expect({ query, status: res.status }).toEqual({ query, status: 400 });
        expect(res.body.detail).toMatch(detail);
      }
      // Changing shouldIndex reindexes the type's records.
      const put = await t.request('PUT', `/w/${a.workspaceId}/data-types/${type.id}`, {
        token: a.apiKey,
        body: { fields: CONTACT_FIELDS.map((f) => ({ name: f.slug, ...f, shouldIndex: f.slug === 'age' })) },
      });
      expect(put.status).toBe(200);
      expect(await q('field.age=40')).toEqual([ids[1]]);
      expect(await q('search=smith')).toEqual([]);
    });

    it("is 404 for another workspace's type or record, and for malformed ids", async () => {
      const a = await t.bootstrap();
      const b = await t.bootstrap();
      const type = await createDataType(t, a.workspaceId, a.apiKey, { slug: 'mine', fields: [] });
      const rec = await t.request('POST', recordsPath(a.workspaceId, type.id), {
        token: a.apiKey,
        body: { fieldValues: {} },
      });
      for (const [method, path] of [
        ['GET', `/w/${b.workspaceId}/data-types/${type.id}`],
        ['GET', recordsPath(b.workspaceId, type.id)],
        ['GET', `${recordsPath(b.workspaceId, type.id)}/${rec.body.id}`],
        ['GET', `/w/${a.workspaceId}/data-types/abc`],
        ['GET', `${recordsPath(a.workspaceId, type.id)}/0`],
        ['GET', `${recordsPath(a.workspaceId, type.id + 1000)}/${rec.body.id}`],
      ] as const) {
        const res = await t.request(method, path, {
          token: method === 'GET' && path.includes(b.workspaceId) ? b.apiKey : a.apiKey,
        });
        expect({ path, status: res.status }).toEqual({ path, status: 404 });
      }
      const put = await t.request('PUT', `${recordsPath(b.workspaceId, type.id)}/${rec.body.id}`, {
        token: b.apiKey,
        body: { fieldValues: {} },
      });
      expect(put.status).toBe(404);
    });
  });
});
