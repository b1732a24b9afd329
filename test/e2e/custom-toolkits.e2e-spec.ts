import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/app';
import { keyWithScopes, signup } from '../support/identity-fixtures';

describe('custom toolkits (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const createToolkit = async (wid: string, token: string, body: Record<string, unknown>) => {
    const res = await t.request('POST', `/w/${wid}/custom-toolkits`, { token, body });
    expect(res.status).toBe(201);
    return res.body as { id: number; slug: string };
  };

  it('creates, reads, updates and deletes a toolkit, with its events, ETags and Location', async () => {
    const a = await t.bootstrap();
    const res = await t.request('POST', `/w/${a.workspaceId}/custom-toolkits`, {
      token: a.apiKey,
      body: { name: ' CRM tools ', slug: 'crm-tools', description: 'Orders and customers' },
    });
    expect(res.status).toBe(201);
    const id = res.body.id as number;
    expect(res.body).toEqual({
      id,
      name: 'CRM tools',
      slug: 'crm-tools',
      description: 'Orders and customers',
      enabled: true,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(res.headers.get('location')).toBe(`/api/v2/w/${a.workspaceId}/custom-toolkits/${id}`);
    expect(res.headers.get('etag')).toBe('"1"');
    await t.expectEvents(res, [
      {
        type: 'CustomToolkitCreated',
        stream: `customtoolkit-${id}`,
        data: {
          toolkitId: id,
          workspaceId: a.workspaceId,
          name: 'CRM tools',
          slug: 'crm-tools',
          enabled: true,
        },
      },
    ]);

    const path = `/w/${a.workspaceId}/custom-toolkits/${id}`;
    const get = await t.request('GET', path, { token: a.apiKey });
    expect(get.status).toBe(200);
    expect(get.body).toEqual(res.body);
    expect(get.headers.get('etag')).toBe('"1"');

    const stale = await t.request('PUT', path, {
      token: a.apiKey,
      headers: { 'if-match': '"7"' },
      body: { name: 'Stale' },
    });
    expect(stale.status).toBe(412);
    expect(stale.body.detail).toMatch(/^If-Match: the resource has changed since that version/);
    await t.expectEvents(stale, []);

    const put = await t.request('PUT', path, {
      token: a.apiKey,
      headers: { 'if-match': '"1"' },
      body: { name: 'CRM', slug: 'crm', description: null },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ id, name: 'CRM', slug: 'crm', description: null, enabled: true });
    expect(put.headers.get('etag')).toBe('"2"');
    await t.expectEvents(put, [
      {
        type: 'CustomToolkitUpdated',
        stream: `customtoolkit-${id}`,
        data: { changes: { name: 'CRM', slug: 'crm', description: null }, previousSlug: 'crm-tools' },
      },
    ]);
    // Nothing changes, nothing is appended, the version stays.
    const same = await t.request('PUT', path, { token: a.apiKey, body: { name: 'CRM' } });
    expect(same.status).toBe(200);
    expect(same.headers.get('etag')).toBe('"2"');
    await t.expectEvents(same, []);

    // The old slug is free again; the new one is taken.
    await createToolkit(a.workspaceId, a.apiKey, { name: 'Other', slug: 'crm-tools' });
    const taken = await t.request('POST', `/w/${a.workspaceId}/custom-toolkits`, {
      token: a.apiKey,
      body: { name: 'Again', slug: 'crm' },
    });
    expect(taken.status).toBe(409);
    expect(taken.body.detail).toBe(`slug: custom toolkit ${id} of this workspace already has the slug "crm"`);
    await t.expectEvents(taken, []);

    const staleDelete = await t.request('DELETE', path, { token: a.apiKey, headers: { 'if-match': '"1"' } });
    expect(staleDelete.status).toBe(412);
    await t.expectEvents(staleDelete, []);
    const del = await t.request('DELETE', path, { token: a.apiKey, headers: { 'if-match': '"2"' } });
    expect(del.status).toBe(204);
    await t.expectEvents(del, [
      { type: 'CustomToolkitDeleted', stream: `customtoolkit-${id}`, data: { toolkitId: id, slug: 'crm' } },
    ]);
    expect((await t.request('GET', path, { token: a.apiKey })).status).toBe(404);
    expect((await t.request('DELETE', path, { token: a.apiKey })).status).toBe(404);
    await createToolkit(a.workspaceId, a.apiKey, { name: 'Reuse', slug: 'crm' });
  });

  it('deletes its tools with it, each with its event', async () => {
    const a = await t.bootstrap();
    const kit = await createToolkit(a.workspaceId, a.apiKey, { name: 'Kit', slug: 'kit' });
    const tools = `/w/${a.workspaceId}/custom-toolkits/${kit.id}/tools`;
    const ids: number[] = [];
    for (const name of ['one', 'two']) {
      const res = await t.request('POST', tools, { token: a.apiKey, body: { name } });
      expect(res.status).toBe(201);
      ids.push(res.body.id as number);
    }
    const del = await t.request('DELETE', `/w/${a.workspaceId}/custom-toolkits/${kit.id}`, {
      token: a.apiKey,
    });
    expect(del.status).toBe(204);
    await t.expectEvents(del, [
      { type: 'CustomToolDeleted', stream: `customtoolkit-${kit.id}`, data: { toolId: ids[0], name: 'one' } },
      { type: 'CustomToolDeleted', stream: `customtoolkit-${kit.id}`, data: { toolId: ids[1], name: 'two' } },
      { type: 'CustomToolkitDeleted', stream: `customtoolkit-${kit.id}` },
    ]);
    expect((await t.request('GET', tools, { token: a.apiKey })).status).toBe(404);
    expect((await t.request('GET', `${tools}/${ids[0]}`, { token: a.apiKey })).status).toBe(404);
    const rows = await t.app
      .get(DataSource)
      .query('SELECT count(*)::int AS n FROM custom_tools WHERE toolkit_id = $1', [kit.id]);
    expect(rows).toEqual([{ n: 0 }]);
    // No tool can be added to the deleted toolkit.
    const late = await t.request('POST', tools, { token: a.apiKey, body: { name: 'three' } });
    expect(late.status).toBe(404);
    await t.expectEvents(late, []);
  });

  it('enables and disables idempotently, showing `enabled` in the response and the list', async () => {
    const a = await t.bootstrap();
    const kit = await createToolkit(a.workspaceId, a.apiKey, { name: 'Kit', slug: 'kit' });
    const path = `/w/${a.workspaceId}/custom-toolkits/${kit.id}`;

    const enableAgain = await t.request('POST', `${path}/enable`, { token: a.apiKey });
    expect(enableAgain.status).toBe(200);
    expect(enableAgain.body).toMatchObject({ id: kit.id, enabled: true });
    await t.expectEvents(enableAgain, []);

    const disable = await t.request('POST', `${path}/disable`, { token: a.apiKey });
    expect(disable.status).toBe(200);
    expect(disable.body).toMatchObject({ id: kit.id, enabled: false });
    expect(disable.headers.get('etag')).toBe('"2"');
    await t.expectEvents(disable, [
      { type: 'CustomToolkitDisabled', stream: `customtoolkit-${kit.id}`, data: { toolkitId: kit.id } },
    ]);
    const disableAgain = await t.request('POST', `${path}/disable`, { token: a.apiKey });
    expect(disableAgain.status).toBe(200);
    expect(disableAgain.body.enabled).toBe(false);
    await t.expectEvents(disableAgain, []);

    const list = await t.request('GET', `/w/${a.workspaceId}/custom-toolkits`, { token: a.apiKey });
    expect(list.body.items).toEqual([expect.objectContaining({ id: kit.id, enabled: false })]);

    const enable = await t.request('POST', `${path}/enable`, { token: a.apiKey });
    expect(enable.status).toBe(200);
    expect(enable.body.enabled).toBe(true);
    await t.expectEvents(enable, [{ type: 'CustomToolkitEnabled', data: { toolkitId: kit.id } }]);
    expect((await t.request('GET', path, { token: a.apiKey })).body.enabled).toBe(true);
    expect(
      (await t.request('POST', `/w/${a.workspaceId}/custom-toolkits/999999/enable`, { token: a.apiKey }))
        .status,
    ).toBe(404);
  });

  it('keeps slugs unique per workspace under concurrent creates; another workspace may use the same', async () => {
    const a = await t.bootstrap();
    const b = await t.bootstrap();
    const racing = await Promise.all(
      Array.from({ length: 8 }, () =>
        t.request('POST', `/w/${a.workspaceId}/custom-toolkits`, {
          token: a.apiKey,
          body: { name: 'Kit', slug: 'kit' },
        }),
      ),
    );
    expect(racing.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    expect(
      (await t.request('GET', `/w/${a.workspaceId}/custom-toolkits`, { token: a.apiKey })).body.total,
    ).toBe(1);
    await createToolkit(b.workspaceId, b.apiKey, { name: 'Kit', slug: 'kit' });
    // Renaming onto a taken slug is 409 and changes nothing.
    const other = await createToolkit(a.workspaceId, a.apiKey, { name: 'Other', slug: 'other' });
    const clash = await t.request('PUT', `/w/${a.workspaceId}/custom-toolkits/${other.id}`, {
      token: a.apiKey,
      body: { slug: 'kit' },
    });
    expect(clash.status).toBe(409);
    expect(clash.body.detail).toMatch(
      /^slug: custom toolkit \d+ of this workspace already has the slug "kit"$/,
    );
    await t.expectEvents(clash, []);
  });

  it('replays a create with the same Idempotency-Key instead of making a second toolkit', async () => {
    const a = await t.bootstrap();
    const send = () =>
      t.request('POST', `/w/${a.workspaceId}/custom-toolkits`, {
        token: a.apiKey,
        headers: { 'idempotency-key': 'kit-1' },
        body: { name: 'Kit', slug: 'kit' },
      });
    const first = await send();
    const again = await send();
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(
      (await t.request('GET', `/w/${a.workspaceId}/custom-toolkits`, { token: a.apiKey })).body.total,
    ).toBe(1);
  });

  it('refuses bad input naming the field, and changes nothing', async () => {
    const a = await t.bootstrap();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ slug: 'x' }, /^name: /],
      [{ name: 'X' }, /^slug: /],
      [{ name: '   ', slug: 'x' }, /^name: must not be empty$/],
      [{ name: 'X', slug: 'Not A Slug' }, /^slug: must be 1-100 lower-case letters/],
      [{ name: 'X', slug: 'x', description: 5 }, /^description: .*must be a string$/],
      [{ name: 'X', slug: 'x', enabled: false }, /^enabled: unknown field$/],
      [{ name: null, slug: 'x' }, /^name: must not be null$/],
      [{ name: 'X'.repeat(201), slug: 'x' }, /^name: must be shorter than or equal to 200 characters$/],
    ];
    for (const [body, detail] of cases) {
      const res = await t.request('POST', `/w/${a.workspaceId}/custom-toolkits`, { token: a.apiKey, body });
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body.detail).toMatch(detail);
      await t.expectEvents(res, []);
    }
    const kit = await createToolkit(a.workspaceId, a.apiKey, { name: 'Kit', slug: 'kit' });
    const put = await t.request('PUT', `/w/${a.workspaceId}/custom-toolkits/${kit.id}`, {
      token: a.apiKey,
      body: { slug: 'UPPER' },
    });
    expect(put.status).toBe(400);
    expect(put.body.detail).toMatch(/^slug: /);
    await t.expectEvents(put, []);
    const weak = await t.request('PUT', `/w/${a.workspaceId}/custom-toolkits/${kit.id}`, {
      token: a.apiKey,
      headers: { 'if-match': 'W/"1"' },
      body: { name: 'Y' },
    });
    expect(weak.status).toBe(400);
    expect(weak.body.detail).toMatch(/^If-Match: /);
  });

  it('lists with pages, search and a creation-time window', async () => {
    const a = await t.bootstrap();
    const k1 = await createToolkit(a.workspaceId, a.apiKey, { name: 'Orders', slug: 'orders' });
    const k2 = await createToolkit(a.workspaceId, a.apiKey, { name: 'Billing', slug: 'billing-eu' });
    const k3 = await createToolkit(a.workspaceId, a.apiKey, { name: 'Order history', slug: 'history' });
    const ids = async (query: string) => {
      const res = await t.request('GET', `/w/${a.workspaceId}/custom-toolkits${query}`, { token: a.apiKey });
      expect(res.status).toBe(200);
      return (res.body.items as { id: number }[]).map((i) => i.id);
    };
    expect(await ids('')).toEqual([k1.id, k2.id, k3.id]);
    expect(await ids('?search=ORDER')).toEqual([k1.id, k3.id]);
    expect(await ids('?search=billing-')).toEqual([k2.id]);
    expect(await ids('?search=%25')).toEqual([]);
    const page = await t.request('GET', `/w/${a.workspaceId}/custom-toolkits?page=2&page_size=2`, {
      token: a.apiKey,
    });
    expect(page.body).toMatchObject({ total: 3, page: 2, pageSize: 2, items: [{ id: k3.id }] });
    const created = (
      await t.request('GET', `/w/${a.workspaceId}/custom-toolkits/${k2.id}`, { token: a.apiKey })
    ).body.createdAt as string;
    expect(await ids(`?startTime=${encodeURIComponent(created)}`)).toEqual([k2.id, k3.id]);
    expect(await ids(`?endTime=${encodeURIComponent(created)}`)).toEqual([k1.id]);
    expect(
      (await t.request('GET', `/w/${a.workspaceId}/custom-toolkits?startTime=yesterday`, { token: a.apiKey }))
        .status,
    ).toBe(400);
    expect(
      (await t.request('GET', `/w/${a.workspaceId}/custom-toolkits?pageSize=1001`, { token: a.apiKey }))
        .status,
    ).toBe(400);
  });

  it('needs apps:read to read, apps:write to create, change, enable and disable, apps:admin to delete', async () => {
    const a = await t.bootstrap();
    const kit = await createToolkit(a.workspaceId, a.apiKey, { name: 'Kit', slug: 'kit' });
    const path = `/w/${a.workspaceId}/custom-toolkits/${kit.id}`;
    const none = await keyWithScopes(t, a.apiKey, ['workflows:admin']);
    const reader = await keyWithScopes(t, a.apiKey, ['apps:read']);
    const writer = await keyWithScopes(t, a.apiKey, ['apps:write']);
    const admin = await keyWithScopes(t, a.apiKey, ['apps:admin']);

    const list = await t.request('GET', `/w/${a.workspaceId}/custom-toolkits`, { token: none });
    expect(list.status).toBe(403);
    expect(list.body.detail).toMatch(/apps:read/);
    expect((await t.request('GET', path, { token: none })).status).toBe(403);
    expect((await t.request('GET', path, { token: reader })).status).toBe(200);
    expect((await t.request('GET', path, { token: writer })).status).toBe(200);

    for (const [method, suffix, body] of [
      ['POST', '', { name: 'X', slug: 'x' }],
      ['PUT', `/${kit.id}`, { name: 'X' }],
      ['POST', `/${kit.id}/disable`, undefined],
      ['POST', `/${kit.id}/enable`, undefined],
    ] as const) {
      const res = await t.request(method, `/w/${a.workspaceId}/custom-toolkits${suffix}`, {
        token: reader,
        body,
      });
      expect({ method, suffix, status: res.status }).toEqual({ method, suffix, status: 403 });
      expect(res.body.detail).toMatch(/apps:write/);
      await t.expectEvents(res, []);
    }
    expect((await t.request('PUT', path, { token: writer, body: { name: 'Y' } })).status).toBe(200);
    expect((await t.request('POST', `${path}/disable`, { token: writer })).status).toBe(200);
    const writerDelete = await t.request('DELETE', path, { token: writer });
    expect(writerDelete.status).toBe(403);
    expect(writerDelete.body.detail).toMatch(/apps:admin/);
    await t.expectEvents(writerDelete, []);
    expect((await t.request('DELETE', path, { token: admin })).status).toBe(204);

    // A plain User member holds no apps scope.
    const user = await signup(t, a.workspaceId, a.apiKey, { email: 'user@example.com', name: 'User' });
    expect(
      (await t.request('GET', `/w/${a.workspaceId}/custom-toolkits`, { token: user.token })).status,
    ).toBe(403);
    // Without a credential: 401.
    expect((await t.request('GET', `/w/${a.workspaceId}/custom-toolkits`)).status).toBe(401);
  });

  it("answers 404 for another workspace's toolkits and never lists them", async () => {
    const a = await t.bootstrap();
    const b = await t.bootstrap();
    const theirs = await createToolkit(b.workspaceId, b.apiKey, { name: 'Secret', slug: 'secret' });
    for (const [method, suffix, body] of [
      ['GET', '', undefined],
      ['PUT', '', { name: 'Mine' }],
      ['POST', '/enable', undefined],
      ['POST', '/disable', undefined],
      ['DELETE', '', undefined],
      ['GET', '/tools', undefined],
      ['POST', '/tools', { name: 'mine' }],
    ] as const) {
      const res = await t.request(method, `/w/${a.workspaceId}/custom-toolkits/${theirs.id}${suffix}`, {
        token: a.apiKey,
        body,
      });
      expect({ method, suffix, status: res.status }).toEqual({ method, suffix, status: 404 });
      await t.expectEvents(res, []);
    }
    // B's own workspace is not A's to read at all.
    expect((await t.request('GET', `/w/${b.workspaceId}/custom-toolkits`, { token: a.apiKey })).status).toBe(
      404,
    );
    expect(
      (await t.request('GET', `/w/${a.workspaceId}/custom-toolkits`, { token: a.apiKey })).body.total,
    ).toBe(0);
    const still = await t.request('GET', `/w/${b.workspaceId}/custom-toolkits/${theirs.id}`, {
      token: b.apiKey,
    });
    expect(still.body).toMatchObject({ name: 'Secret', enabled: true });
    // The slug is per workspace.
    await createToolkit(a.workspaceId, a.apiKey, { name: 'Mine', slug: 'secret' });
  });
});
