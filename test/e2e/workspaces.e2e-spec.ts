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
      settings: { timezone: 'Europe/Paris', defaultMemberRoleId: expect.any(Number) },
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

  it('the name rule is the decider’s, on every path: blank or over 200 characters is a 400 naming name, 200 is fine', async () => {
    const a = await t.bootstrap('Epsilon');
    const long = await t.request('PUT', `/w/${a.workspaceId}`, {
      token: a.apiKey,
      body: { name: 'x'.repeat(201) },
    });
    expect(long.status).toBe(400);
    expect(long.body.detail).toBe('name: must be at most 200 characters');
    const blank = await t.request('PUT', `/w/${a.workspaceId}`, { token: a.apiKey, body: { name: '   ' } });
    expect(blank.status).toBe(400);
    expect(blank.body.detail).toBe('name: must not be empty');
    expect(await t.eventsOf(long)).toEqual([]);
    expect(await t.eventsOf(blank)).toEqual([]);
    const longest = await t.request('PUT', `/w/${a.workspaceId}`, {
      token: a.apiKey,
      body: { name: 'y'.repeat(200) },
    });
    expect(longest.status).toBe(200);
    await t.expectEvents(longest, [{ type: 'WorkspaceUpdated', data: { name: 'y'.repeat(200) } }]);
    // The OpenAPI document shows the same limit, from the same constant.
    const doc = await t.request('GET', '/openapi.json');
    expect(doc.body.components.schemas.UpdateWorkspaceDto.properties.name).toMatchObject({
      minLength: 1,
      maxLength: 200,
    });
  });

  it('bootstrap refuses a bad workspace name before it appends anything (no orphan roles)', async () => {
    const count = async () => (await t.store.readAll({ maxCount: 100_000 })).length;
    const before = await count();
    await expect(t.bootstrap(' ')).rejects.toThrow('name: must not be empty');
    await expect(t.bootstrap('z'.repeat(201))).rejects.toThrow('name: must be at most 200 characters');
    expect(await count()).toBe(before);
  });

  it('settings are checked by value, not only by shape: IANA time zones, bounded flags, role ids in range', async () => {
    const a = await t.bootstrap('Values');
    const refused: [unknown, RegExp][] = [
      [{ settings: { timezone: 'Mars/Olympus' } }, /^settings\.timezone: must be an IANA time zone/],
      [{ settings: { timezone: 'Europe/Atlantis' } }, /^settings\.timezone: must be an IANA time zone/],
      [{ settings: { timezone: '+05:00' } }, /^settings\.timezone: must be an IANA time zone/],
      [
        { settings: { defaultMemberRoleId: 99999999999 } },
        /^settings\.defaultMemberRoleId: must not be greater/,
      ],
      [
        {
          settings: { features: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`f${i}`, true])) },
        },
        /^settings\.features: at most 100 flags/,
      ],
      [
        { settings: { features: { ['x'.repeat(65)]: true } } },
        /^settings\.features: a flag name must be 1-64/,
      ],
    ];
    for (const [body, detail] of refused) {
      const res = await t.request('PUT', `/w/${a.workspaceId}`, { token: a.apiKey, body });
      expect({ body, status: res.status, detail: res.body.detail }).toEqual({
        body,
        status: 400,
        detail: expect.stringMatching(detail),
      });
      expect(await t.eventsOf(res)).toEqual([]);
    }
    for (const timezone of ['UTC', 'America/Argentina/Buenos_Aires', 'Asia/Kolkata', 'Etc/GMT+5']) {
      const ok = await t.request('PUT', `/w/${a.workspaceId}`, {
        token: a.apiKey,
        body: { settings: { timezone } },
      });
      expect(ok.status).toBe(200);
      expect(ok.body.settings.timezone).toBe(timezone);
    }
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
