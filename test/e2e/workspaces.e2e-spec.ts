import { startTestApp, TestApp } from '../support/app';

describe('workspaces (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('lists only the caller’s workspaces and reads one', async () => {
    const a = await t.bootstrap('Alpha');
    const b = await t.bootstrap('Beta');
    const list = await t.request('GET', '/w', { token: a.apiKey });
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ total: 1, page: 1, pageSize: 50 });
    expect(list.body.items.map((w: { id: string }) => w.id)).toEqual([a.workspaceId]);

    const one = await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: a.workspaceId, uuid: a.workspaceId, name: 'Alpha' });

    const other = await t.request('GET', `/w/${b.workspaceId}`, { token: a.apiKey });
    expect(other.status).toBe(404);
    expect(other.body.detail).toEqual(expect.any(String));
  });

  it('PUT appends WorkspaceUpdated with only what changed, and answers with the new state', async () => {
    const a = await t.bootstrap('Gamma');
    const res = await t.request('PUT', `/w/${a.workspaceId}`, {
      token: a.apiKey,
      body: { name: 'Gamma two', settings: { timezone: 'Europe/Paris' } },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'Gamma two',
      settings: { timezone: 'Europe/Paris', defaultMemberRoleId: null },
    });
    await t.expectEvents(res, [
      {
        type: 'WorkspaceUpdated',
        stream: `workspace-${a.workspaceId}`,
        data: { workspaceId: a.workspaceId, name: 'Gamma two', settings: { timezone: 'Europe/Paris' } },
      },
    ]);
    const events = await t.eventsOf(res);
    expect(events[0].metadata).toMatchObject({
      workspaceId: a.workspaceId,
      correlationId: res.requestId,
      schemaVersion: 1,
    });
    expect(events[0].metadata.actor).toMatchObject({
      kind: 'api_key',
      accountUuid: a.accountUuid,
      memberId: a.memberId,
    });
  });

  it('refuses unknown fields and bad values with a detail naming the field, and changes nothing', async () => {
    const a = await t.bootstrap('Delta');
    const unknown = await t.request('PUT', `/w/${a.workspaceId}`, {
      token: a.apiKey,
      body: { colour: 'red' },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toMatch(/colour/);
    const bad = await t.request('PUT', `/w/${a.workspaceId}`, { token: a.apiKey, body: { name: '' } });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/^name/);
    expect(await t.eventsOf(unknown)).toEqual([]);
    expect(await t.eventsOf(bad)).toEqual([]);
    const after = await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey });
    expect(after.body.name).toBe('Delta');
  });

  // Each write waits for its projections; on a cluster shared with other test files, their open
  // transactions can hold readers back, hence the generous bound.
  it('POST-then-GET style consistency: each PUT is visible to the next GET, every round (CONSISTENCY_ROUNDS, default 200)', async () => {
    const a = await t.bootstrap('Epsilon');
    for (let i = 0; i < Number(process.env.CONSISTENCY_ROUNDS ?? 200); i++) {
      const put = await t.request('PUT', `/w/${a.workspaceId}`, {
        token: a.apiKey,
        body: { name: `Name ${i}` },
      });
      expect(put.status).toBe(200);
      const get = await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey });
      expect(get.body.name).toBe(`Name ${i}`);
    }
  }, 240_000);

  it('requires a credential', async () => {
    const res = await t.request('GET', '/w');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });
});
