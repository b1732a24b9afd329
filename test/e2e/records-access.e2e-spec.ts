import { startTestApp, TestApp } from '../support/app';
import { customRole, keyWithScopes, signup } from '../support/identity-fixtures';
import { addMember } from '../support/member-fixtures';
import { createDataType, recordsPath } from '../support/records-fixtures';

/**
 * SPEC "Scopes", Data records: records:read|write|admin; users view and edit their own
 * records; another member's records need records:admin or a grant; creating one for another
 * member needs records:write; an admin-only form's records need records:admin, while its
 * owner and datatypes:admin holders still manage its schema.
 */
describe('records: permissions and grants (e2e)', () => {
  let t: TestApp;
  let wid: string;
  let admin: string; // Manager: every scope
  let adminMember: number;
  let writer: string; // records:write (and datatypes:read), acting as the Manager's member
  let reader: string; // records:read
  let ann: { token: string; id: number }; // a member token: no scopes, self-access only
  let bob: { token: string; id: number };
  let typeId: number;
  let base: string;

  beforeAll(async () => {
    t = await startTestApp();
    const a = await t.bootstrap();
    wid = a.workspaceId;
    admin = a.apiKey;
    adminMember = a.memberId;
    writer = await keyWithScopes(t, admin, ['records:write', 'datatypes:read']);
    reader = await keyWithScopes(t, admin, ['records:read']);
    const s1 = await signup(t, wid, admin, { email: 'ann@example.com' });
    const s2 = await signup(t, wid, admin, { email: 'bob@example.com' });
    ann = { token: s1.token, id: s1.member.id };
    bob = { token: s2.token, id: s2.member.id };
    typeId = (
      await createDataType(t, wid, admin, { slug: 'notes', fields: [{ slug: 'text', fieldType: 'text' }] })
    ).id;
    base = recordsPath(wid, typeId);
  });
  afterAll(() => t.close());

  const create = (token: string, body: Record<string, unknown>) =>
    t.request('POST', base, { token, body: { fieldValues: { text: 'x' }, ...body } });

  it('lets a member read and edit its own records without any scope, but not delete them', async () => {
    const own = await create(ann.token, { memberId: ann.id });
    expect(own.status).toBe(201);
    expect(own.body.memberId).toBe(ann.id);
    const path = `${base}/${own.body.id}`;
    expect((await t.request('GET', path, { token: ann.token })).status).toBe(200);
    const put = await t.request('PUT', path, { token: ann.token, body: { fieldValues: { text: 'y' } } });
    expect(put.status).toBe(200);
    const del = await t.request('DELETE', path, { token: ann.token });
    expect(del.status).toBe(403);
    expect(del.body.detail).toMatch(/records:write/);
    // The form itself is readable (every member reads workspace-wide forms).
    expect((await t.request('GET', `/w/${wid}/data-types/${typeId}`, { token: ann.token })).status).toBe(200);
  });

  it("refuses a member without scopes another member's records, and records for others or for nobody", async () => {
    const bobs = await create(admin, { memberId: bob.id });
    const unowned = await create(admin, {});
    const forBob = await create(ann.token, { memberId: bob.id });
    expect(forBob.status).toBe(403);
    expect(forBob.body.detail).toMatch(
      /^memberId: creating a record for another member needs the scope records:write/,
    );
    expect((await create(ann.token, {})).status).toBe(403);
    for (const [method, id] of [
      ['GET', bobs.body.id],
      ['PUT', bobs.body.id],
      ['DELETE', bobs.body.id],
      ['GET', unowned.body.id],
      ['PUT', unowned.body.id],
    ] as const) {
      const res = await t.request(method, `${base}/${id}`, {
        token: ann.token,
        body: method === 'PUT' ? { fieldValues: { text: 'z' } } : undefined,
      });
      expect({ method, id, status: res.status }).toEqual({ method, id, status: 403 });
      expect(await t.eventsOf(res)).toEqual([]);
    }
    const list = await t.request('GET', base, { token: ann.token });
    expect(list.status).toBe(200);
    expect((list.body.items as { memberId: number }[]).every((r) => r.memberId === ann.id)).toBe(true);
    expect(list.body.total).toBeGreaterThan(0);
  });

  it("lets records:write create for another member and write unowned records, but not read or edit another member's", async () => {
    const forBob = await create(writer, { memberId: bob.id });
    expect(forBob.status).toBe(201);
    expect(forBob.body.memberId).toBe(bob.id);
    expect((await t.request('GET', `${base}/${forBob.body.id}`, { token: writer })).status).toBe(403);
    const put = await t.request('PUT', `${base}/${forBob.body.id}`, {
      token: writer,
      body: { fieldValues: { text: 'w' } },
    });
    expect(put.status).toBe(403);
    expect(put.body.detail).toMatch(/records:admin or a write grant/);
    const unowned = await create(writer, {});
    expect(unowned.status).toBe(201);
    expect((await t.request('GET', `${base}/${unowned.body.id}`, { token: writer })).status).toBe(200);
    expect(
      (
        await t.request('PUT', `${base}/${unowned.body.id}`, {
          token: writer,
          body: { fieldValues: { text: 'q' } },
        })
      ).status,
    ).toBe(200);
    // records:read reads unowned records but writes nothing.
    expect((await t.request('GET', `${base}/${unowned.body.id}`, { token: reader })).status).toBe(200);
    expect((await create(reader, {})).status).toBe(403);
    expect((await t.request('DELETE', `${base}/${unowned.body.id}`, { token: reader })).status).toBe(403);
    const readerList = await t.request('GET', base, { token: reader });
    expect(
      (readerList.body.items as { memberId: number | null }[]).every(
        (r) => r.memberId === null || r.memberId === adminMember,
      ),
    ).toBe(true);
    expect((await t.request('DELETE', `${base}/${unowned.body.id}`, { token: writer })).status).toBe(204);
    // records:admin reads and deletes anyone's.
    expect((await t.request('GET', `${base}/${forBob.body.id}`, { token: admin })).status).toBe(200);
  });

  it("opens another member's records through read and write grants, and closes them on revoke", async () => {
    const bobs = await create(admin, { memberId: bob.id });
    const path = `${base}/${bobs.body.id}`;
    expect((await t.request('GET', path, { token: ann.token })).status).toBe(403);

    // Bob shares his records with Ann (his own to share, no scope needed); Ann cannot share Bob's.
    const steal = await t.request('POST', `/w/${wid}/record-grants`, {
      token: ann.token,
      body: { granteeMemberId: ann.id, ownerMemberId: bob.id, access: 'write' },
    });
    expect(steal.status).toBe(403);
    expect(steal.body.detail).toMatch(/^ownerMemberId:/);
    const grant = await t.request('POST', `/w/${wid}/record-grants`, {
      token: bob.token,
      body: { granteeMemberId: ann.id, ownerMemberId: bob.id, access: 'read' },
    });
    expect(grant.status).toBe(201);
    expect(grant.body).toMatchObject({
      granteeMemberId: ann.id,
      ownerMemberId: bob.id,
      access: 'read',
      dataTypeId: null,
      grantedBy: bob.id,
    });
    expect(grant.headers.get('location')).toBe(`/api/v2/w/${wid}/record-grants/${grant.body.id}`);
    await t.expectEvents(grant, [{ type: 'RecordGrantCreated', stream: `recordgrant-${grant.body.id}` }]);
    const dup = await t.request('POST', `/w/${wid}/record-grants`, {
      token: admin,
      body: { granteeMemberId: ann.id, ownerMemberId: bob.id, access: 'read' },
    });
    expect(dup.status).toBe(409);

    expect((await t.request('GET', path, { token: ann.token })).status).toBe(200);
    const list = await t.request('GET', base, { token: ann.token });
    expect((list.body.items as { id: number }[]).map((r) => r.id)).toContain(bobs.body.id);
    const put = await t.request('PUT', path, {
      token: ann.token,
      body: { fieldValues: { text: 'ann was here' } },
    });
    expect(put.status).toBe(403);

    // A write grant for this type (given by an admin) lets Ann edit and delete.
    const write = await t.request('POST', `/w/${wid}/record-grants`, {
      token: admin,
      body: { granteeMemberId: ann.id, ownerMemberId: bob.id, access: 'write', dataTypeId: typeId },
    });
    expect(write.status).toBe(201);
    expect(
      (await t.request('PUT', path, { token: ann.token, body: { fieldValues: { text: 'ok' } } })).status,
    ).toBe(200);

    // Who sees which grants: the admin all, Ann those she holds, a stranger none.
    expect((await t.request('GET', `/w/${wid}/record-grants`, { token: admin })).body.total).toBe(2);
    expect((await t.request('GET', `/w/${wid}/record-grants`, { token: ann.token })).body.total).toBe(2);
    const other = await signup(t, wid, admin, { email: 'cid@example.com' });
    expect((await t.request('GET', `/w/${wid}/record-grants`, { token: other.token })).body.total).toBe(0);
    expect(
      (await t.request('DELETE', `/w/${wid}/record-grants/${write.body.id}`, { token: other.token })).status,
    ).toBe(403);

    // Ann gives both up (the grantee may); then Bob's record is closed to her again.
    for (const id of [write.body.id, grant.body.id]) {
      const del = await t.request('DELETE', `/w/${wid}/record-grants/${id}`, { token: ann.token });
      expect(del.status).toBe(204);
      await t.expectEvents(del, [{ type: 'RecordGrantRevoked', stream: `recordgrant-${id}` }]);
    }
    expect((await t.request('GET', path, { token: ann.token })).status).toBe(403);
    expect(
      (await t.request('DELETE', `/w/${wid}/record-grants/${grant.body.id}`, { token: admin })).status,
    ).toBe(404);
  });

  it('refuses grants naming unknown members, types or access, and to oneself', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ granteeMemberId: 999999, ownerMemberId: bob.id, access: 'read' }, /^granteeMemberId: no member/],
      [{ granteeMemberId: ann.id, ownerMemberId: 999999, access: 'read' }, /^ownerMemberId: no member/],
      [
        { granteeMemberId: ann.id, ownerMemberId: bob.id, access: 'read', dataTypeId: 999999 },
        /^dataTypeId: no data type/,
      ],
      [{ granteeMemberId: ann.id, ownerMemberId: bob.id, access: 'admin' }, /^access:/],
      [
        { granteeMemberId: bob.id, ownerMemberId: bob.id, access: 'read' },
        /^granteeMemberId: a member already holds its own records/,
      ],
    ];
    for (const [body, detail] of cases) {
      const res = await t.request('POST', `/w/${wid}/record-grants`, { token: admin, body });
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body.detail).toMatch(detail);
    }
  });

  it("keeps an admin-only form's records to records:admin, and its schema to its owner and datatypes:admin", async () => {
    const secret = await createDataType(t, wid, admin, {
      slug: 'diagnoses',
      visibility: 'admin_only',
      fields: [{ slug: 'code', fieldType: 'text' }],
    });
    const path = recordsPath(wid, secret.id);
    const mine = await t.request('POST', path, {
      token: ann.token,
      body: { memberId: ann.id, fieldValues: {} },
    });
    // A member without datatypes:read does not see the form: its records are the 404 of no type.
    expect(mine.status).toBe(404);
    expect(mine.body.detail).toBe('Data type not found');
    // The writer (datatypes:read) sees it, and is told why it may not use it.
    const notAdmin = await t.request('POST', path, { token: writer, body: { fieldValues: {} } });
    expect(notAdmin.status).toBe(403);
    expect(notAdmin.body.detail).toMatch(/admin-only data type need the scope records:admin/);
    expect((await t.request('GET', path, { token: writer })).status).toBe(403);
    const byAdmin = await t.request('POST', path, {
      token: admin,
      body: { memberId: ann.id, fieldValues: { code: 'A1' } },
    });
    expect(byAdmin.status).toBe(201);
    expect((await t.request('GET', `${path}/${byAdmin.body.id}`, { token: ann.token })).status).toBe(404);
    expect((await t.request('GET', path, { token: admin })).body.total).toBe(1);
    // Without datatypes:read a member does not even see the form.
    expect((await t.request('GET', `/w/${wid}/data-types/${secret.id}`, { token: ann.token })).status).toBe(
      404,
    );
    const forms = await t.request('GET', `/w/${wid}/data-types`, { token: ann.token });
    expect((forms.body.items as { slug: string }[]).map((f) => f.slug)).not.toContain('diagnoses');

    // Schema: another operator with datatypes:write (not the owner) is refused; the owner and datatypes:admin manage it.
    const other = await t.bootstrap();
    const role = await customRole(t, wid, admin, 'Form editors', ['datatypes:write', 'records:write']);
    await addMember(t, { workspaceId: wid, roleId: role, accountUuid: other.accountUuid });
    const rename = (token: string, name: string) =>
      t.request('PUT', `/w/${wid}/data-types/${secret.id}`, { token, body: { name } });
    const refused = await rename(other.apiKey, 'Nope');
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/managed by its owner and holders of the scope datatypes:admin/);
    const ownerKey = await keyWithScopes(t, admin, ['datatypes:write']);
    expect((await rename(ownerKey, 'By owner')).status).toBe(200);
    expect((await rename(admin, 'By datatypes:admin')).status).toBe(200);
    // Making a workspace-wide form admin-only is the same kind of decision.
    const open = await createDataType(t, wid, admin, { slug: 'open', fields: [] });
    const hide = await t.request('PUT', `/w/${wid}/data-types/${open.id}`, {
      token: other.apiKey,
      body: { visibility: 'admin_only' },
    });
    expect(hide.status).toBe(403);
    expect(hide.body.detail).toMatch(/^visibility:/);
  });

  it('asks datatypes scopes for schema writes at the route', async () => {
    const res = await t.request('POST', `/w/${wid}/data-types`, {
      token: writer,
      body: { name: 'X', slug: 'x', fields: [] },
    });
    expect(res.status).toBe(403);
    expect(res.body.detail).toMatch(/datatypes:write/);
    const bulk = await t.request('POST', `${base}/bulk`, { token: ann.token, body: { records: [] } });
    expect(bulk.status).toBe(403);
  });
});
