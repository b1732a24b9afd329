import { startTestApp, TestApp } from '../support/app';
import { keyWithScopes } from '../support/identity-fixtures';
import { agentMember, createWorkflow, person } from '../support/work-fixtures';

describe('tasks (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('creates, reads, updates and deletes a task, with its events and conditional writes', async () => {
    const a = await t.bootstrap();
    const agentId = await agentMember(t, a.workspaceId, a.apiKey);
    const wf = await createWorkflow(t, a.workspaceId, a.apiKey, { name: 'W', agentId });
    const ann = await person(t, a.workspaceId, a.apiKey);
    const res = await t.request('POST', `/w/${a.workspaceId}/tasks`, {
      token: a.apiKey,
      body: {
        name: 'Call back',
        slug: 'call-back',
        description: 'About the referral',
        workflowId: wf.id,
        priority: 'high',
        dueAt: '2026-12-01T09:00:00+01:00',
        assignees: [ann.memberId],
      },
    });
    expect(res.status).toBe(201);
    const id = res.body.id as number;
    expect(res.body).toEqual({
      id,
      name: 'Call back',
      title: 'Call back',
      slug: 'call-back',
      description: 'About the referral',
      workflowId: wf.id,
      isAdmin: false,
      status: 'open',
      priority: 'high',
      dueAt: '2026-12-01T08:00:00.000Z',
      assignees: [ann.memberId],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(res.headers.get('location')).toBe(`/api/v2/w/${a.workspaceId}/tasks/${id}`);
    expect(res.headers.get('etag')).toBe('"1"');
    await t.expectEvents(res, [
      {
        type: 'TaskCreated',
        stream: `task-${id}`,
        data: { taskId: id, task: { slug: 'call-back', priority: 'high' } },
      },
    ]);

    const stale = await t.request('PUT', `/w/${a.workspaceId}/tasks/${id}`, {
      token: a.apiKey,
      headers: { 'if-match': '"5"' },
      body: { status: 'done' },
    });
    expect(stale.status).toBe(412);
    await t.expectEvents(stale, []);
    const put = await t.request('PUT', `/w/${a.workspaceId}/tasks/${id}`, {
      token: a.apiKey,
      headers: { 'if-match': '"1"' },
      body: {
        name: 'Call back today',
        description: null,
        status: 'in_progress',
        priority: 'urgent',
        assignees: [],
      },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      name: 'Call back today',
      title: 'Call back',
      description: null,
      status: 'in_progress',
      priority: 'urgent',
      assignees: [],
    });
    expect(put.headers.get('etag')).toBe('"2"');
    await t.expectEvents(put, [
      {
        type: 'TaskUpdated',
        data: {
          changes: {
            name: 'Call back today',
            description: null,
            status: 'in_progress',
            priority: 'urgent',
            assignees: [],
          },
          task: { id, status: 'in_progress' },
        },
      },
    ]);

    const del = await t.request('DELETE', `/w/${a.workspaceId}/tasks/${id}`, {
      token: a.apiKey,
      headers: { 'if-match': '"2"' },
    });
    expect(del.status).toBe(204);
    await t.expectEvents(del, [{ type: 'TaskDeleted', stream: `task-${id}`, data: { slug: 'call-back' } }]);
    expect((await t.request('GET', `/w/${a.workspaceId}/tasks/${id}`, { token: a.apiKey })).status).toBe(404);
    // Its slug is free again.
    const reuse = await t.request('POST', `/w/${a.workspaceId}/tasks`, {
      token: a.apiKey,
      body: { name: 'Again', slug: 'call-back' },
    });
    expect(reuse.status).toBe(201);
  });

  it('keeps slugs unique per workspace, also under concurrent creates, and lets another workspace use the same slug', async () => {
    const a = await t.bootstrap();
    const b = await t.bootstrap();
    const racing = await Promise.all(
      Array.from({ length: 8 }, () =>
        t.request('POST', `/w/${a.workspaceId}/tasks`, {
          token: a.apiKey,
          body: { name: 'Intake', slug: 'intake' },
        }),
      ),
    );
    expect(racing.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
    const loser = racing.find((r) => r.status === 409)!;
    expect(loser.body.detail).toBe('slug: another task of this workspace already has the slug "intake"');
    expect((await t.request('GET', `/w/${a.workspaceId}/tasks`, { token: a.apiKey })).body.total).toBe(1);
    expect(
      (
        await t.request('POST', `/w/${b.workspaceId}/tasks`, {
          token: b.apiKey,
          body: { name: 'Intake', slug: 'intake' },
        })
      ).status,
    ).toBe(201);
  });

  it('refuses bad input naming the field, and changes nothing', async () => {
    const a = await t.bootstrap();
    const b = await t.bootstrap();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{}, /^name:/],
      [{ name: 'X', slug: 'Not A Slug' }, /^slug:/],
      [
        { name: 'X', priority: 'asap' },
        /^priority: must be one of the following values: low, normal, high, urgent/,
      ],
      [{ name: 'X', dueAt: 'tomorrow' }, /^dueAt: must be an ISO 8601 date-time/],
      [{ name: 'X', assignees: [b.memberId] }, /^assignees: \d+ not an active member of this workspace$/],
      [{ name: 'X', workflowId: 999999 }, /^workflowId: workflow 999999 does not exist in this workspace$/],
      [{ name: 'X', status: 'done' }, /^status: unknown field$/],
      [{ name: null }, /^name: must not be null$/],
    ];
    for (const [body, detail] of cases) {
      const res = await t.request('POST', `/w/${a.workspaceId}/tasks`, { token: a.apiKey, body });
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body.detail).toMatch(detail);
      await t.expectEvents(res, []);
    }
  });

  it('filters by status, assignee, workflowId, priority and search, and pages', async () => {
    const a = await t.bootstrap();
    const agentId = await agentMember(t, a.workspaceId, a.apiKey);
    const wf = await createWorkflow(t, a.workspaceId, a.apiKey, { name: 'W', agentId });
    const ann = await person(t, a.workspaceId, a.apiKey);
    const mk = async (body: Record<string, unknown>) =>
      (await t.request('POST', `/w/${a.workspaceId}/tasks`, { token: a.apiKey, body })).body.id as number;
    const t1 = await mk({ name: 'Alpha', assignees: [ann.memberId], priority: 'low' });
    const t2 = await mk({ name: 'Beta', workflowId: wf.id, priority: 'urgent' });
    const t3 = await mk({ name: 'Gamma', title: 'Alpha follow-up', assignees: [ann.memberId, a.memberId] });
    await t.request('PUT', `/w/${a.workspaceId}/tasks/${t2}`, { token: a.apiKey, body: { status: 'done' } });
    const ids = async (query: string) => {
      const res = await t.request('GET', `/w/${a.workspaceId}/tasks${query}`, { token: a.apiKey });
      expect(res.status).toBe(200);
      return (res.body.items as { id: number }[]).map((i) => i.id);
    };
    expect(await ids('')).toEqual([t1, t2, t3]);
    expect(await ids('?status=done')).toEqual([t2]);
    expect(await ids('?status=open')).toEqual([t1, t3]);
    expect(await ids(`?assignee=${ann.memberId}`)).toEqual([t1, t3]);
    expect(await ids(`?assignee=${a.memberId}`)).toEqual([t3]);
    expect(await ids(`?workflowId=${wf.id}`)).toEqual([t2]);
    expect(await ids('?priority=urgent')).toEqual([t2]);
    expect(await ids('?search=alpha')).toEqual([t1, t3]);
    const page = await t.request('GET', `/w/${a.workspaceId}/tasks?page=2&page_size=2`, { token: a.apiKey });
    expect(page.body).toMatchObject({ total: 3, page: 2, pageSize: 2, items: [{ id: t3 }] });
    expect(
      (await t.request('GET', `/w/${a.workspaceId}/tasks?priority=asap`, { token: a.apiKey })).status,
    ).toBe(400);
    expect((await t.request('GET', `/w/${a.workspaceId}/tasks?assignee=0`, { token: a.apiKey })).status).toBe(
      400,
    );
  });

  it('shows isAdmin tasks only to holders of assignments:admin', async () => {
    const a = await t.bootstrap();
    const writer = await keyWithScopes(t, a.apiKey, ['assignments:write']);
    const admin = await t.request('POST', `/w/${a.workspaceId}/tasks`, {
      token: a.apiKey,
      body: { name: 'Payroll review', isAdmin: true },
    });
    expect(admin.status).toBe(201);
    expect(admin.body.isAdmin).toBe(true);
    const plain = await t.request('POST', `/w/${a.workspaceId}/tasks`, {
      token: writer,
      body: { name: 'Plain' },
    });
    expect(plain.status).toBe(201);

    const asWriter = await t.request('GET', `/w/${a.workspaceId}/tasks`, { token: writer });
    expect(asWriter.body).toMatchObject({ total: 1, items: [{ id: plain.body.id }] });
    const asAdmin = await t.request('GET', `/w/${a.workspaceId}/tasks`, { token: a.apiKey });
    expect(asAdmin.body.items.map((i: { id: number }) => i.id)).toEqual([admin.body.id, plain.body.id]);

    const path = `/w/${a.workspaceId}/tasks/${admin.body.id}`;
    expect((await t.request('GET', path, { token: writer })).status).toBe(404);
    const hiddenPut = await t.request('PUT', path, {
      token: writer,
      headers: { 'if-match': '"9"' },
      body: { status: 'done' },
    });
    expect(hiddenPut.status).toBe(404);
    await t.expectEvents(hiddenPut, []);
    expect((await t.request('GET', path, { token: a.apiKey })).status).toBe(200);

    const create = await t.request('POST', `/w/${a.workspaceId}/tasks`, {
      token: writer,
      body: { name: 'Sneaky', isAdmin: true },
    });
    expect(create.status).toBe(403);
    expect(create.body.detail).toBe('isAdmin: an admin-only task requires the scope assignments:admin');
    await t.expectEvents(create, []);
  });

  it('needs assignments:read to read, assignments:write to create and change, assignments:admin to delete', async () => {
    const a = await t.bootstrap();
    const task = await t.request('POST', `/w/${a.workspaceId}/tasks`, {
      token: a.apiKey,
      body: { name: 'T' },
    });
    const path = `/w/${a.workspaceId}/tasks/${task.body.id}`;
    const none = await keyWithScopes(t, a.apiKey, ['workflows:admin']);
    const reader = await keyWithScopes(t, a.apiKey, ['assignments:read']);
    const writer = await keyWithScopes(t, a.apiKey, ['assignments:write']);
    const list = await t.request('GET', `/w/${a.workspaceId}/tasks`, { token: none });
    expect(list.status).toBe(403);
    expect(list.body.detail).toMatch(/assignments:read/);
    expect((await t.request('GET', path, { token: none })).status).toBe(403);
    expect((await t.request('GET', path, { token: reader })).status).toBe(200);
    expect(
      (await t.request('POST', `/w/${a.workspaceId}/tasks`, { token: reader, body: { name: 'X' } })).status,
    ).toBe(403);
    expect((await t.request('PUT', path, { token: reader, body: { name: 'X' } })).status).toBe(403);
    expect((await t.request('PUT', path, { token: writer, body: { name: 'X' } })).status).toBe(200);
    const del = await t.request('DELETE', path, { token: writer });
    expect(del.status).toBe(403);
    expect(del.body.detail).toMatch(/assignments:admin/);
    await t.expectEvents(del, []);
    // A member token of a plain User holds no assignments scope.
    const user = await person(t, a.workspaceId, a.apiKey);
    expect((await t.request('GET', `/w/${a.workspaceId}/tasks`, { token: user.token })).status).toBe(403);
  });

  it("answers 404 for another workspace's tasks and never lists them", async () => {
    const a = await t.bootstrap();
    const b = await t.bootstrap();
    const theirs = await t.request('POST', `/w/${b.workspaceId}/tasks`, {
      token: b.apiKey,
      body: { name: 'Secret', slug: 'secret' },
    });
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { name: 'Mine' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await t.request(method, `/w/${a.workspaceId}/tasks/${theirs.body.id}`, {
        token: a.apiKey,
        body,
      });
      expect({ method, status: res.status }).toEqual({ method, status: 404 });
      await t.expectEvents(res, []);
    }
    expect((await t.request('GET', `/w/${b.workspaceId}/tasks`, { token: a.apiKey })).status).toBe(404);
    expect((await t.request('GET', `/w/${a.workspaceId}/tasks`, { token: a.apiKey })).body.total).toBe(0);
    // The slug is per workspace: A may use it.
    expect(
      (
        await t.request('POST', `/w/${a.workspaceId}/tasks`, {
          token: a.apiKey,
          body: { name: 'Mine', slug: 'secret' },
        })
      ).status,
    ).toBe(201);
  });
});
