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

  it('names the acting credential: actor.keyId for an API key, actor.tokenId for a member token', async () => {
    const a = await t.bootstrap('Who acted');
    const keys = await t.request('GET', '/me/api-keys', { token: a.apiKey });
    expect(keys.status).toBe(200);
    const keyId = (keys.body.items as { id: string; name: string }[]).find((k) => k.name === 'bootstrap')!.id;
    const put = await t.request('PUT', `/w/${a.workspaceId}`, { token: a.apiKey, body: { name: 'Renamed' } });
    expect(put.status).toBe(200);
    const events = await t.request('GET', `/w/${a.workspaceId}/events?type=WorkspaceUpdated`, {
      token: a.apiKey,
    });
    expect(events.body.items[0].metadata.actor).toEqual({
      kind: 'api_key',
      id: a.accountUuid,
      accountUuid: a.accountUuid,
      memberId: a.memberId,
      keyId,
    });

    const signup = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
      token: a.apiKey,
      body: { member: { email: 'ann@example.com' } },
    });
    expect(signup.status).toBe(201);
    const issued = (await t.eventsOf(signup)).find((e) => e.type === 'MemberTokenIssued')!;
    const tokenId = (issued.data as { tokenId: string }).tokenId;
    const byToken = await t.request('PUT', '/me', { token: signup.body.token, body: { name: 'Ann' } });
    expect(byToken.status).toBe(200);
    const [updated] = await t.eventsOf(byToken);
    expect(updated.metadata.actor).toEqual({
      kind: 'member_token',
      id: signup.body.account.uuid,
      accountUuid: signup.body.account.uuid,
      memberId: signup.body.member.id,
      tokenId,
    });
    const history = await t.request('GET', `/w/${a.workspaceId}/events?type=MemberUpdated`, {
      token: a.apiKey,
    });
    expect(history.body.items[0].metadata.actor).toMatchObject({ kind: 'member_token', tokenId });
  });

  it('refuses a malformed position with a detail naming the parameter', async () => {
    const a = await t.bootstrap();
    const res = await t.request('GET', `/w/${a.workspaceId}/events?after=yesterday`, { token: a.apiKey });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^after/);
  });
});
