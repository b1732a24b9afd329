import { startTestApp, TestApp } from '../support/app';
import { createDataType, FieldInput, recordsPath } from '../support/records-fixtures';

/**
 * A hostile and a careless client against records, third round: values a forced schema
 * change dropped, field slugs that collide with JavaScript's object keys, and more.
 */
describe('attack: records, third round (e2e)', () => {
  let t: TestApp;
  let wid: string;
  let admin: string;

  beforeAll(async () => {
    t = await startTestApp();
    const a = await t.bootstrap();
    wid = a.workspaceId;
    admin = a.apiKey;
  });
  afterAll(() => t.close());

  const named = (fields: FieldInput[]) => fields.map((f) => ({ name: f.slug, ...f }));

  it('never brings back the values a forced removal or retyping dropped, on a later change of the record', async () => {
    const type = await createDataType(t, wid, admin, {
      slug: 'forced_drop',
      fields: [
        { slug: 'name', fieldType: 'text' },
        { slug: 'age', fieldType: 'text' },
        { slug: 'ssn', fieldType: 'text' },
      ],
    });
    const path = recordsPath(wid, type.id);
    const created = await t.request('POST', path, {
      token: admin,
      body: { externalId: 'fd-1', fieldValues: { name: 'Ann', age: 'forty', ssn: '123-45-6789' } },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as number;

    // age retyped to number and ssn removed, with force: both values go.
    const forced = await t.request('PUT', `/w/${wid}/data-types/${type.id}`, {
      token: admin,
      body: {
        force: true,
        fields: named([
          { slug: 'name', fieldType: 'text' },
          { slug: 'age', fieldType: 'number' },
        ]),
      },
    });
    expect(forced.status).toBe(200);
    // ssn comes back as a field (a new, empty one).
    const readded = await t.request('PUT', `/w/${wid}/data-types/${type.id}`, {
      token: admin,
      body: {
        fields: named([
          { slug: 'name', fieldType: 'text' },
          { slug: 'age', fieldType: 'number' },
          { slug: 'ssn', fieldType: 'text' },
        ]),
      },
    });
    expect(readded.status).toBe(200);
    const before = await t.request('GET', `${path}/${id}`, { token: admin });
    expect(before.body.fieldValues).toEqual({ name: 'Ann' });

    // A change of another field, by PUT and by upsert: the dropped values stay gone.
    const put = await t.request('PUT', `${path}/${id}`, {
      token: admin,
      body: { fieldValues: { name: 'Bea' } },
    });
    expect(put.status).toBe(200);
    expect(put.body.fieldValues).toEqual({ name: 'Bea' });
    await t.expectEvents(put, [
      {
        type: 'DataRecordUpdated',
        stream: `record-${id}`,
        data: { changes: { name: 'Bea' }, previous: { name: 'Ann' } },
      },
    ]);
    const [event] = await t.eventsOf(put);
    expect((event.data as { fieldValues: unknown }).fieldValues).toEqual({ name: 'Bea' });

    const upsert = await t.request('POST', `/w/${wid}/data-types/${type.id}/upsert/fd-1`, {
      token: admin,
      body: { fieldValues: { age: 41 } },
    });
    expect(upsert.status).toBe(200);
    expect(upsert.body.fieldValues).toEqual({ name: 'Bea', age: 41 });
    await t.expectEvents(upsert, [
      { type: 'DataRecordUpdated', data: { changes: { age: 41 }, previous: { age: null } } },
    ]);
    const after = await t.request('GET', `${path}/${id}`, { token: admin });
    expect(after.body.fieldValues).toEqual({ name: 'Bea', age: 41 });

    // A value given again after the field came back is kept.
    const again = await t.request('PUT', `${path}/${id}`, {
      token: admin,
      body: { fieldValues: { ssn: '000' } },
    });
    expect(again.body.fieldValues).toEqual({ name: 'Bea', age: 41, ssn: '000' });
    const last = await t.request('PUT', `${path}/${id}`, {
      token: admin,
      body: { fieldValues: { name: 'Cy' } },
    });
    expect(last.body.fieldValues).toEqual({ name: 'Cy', age: 41, ssn: '000' });
  });

  it('refuses slugs a JSON body cannot carry as keys, and refuses (not drops) unknown keys such as toString', async () => {
    // The request pipeline refuses `constructor` and `prototype` keys in every body: a field or
    // type so named would take the type and then never be given a value.
    for (const slug of ['constructor', 'prototype']) {
      const field = await t.request('POST', `/w/${wid}/data-types`, {
        token: admin,
        body: {
          name: 'JS keys',
          slug: `js_${slug}`,
          fields: [
            { name: 'Note', slug: 'note', fieldType: 'text' },
            { name: 'Key', slug, fieldType: 'text', required: true },
          ],
        },
      });
      expect({ slug, status: field.status, detail: field.body.detail }).toEqual({
        slug,
        status: 400,
        detail: 'fields.1.slug: constructor and prototype are reserved; choose another slug',
      });
      expect(await t.eventsOf(field)).toEqual([]);
      const type = await t.request('POST', `/w/${wid}/data-types`, {
        token: admin,
        body: { name: 'JS keys', slug, fields: [] },
      });
      expect({ slug, status: type.status, detail: type.body.detail }).toEqual({
        slug,
        status: 400,
        detail: 'slug: constructor and prototype are reserved; choose another slug',
      });
    }
    const type = await createDataType(t, wid, admin, {
      slug: 'js_keys',
      fields: [{ slug: 'note', fieldType: 'text' }],
    });
    const renamed = await t.request('PUT', `/w/${wid}/data-types/${type.id}`, {
      token: admin,
      body: { slug: 'prototype' },
    });
    expect(renamed.status).toBe(400);
    expect(renamed.body.detail).toBe('slug: constructor and prototype are reserved; choose another slug');

    // Keys of Object.prototype were dropped on the way in (201, nothing said): now the 400 of any unknown key.
    const path = recordsPath(wid, type.id);
    const created = await t.request('POST', path, { token: admin, body: { fieldValues: { note: 'n' } } });
    expect(created.status).toBe(201);
    for (const key of ['toString', 'valueOf', 'hasOwnProperty']) {
      const writes = [
        t.request('POST', path, { token: admin, body: { fieldValues: { note: 'x', [key]: 'x' } } }),
        t.request('PUT', `${path}/${created.body.id}`, {
          token: admin,
          body: { fieldValues: { [key]: 'x' } },
        }),
        t.request('POST', `/w/${wid}/data-types/${type.id}/upsert/jk-1`, {
          token: admin,
          body: { fieldValues: { [key]: 'x' } },
        }),
        t.request('POST', `/w/${wid}/create-signup`, {
          token: admin,
          body: {
            member: { email: `js-${key.toLowerCase()}@example.com` },
            data: { js_keys: { externalId: `jk-${key}`, values: { [key]: 'x' } } },
          },
        }),
      ];
      const answers = (await Promise.all(writes)).map((r) => [r.status, r.body.detail]);
      expect({ key, answers }).toEqual({
        key,
        answers: [
          [400, `fieldValues.${key}: unknown field`],
          [400, `fieldValues.${key}: unknown field`],
          [400, `fieldValues.${key}: unknown field`],
          [400, `data.js_keys.values.${key}: unknown field`],
        ],
      });
    }
    const total = await t.request('GET', path, { token: admin });
    expect(total.body.total).toBe(1);
    const members = await t.request('GET', `/w/${wid}/members?search=js-`, { token: admin });
    expect(members.body.total).toBe(0);
  });

  it('takes a blank text for no value in a required field: 400 naming it on every write route, nothing written', async () => {
    const type = await createDataType(t, wid, admin, {
      slug: 'blank_required',
      fields: [
        { slug: 'name', fieldType: 'text', required: true },
        { slug: 'note', fieldType: 'text' },
      ],
    });
    const path = recordsPath(wid, type.id);
    const kept = await t.request('POST', path, {
      token: admin,
      body: { externalId: 'br-1', fieldValues: { name: 'Ann', note: '' } },
    });
    // An optional text may be empty.
    expect(kept.status).toBe(201);
    expect(kept.body.fieldValues).toEqual({ name: 'Ann', note: '' });

    for (const name of ['', '   ', '\t\n']) {
      const created = await t.request('POST', path, { token: admin, body: { fieldValues: { name } } });
      expect([created.status, created.body.detail]).toEqual([400, 'fieldValues.name: is required']);
      const put = await t.request('PUT', `${path}/${kept.body.id}`, {
        token: admin,
        body: { fieldValues: { name } },
      });
      expect([put.status, put.body.detail]).toEqual([
        400,
        'fieldValues.name: is required and cannot be cleared',
      ]);
      expect(await t.eventsOf(put)).toEqual([]);
      const upsertNew = await t.request('POST', `/w/${wid}/data-types/${type.id}/upsert/br-2`, {
        token: admin,
        body: { fieldValues: { name } },
      });
      expect([upsertNew.status, upsertNew.body.detail]).toEqual([400, 'fieldValues.name: is required']);
      const upsertOld = await t.request('POST', `/w/${wid}/data-types/${type.id}/upsert/br-1`, {
        token: admin,
        body: { fieldValues: { name } },
      });
      expect(upsertOld.status).toBe(400);
      const bulk = await t.request('POST', `${path}/bulk`, {
        token: admin,
        body: {
          upsert: true,
          records: [
            { externalId: 'br-1', fieldValues: { name } },
            { externalId: 'br-3', fieldValues: { name } },
          ],
        },
      });
      expect(bulk.body).toEqual({
        success: false,
        totalCount: 2,
        importedCount: 0,
        results: [
          { index: 0, status: 'failed', recordId: null, externalId: 'br-1' },
          { index: 1, status: 'failed', recordId: null, externalId: 'br-3' },
        ],
        errors: [
          { index: 0, externalId: 'br-1', detail: 'fieldValues.name: is required and cannot be cleared' },
          { index: 1, externalId: 'br-3', detail: 'fieldValues.name: is required' },
        ],
      });
      const signedUp = await t.request('POST', `/w/${wid}/create-signup`, {
        token: admin,
        body: {
          member: { email: 'blank-required@example.com' },
          data: { blank_required: { externalId: 'br-4', values: { name } } },
        },
      });
      expect([signedUp.status, signedUp.body.detail]).toEqual([
        400,
        'data.blank_required.values.name: is required',
      ]);
    }
    const all = await t.request('GET', path, { token: admin });
    expect(all.body.items.map((r: { fieldValues: unknown }) => r.fieldValues)).toEqual([
      { name: 'Ann', note: '' },
    ]);
    const members = await t.request('GET', `/w/${wid}/members?search=blank-required`, { token: admin });
    expect(members.body.total).toBe(0);
  });

  it('treats options taken from a select field that records hold like a retyping: 409 unless force, which drops only those values', async () => {
    const type = await createDataType(t, wid, admin, {
      slug: 'narrowed',
      fields: [
        { slug: 'name', fieldType: 'text' },
        { slug: 'tier', fieldType: 'select', options: ['gold', 'silver', 'bronze'], shouldIndex: true },
      ],
    });
    const path = recordsPath(wid, type.id);
    const ids: number[] = [];
    for (const fieldValues of [{ name: 'a', tier: 'gold' }, { name: 'b', tier: 'silver' }, { name: 'c' }]) {
      const res = await t.request('POST', path, { token: admin, body: { fieldValues } });
      expect(res.status).toBe(201);
      ids.push(res.body.id as number);
    }
    const schema = (options: string[]) =>
      named([
        { slug: 'name', fieldType: 'text' },
        { slug: 'tier', fieldType: 'select', options, shouldIndex: true },
      ]);
    const typePath = `/w/${wid}/data-types/${type.id}`;

    const refused = await t.request('PUT', typePath, {
      token: admin,
      body: { fields: schema(['gold', 'platinum']) },
    });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/^fields\.1\.options: tier holds values in existing records/);
    expect(await t.eventsOf(refused)).toEqual([]);
    // bronze is held by no record: it may go.
    const unheld = await t.request('PUT', typePath, {
      token: admin,
      body: { fields: schema(['gold', 'silver', 'platinum']) },
    });
    expect(unheld.status).toBe(200);

    const forced = await t.request('PUT', typePath, {
      token: admin,
      body: { force: true, fields: schema(['gold', 'platinum']) },
    });
    expect(forced.status).toBe(200);
    await t.expectEvents(forced, [{ type: 'DataTypeUpdated', data: { narrowedFields: ['tier'] } }]);
    const values = async () =>
      (await t.request('GET', `${path}?sort=id`, { token: admin })).body.items.map(
        (r: { fieldValues: unknown }) => r.fieldValues,
      );
    expect(await values()).toEqual([{ name: 'a', tier: 'gold' }, { name: 'b' }, { name: 'c' }]);
    const gold = await t.request('GET', `${path}?field.tier=gold`, { token: admin });
    expect(gold.body.items.map((r: { id: number }) => r.id)).toEqual([ids[0]]);

    // The record's next change does not bring silver back.
    const put = await t.request('PUT', `${path}/${ids[1]}`, {
      token: admin,
      body: { fieldValues: { name: 'bb' } },
    });
    expect(put.body.fieldValues).toEqual({ name: 'bb' });
    const [event] = await t.eventsOf(put);
    expect((event.data as { fieldValues: unknown }).fieldValues).toEqual({ name: 'bb' });
    const kept = await t.request('PUT', `${path}/${ids[0]}`, {
      token: admin,
      body: { fieldValues: { name: 'aa' } },
    });
    expect(kept.body.fieldValues).toEqual({ name: 'aa', tier: 'gold' });
  });

  it('finds a record by search and field filter in any letter case alike before and after it changes (İ, final sigma)', async () => {
    const type = await createDataType(t, wid, admin, {
      slug: 'folded',
      fields: [
        { slug: 'city', fieldType: 'text', shouldIndex: true },
        { slug: 'note', fieldType: 'text' },
      ],
    });
    const path = recordsPath(wid, type.id);
    const created = await t.request('POST', path, {
      token: admin,
      body: { fieldValues: { city: 'İSTANBUL ΟΔΥΣΣΕΑΣ', note: 'a' } },
    });
    expect(created.status).toBe(201);
    const queries = [
      'search=istanbul',
      'search=%C4%B0stanbul',
      `search=${encodeURIComponent('οδυσσεας')}`,
      `search=${encodeURIComponent('ΟΔΥΣΣΕΑΣ')}`,
      `field.city=${encodeURIComponent('istanbul οδυσσεας')}`,
      `field.city=${encodeURIComponent('İSTANBUL ΟΔΥΣΣΕΑΣ')}`,
    ];
    const found = async () => {
      const out: Record<string, number> = {};
      for (const q of queries) out[q] = (await t.request('GET', `${path}?${q}`, { token: admin })).body.total;
      return out;
    };
    const everywhere = Object.fromEntries(queries.map((q) => [q, 1]));
    expect(await found()).toEqual(everywhere);
    // A change of another field recomputes the index columns (in SQL): the same answers.
    const put = await t.request('PUT', `${path}/${created.body.id}`, {
      token: admin,
      body: { fieldValues: { note: 'b' } },
    });
    expect(put.status).toBe(200);
    expect(await found()).toEqual(everywhere);
  });
});
