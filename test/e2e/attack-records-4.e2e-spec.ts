import { startTestApp, TestApp } from '../support/app';
import { keyWithScopes, signup } from '../support/identity-fixtures';
import { createDataType, recordsPath } from '../support/records-fixtures';

/**
 * A hostile and a careless client against records, fourth round: probing an admin-only
 * type's id through the routes that name it, blank externalIds, filter values that are
 * numbers only to Number(), and datetime filters that meet the same instant written
 * another way.
 */
describe('attack: records, fourth round (e2e)', () => {
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

  it('answers an admin-only type a caller does not see exactly like a type that does not exist, on every route that names it', async () => {
    const secret = await createDataType(t, wid, admin, {
      slug: 'hidden_dx',
      visibility: 'admin_only',
      fields: [{ slug: 'code', fieldType: 'text' }],
    });
    const open = await createDataType(t, wid, admin, { slug: 'open_notes', fields: [] });
    const absent = secret.id + 100_000;
    const ann = await signup(t, wid, admin, { email: 'probe.ann@example.com' });
    const bob = await signup(t, wid, admin, { email: 'probe.bob@example.com' });
    const held = await t.request('POST', recordsPath(wid, secret.id), {
      token: admin,
      body: { memberId: ann.member.id, externalId: 'dx-1', fieldValues: { code: 'A1' } },
    });
    expect(held.status).toBe(201);
    const recordId = held.body.id as number;
    // A member token (no scopes) and an API key with records:write but no datatypes:read.
    const writer = await keyWithScopes(t, admin, ['records:write', 'members:write']);
    for (const token of [ann.token, writer]) {
      // The type itself is not there for them.
      expect((await t.request('GET', `/w/${wid}/data-types/${secret.id}`, { token })).status).toBe(404);
      const routes: [string, (id: number) => string, unknown][] = [
        ['GET', (id) => recordsPath(wid, id), undefined],
        ['GET', (id) => `${recordsPath(wid, id)}?field.code=a1`, undefined],
        ['POST', (id) => recordsPath(wid, id), { memberId: ann.member.id, fieldValues: {} }],
        ['POST', (id) => `${recordsPath(wid, id)}/bulk`, { records: [{ fieldValues: {} }] }],
        ['POST', (id) => `/w/${wid}/data-types/${id}/upsert/dx-1`, { fieldValues: {} }],
        ['POST', (id) => `/w/${wid}/data-types/${id}/upsert/%20`, { fieldValues: {} }],
        ['GET', (id) => `${recordsPath(wid, id)}/${recordId}`, undefined],
        ['GET', (id) => `${recordsPath(wid, id)}/${recordId + 100_000}`, undefined],
        ['PUT', (id) => `${recordsPath(wid, id)}/${recordId}`, { fieldValues: { code: 'B2' } }],
        ['DELETE', (id) => `${recordsPath(wid, id)}/${recordId}`, undefined],
      ];
      for (const [method, path, body] of routes) {
        const hidden = await t.request(method, path(secret.id), { token, body });
        const missing = await t.request(method, path(absent), { token, body });
        const route = `${method} ${path(0)}`;
        const seen = { route, status: hidden.status, detail: hidden.body?.detail };
        expect(seen).toEqual({ route, status: missing.status, detail: missing.body?.detail });
        // The bulk route asks records:write at the route, before any type is looked at.
        if (!(token === ann.token && route.endsWith('/bulk')))
          expect(seen).toEqual({ route, status: 404, detail: 'Data type not found' });
        expect(await t.eventsOf(hidden)).toEqual([]);
      }
    }
    // A grant naming the type: the 400 of a type that does not exist.
    const grant = (dataTypeId: number) =>
      t.request('POST', `/w/${wid}/record-grants`, {
        token: ann.token,
        body: { granteeMemberId: bob.member.id, ownerMemberId: ann.member.id, access: 'read', dataTypeId },
      });
    const hiddenGrant = await grant(secret.id);
    const missingGrant = await grant(absent);
    expect(missingGrant.status).toBe(400);
    expect({ status: hiddenGrant.status, detail: hiddenGrant.body.detail }).toEqual({
      status: 400,
      detail: missingGrant.body.detail,
    });
    expect(await t.eventsOf(hiddenGrant)).toEqual([]);
    expect((await grant(open.id)).status).toBe(201);
    // Signup's data naming the type by slug: the 400 of a slug that names nothing.
    const signupWith = (slug: string) =>
      t.request('POST', `/w/${wid}/create-signup`, {
        token: writer,
        body: {
          member: { email: 'probe.new@example.com' },
          data: { [slug]: { externalId: 'x', values: {} } },
        },
      });
    const hiddenSignup = await signupWith('hidden_dx');
    const missingSignup = await signupWith('no_such_type');
    expect({ status: hiddenSignup.status, detail: hiddenSignup.body.detail }).toEqual({
      status: 400,
      detail: 'data.hidden_dx: no data type with this slug exists in this workspace',
    });
    expect(missingSignup.body.detail).toBe(
      'data.no_such_type: no data type with this slug exists in this workspace',
    );
    expect(await t.eventsOf(hiddenSignup)).toEqual([]);

    // Who sees the type keeps the 403 that says why (datatypes:read), or uses it (records:admin).
    const schemaReader = await keyWithScopes(t, admin, ['datatypes:read', 'records:write']);
    const refused = await t.request('GET', recordsPath(wid, secret.id), { token: schemaReader });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/admin-only data type need the scope records:admin/);
    const recordsAdmin = await keyWithScopes(t, admin, ['records:admin']);
    expect(
      (await t.request('GET', `/w/${wid}/data-types/${secret.id}`, { token: recordsAdmin })).status,
    ).toBe(200);
    const list = await t.request('GET', recordsPath(wid, secret.id), { token: recordsAdmin });
    expect(list.body.total).toBe(1);
  });

  it('answers a conditional PUT or DELETE of a record the caller may not read as without If-Match, never with a 412 naming its version', async () => {
    const type = await createDataType(t, wid, admin, {
      slug: 'pinned_notes',
      fields: [{ slug: 'text', fieldType: 'text' }],
    });
    const secret = await createDataType(t, wid, admin, {
      slug: 'pinned_secret',
      visibility: 'admin_only',
      fields: [{ slug: 'text', fieldType: 'text' }],
    });
    const cat = await signup(t, wid, admin, { email: 'pinned.cat@example.com' });
    const dan = await signup(t, wid, admin, { email: 'pinned.dan@example.com' });
    const dans = await t.request('POST', recordsPath(wid, type.id), {
      token: admin,
      body: { memberId: dan.member.id, fieldValues: { text: 'x' } },
    });
    const hidden = await t.request('POST', recordsPath(wid, secret.id), {
      token: admin,
      body: { memberId: cat.member.id, fieldValues: { text: 'x' } },
    });
    const cases: [string, string, number, string | RegExp][] = [
      [
        'PUT',
        `${recordsPath(wid, type.id)}/${dans.body.id}`,
        403,
        /^(Reading|Editing|Deleting) another member.s records needs the scope records:admin/,
      ],
      [
        'DELETE',
        `${recordsPath(wid, type.id)}/${dans.body.id}`,
        403,
        /^(Reading|Editing|Deleting) another member.s records needs the scope records:admin/,
      ],
      ['PUT', `${recordsPath(wid, secret.id)}/${hidden.body.id}`, 404, 'Data type not found'],
      ['DELETE', `${recordsPath(wid, secret.id)}/${hidden.body.id}`, 404, 'Data type not found'],
      // A record of another type, named under this one: absent here.
      ['PUT', `${recordsPath(wid, type.id)}/${hidden.body.id}`, 404, 'Record not found'],
    ];
    for (const [method, path, status, detail] of cases) {
      for (const ifMatch of ['"99"', '"1"']) {
        const res = await t.request(method, path, {
          token: cat.token,
          headers: { 'if-match': ifMatch },
          body: method === 'PUT' ? { fieldValues: { text: 'y' } } : undefined,
        });
        expect({ method, path, ifMatch, status: res.status }).toEqual({ method, path, ifMatch, status });
        expect(res.body.detail).toMatch(detail);
        expect(await t.eventsOf(res)).toEqual([]);
      }
    }
    // Who may write it still meets the 412 of a stale version.
    const stale = await t.request('PUT', `${recordsPath(wid, type.id)}/${dans.body.id}`, {
      token: dan.token,
      headers: { 'if-match': '"99"' },
      body: { fieldValues: { text: 'y' } },
    });
    expect(stale.status).toBe(412);
  });

  it('refuses a blank externalId with a 400 naming it, on create, upsert, bulk, signup data and the list filter', async () => {
    const type = await createDataType(t, wid, admin, {
      slug: 'blank_ext',
      fields: [{ slug: 'note', fieldType: 'text' }],
    });
    const path = recordsPath(wid, type.id);
    for (const [i, externalId] of ['', '   '].entries()) {
      const created = await t.request('POST', path, { token: admin, body: { externalId, fieldValues: {} } });
      expect({ externalId, status: created.status }).toEqual({ externalId, status: 400 });
      expect(created.body.detail).toMatch(/^externalId: must not be empty/);
      expect(await t.eventsOf(created)).toEqual([]);

      const bulk = await t.request('POST', `${path}/bulk`, {
        token: admin,
        body: {
          records: [
            { externalId: `ok-${i}`, fieldValues: {} },
            { externalId, fieldValues: {} },
          ],
        },
      });
      expect(bulk.status).toBe(200);
      expect(bulk.body).toMatchObject({
        success: false,
        importedCount: 1,
        results: [{ index: 0 }, { index: 1, status: 'failed', recordId: null }],
        errors: [{ index: 1, detail: expect.stringMatching(/^externalId: must not be empty/) }],
      });

      const signedUp = await t.request('POST', `/w/${wid}/create-signup`, {
        token: admin,
        body: {
          member: { email: 'blank.ext@example.com' },
          data: { blank_ext: { externalId, values: { note: 'x' } } },
        },
      });
      expect(signedUp.status).toBe(400);
      expect(signedUp.body.detail).toMatch(/^data\.blank_ext\.externalId: must not be empty/);
      expect(await t.eventsOf(signedUp)).toEqual([]);

      const listed = await t.request('GET', `${path}?externalId=${encodeURIComponent(externalId)}`, {
        token: admin,
      });
      expect(listed.status).toBe(400);
      expect(listed.body.detail).toMatch(/^query externalId: must not be empty/);
    }
    const upsert = await t.request('POST', `/w/${wid}/data-types/${type.id}/upsert/%20%20`, {
      token: admin,
      body: { fieldValues: {} },
    });
    expect(upsert.status).toBe(400);
    expect(upsert.body.detail).toMatch(/^path parameter externalId: must not be empty/);
    // Leaving it out is a record without one; no record was made of a blank one.
    const without = await t.request('POST', path, {
      token: admin,
      body: { fieldValues: {} },
    });
    expect(without.status).toBe(201);
    expect(without.body.externalId).toBeNull();
    const all = await t.request('GET', path, { token: admin });
    expect((all.body.items as { externalId: string | null }[]).map((r) => r.externalId)).toEqual([
      'ok-0',
      'ok-1',
      null,
    ]);
  });

  it('takes a number filter only as JSON writes a number, and refuses malformed boolean, date and datetime filters with a 400 naming the parameter', async () => {
    const type = await createDataType(t, wid, admin, {
      slug: 'typed_filters',
      fields: [
        { slug: 'n', fieldType: 'number', shouldIndex: true },
        { slug: 'ok', fieldType: 'boolean', shouldIndex: true },
        { slug: 'day', fieldType: 'date', shouldIndex: true },
        { slug: 'at', fieldType: 'datetime', shouldIndex: true },
      ],
    });
    const path = recordsPath(wid, type.id);
    for (const n of [16, 10, 0.5, -2])
      expect(
        (await t.request('POST', path, { token: admin, body: { fieldValues: { n, ok: true } } })).status,
      ).toBe(201);
    const filter = (query: string) => t.request('GET', `${path}?${query}`, { token: admin });
    const found = async (query: string) => {
      const res = await filter(query);
      expect({ query, status: res.status }).toEqual({ query, status: 200 });
      return (res.body.items as { fieldValues: { n: number } }[]).map((r) => r.fieldValues.n);
    };
    expect(await found('field.n=16')).toEqual([16]);
    expect(await found('field.n=1e1')).toEqual([10]);
    expect(await found('field.n=1.6E1')).toEqual([16]);
    expect(await found('field.n=0.5')).toEqual([0.5]);
    expect(await found('field.n=-2')).toEqual([-2]);
    expect(await found('field.ok=true')).toHaveLength(4);
    const refused: [string, RegExp][] = [
      ...[
        '0x10',
        '0o20',
        '0b10000',
        '+16',
        '.5',
        '16.',
        '016',
        ' 16',
        '16 ',
        '1_6',
        'Infinity',
        'NaN',
        '',
        '-',
      ].map((v): [string, RegExp] => [
        `field.n=${encodeURIComponent(v)}`,
        /^query field\.n: must be a decimal number/,
      ]),
      ['field.n=1e400', /^query field\.n: must be a number/],
      ['field.ok=yes', /^query field\.ok: must be true or false/],
      ['field.ok=TRUE', /^query field\.ok: must be true or false/],
      ['field.ok=1', /^query field\.ok: must be true or false/],
      ['field.ok=', /^query field\.ok: must be true or false/],
      ['field.day=2024-02-30', /^query field\.day: must be an ISO 8601 date/],
      ['field.day=2024-5-1', /^query field\.day: must be an ISO 8601 date/],
      ['field.at=yesterday', /^query field\.at: must be an ISO 8601 date-time/],
      ['field.at=2024-05-01T10:00:00', /^query field\.at: must be an ISO 8601 date-time/],
      ['field.at=2024-05-01T10:00:00%2B99:00', /^query field\.at: must be an ISO 8601 date-time/],
    ];
    for (const [query, detail] of refused) {
      const res = await filter(query);
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
      expect(res.body.detail).toMatch(detail);
    }
  });

  it('finds a datetime by its instant, however the filter and the record write its offset, before and after the record or its type changes', async () => {
    const type = await createDataType(t, wid, admin, {
      slug: 'instants',
      fields: [
        { slug: 'at', fieldType: 'datetime', shouldIndex: true },
        { slug: 'note', fieldType: 'text' },
      ],
    });
    const path = recordsPath(wid, type.id);
    const create = (at: string) =>
      t.request('POST', path, { token: admin, body: { fieldValues: { at, note: 'n' } } });
    const berlin = await create('2024-05-01T12:00:00+02:00');
    const fraction = await create('2024-05-01T10:00:00.500Z');
    const other = await create('2024-05-01T12:00:00Z');
    for (const r of [berlin, fraction, other]) expect(r.status).toBe(201);
    // The record keeps the value as sent.
    expect(berlin.body.fieldValues.at).toBe('2024-05-01T12:00:00+02:00');
    const ids = async (at: string) => {
      const res = await t.request('GET', `${path}?field.at=${encodeURIComponent(at)}`, { token: admin });
      expect({ at, status: res.status }).toEqual({ at, status: 200 });
      return (res.body.items as { id: number }[]).map((r) => r.id);
    };
    const expectFound = async () => {
      expect(await ids('2024-05-01T10:00:00Z')).toEqual([berlin.body.id]);
      expect(await ids('2024-05-01T06:00:00-04:00')).toEqual([berlin.body.id]);
      expect(await ids('2024-05-01T12:00:00.000+02:00')).toEqual([berlin.body.id]);
      expect(await ids('2024-05-01T10:00Z')).toEqual([berlin.body.id]);
      expect(await ids('2024-05-01T10:00:00.5000Z')).toEqual([fraction.body.id]);
      expect(await ids('2024-05-01T15:30:00.5+05:30')).toEqual([fraction.body.id]);
      expect(await ids('2024-05-01T12:00:00Z')).toEqual([other.body.id]);
    };
    await expectFound();
    // A change of another value: the index columns are recomputed in SQL.
    for (const r of [berlin, fraction])
      expect(
        (
          await t.request('PUT', `${path}/${r.body.id}`, {
            token: admin,
            body: { fieldValues: { note: 'm' } },
          })
        ).status,
      ).toBe(200);
    await expectFound();
    // A schema change recomputes the type's records in SQL too.
    const renamed = await t.request('PUT', `/w/${wid}/data-types/${type.id}`, {
      token: admin,
      body: {
        fields: [
          { name: 'When', slug: 'at', fieldType: 'datetime', shouldIndex: true },
          { name: 'note', slug: 'note', fieldType: 'text', shouldIndex: true },
        ],
      },
    });
    expect(renamed.status).toBe(200);
    await expectFound();
  });
});
