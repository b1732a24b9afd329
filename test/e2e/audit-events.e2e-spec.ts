import { startTestApp, TestApp } from '../support/app';

describe('auditors’ event history (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('lists the workspace’s events newest first with metadata, filtered by type, stream and position', async () => {
    const a = await t.bootstrap('Audited');
    const b = await t.bootstrap('Elsewhere');
    const put1 = await t.request('PUT', `/w/${a.workspaceId}`, { token: a.apiKey, body: { name: 'One' } });
    const put2 = await t.request('PUT', `/w/${a.workspaceId}`, { token: a.apiKey, body: { name: 'Two' } });
    expect([put1.status, put2.status]).toEqual([200, 200]);

    const all = await t.request('GET', `/w/${a.workspaceId}/events`, { token: a.apiKey });
    expect(all.status).toBe(200);
    const types = all.body.items.map((e: { type: string }) => e.type);
    expect(types.slice(0, 2)).toEqual(['WorkspaceUpdated', 'WorkspaceUpdated']);
    expect(types).toEqual(
      expect.arrayContaining(['WorkspaceCreated', 'MemberCreated', 'ApiKeyCreated', 'MemberRoleCreated']),
    );
    expect(all.body.total).toBe(all.body.items.length);
    // Only this workspace's events.
    for (const e of all.body.items) expect(e.metadata.workspaceId).toBe(a.workspaceId);
    expect(all.body.items[0]).toMatchObject({
      type: 'WorkspaceUpdated',
      streamName: `workspace-${a.workspaceId}`,
      revision: '2',
      data: { name: 'Two' },
      metadata: { correlationId: put2.requestId, actor: { kind: 'api_key', accountUuid: a.accountUuid } },
    });
    // No secret material in the history: API keys appear by hash only.
    expect(JSON.stringify(all.body)).not.toContain(a.apiKey);

    const byType = await t.request('GET', `/w/${a.workspaceId}/events?type=WorkspaceUpdated&pageSize=1`, {
      token: a.apiKey,
    });
    expect(byType.body).toMatchObject({ total: 2, page: 1, pageSize: 1 });
    expect(byType.body.items[0].data.name).toBe('Two');

    const firstUpdate = all.body.items[1].position;
    const after = await t.request('GET', `/w/${a.workspaceId}/events?after=${firstUpdate}`, {
      token: a.apiKey,
    });
    expect(after.body.items.map((e: { data: { name?: string } }) => e.data.name)).toEqual(['Two']);

    const stream = await t.request('GET', `/w/${a.workspaceId}/events/streams/workspace-${a.workspaceId}`, {
      token: a.apiKey,
    });
    expect(stream.status).toBe(200);
    expect(stream.body.items.map((e: { revision: string }) => e.revision)).toEqual(['0', '1', '2']);

    const foreign = await t.request('GET', `/w/${a.workspaceId}/events/streams/workspace-${b.workspaceId}`, {
      token: a.apiKey,
    });
    expect(foreign.status).toBe(404);
    const otherWorkspace = await t.request('GET', `/w/${b.workspaceId}/events`, { token: a.apiKey });
    expect(otherWorkspace.status).toBe(404);
  });

  it('refuses a malformed position with a detail naming the parameter', async () => {
    const a = await t.bootstrap();
    const res = await t.request('GET', `/w/${a.workspaceId}/events?after=yesterday`, { token: a.apiKey });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^after/);
  });
});
