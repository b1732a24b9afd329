import { startTestApp, TestApp } from '../support/app';
import { builtInRoles, customRole, keyWithScopes, signup } from '../support/identity-fixtures';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A moment strictly between what was created before and what will be created after. */
async function instantBetween(): Promise<string> {
  await sleep(50);
  const at = new Date().toISOString();
  await sleep(50);
  return at;
}

describe('list filters: search, startTime, endTime (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const ids = (body: { items: { id: unknown }[] }) => body.items.map((i) => i.id);
  const q = (params: Record<string, string>) => `?${new URLSearchParams(params).toString()}`;

  it('members: search on name, email, phone and externalId, case-insensitive, with totals', async () => {
    const a = await t.bootstrap();
    const b = await t.bootstrap();
    const ann = await signup(t, a.workspaceId, a.apiKey, {
      email: 'ann.smith@alpha.example',
      name: 'Ann Smith',
      phone: '+14155550101',
    });
    const bob = await signup(t, a.workspaceId, a.apiKey, {
      email: 'bob@beta.example',
      name: 'Bob Jones',
      externalId: 'CRM-77',
    });
    // Another workspace's member that would match: never listed.
    await signup(t, b.workspaceId, b.apiKey, { email: 'ann.other@alpha.example', name: 'Ann Other' });
    const list = (params: Record<string, string>) =>
      t.request('GET', `/w/${a.workspaceId}/members${q(params)}`, { token: a.apiKey });

    const byName = await list({ search: 'SMITH' });
    expect(byName.status).toBe(200);
    expect(byName.body).toMatchObject({ total: 1, page: 1, pageSize: 50 });
    expect(ids(byName.body)).toEqual([ann.member.id]);
    expect(ids((await list({ search: 'alpha.EXAMPLE' })).body)).toEqual([ann.member.id]);
    expect(ids((await list({ search: '5550101' })).body)).toEqual([ann.member.id]);
    expect(ids((await list({ search: 'crm-7' })).body)).toEqual([bob.member.id]);
    expect(ids((await list({ search: '  jones  ' })).body)).toEqual([bob.member.id]);
    expect((await list({ search: '.example' })).body.total).toBe(2);
    const none = await list({ search: 'nobody-here' });
    expect(none.status).toBe(200);
    expect(none.body).toMatchObject({ items: [], total: 0 });

    // Combined with the other filters and pagination.
    const paged = await list({ search: '.example', pageSize: '1', page: '2' });
    expect(paged.body).toMatchObject({ total: 2, page: 2, pageSize: 1 });
    expect(ids(paged.body)).toEqual([bob.member.id]);
    expect(ids((await list({ search: '.example', email: 'bob@beta.example' })).body)).toEqual([
      bob.member.id,
    ]);
  });

  it('search treats % and _ literally, and its length is checked', async () => {
    const a = await t.bootstrap();
    const pct = await signup(t, a.workspaceId, a.apiKey, { email: 'pct@example.com', name: '100% Sure' });
    const under = await signup(t, a.workspaceId, a.apiKey, {
      email: 'under@example.com',
      name: 'snake_case',
    });
    await signup(t, a.workspaceId, a.apiKey, { email: 'plain@example.com', name: 'snakeXcase 1000' });
    const list = (params: Record<string, string>) =>
      t.request('GET', `/w/${a.workspaceId}/members${q(params)}`, { token: a.apiKey });

    expect(ids((await list({ search: '%' })).body)).toEqual([pct.member.id]);
    expect(ids((await list({ search: '0%' })).body)).toEqual([pct.member.id]);
    expect(ids((await list({ search: 'e_c' })).body)).toEqual([under.member.id]);
    expect((await list({ search: '\\' })).body.total).toBe(0);

    const everyone = (await list({})).body.total;
    for (const blank of ['', '   ']) expect((await list({ search: blank })).body.total).toBe(everyone);
    const tooLong = await list({ search: 'x'.repeat(201) });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.detail).toMatch(/^search:/);
    expect((await list({ search: 'x'.repeat(200) })).status).toBe(200);
  });

  it('members: startTime inclusive, endTime exclusive, on the creation time', async () => {
    const a = await t.bootstrap();
    const early = await signup(t, a.workspaceId, a.apiKey, { email: 'early@example.com' });
    const between = await instantBetween();
    const late = await signup(t, a.workspaceId, a.apiKey, { email: 'late@example.com' });
    const list = (params: Record<string, string>) =>
      t.request('GET', `/w/${a.workspaceId}/members${q(params)}`, { token: a.apiKey });

    const after = await list({ startTime: between });
    expect(after.status).toBe(200);
    expect(after.body).toMatchObject({ total: 1 });
    expect(ids(after.body)).toEqual([late.member.id]);
    const before = await list({ endTime: between });
    expect(ids(before.body)).toEqual([a.memberId, early.member.id]);
    expect(before.body.total).toBe(2);

    // Bounds: startTime includes its instant, endTime excludes it.
    const lateCreated = (
      await t.request('GET', `/w/${a.workspaceId}/members/${late.member.id}`, {
        token: a.apiKey,
      })
    ).body.createdAt as string;
    expect(ids((await list({ startTime: lateCreated })).body)).toEqual([late.member.id]);
    expect(ids((await list({ endTime: lateCreated })).body)).not.toContain(late.member.id);
    expect((await list({ startTime: lateCreated, endTime: lateCreated })).body.total).toBe(0);

    // Any offset: the same instant written in another zone.
    const shifted = new Date(Date.parse(between) + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    expect(ids((await list({ startTime: shifted })).body)).toEqual([late.member.id]);

    const window = await list({ startTime: '2000-01-01T00:00:00Z', endTime: between, search: 'early' });
    expect(ids(window.body)).toEqual([early.member.id]);
  });

  it('refuses a bad startTime or endTime, and a window that ends before it starts', async () => {
    const a = await t.bootstrap();
    const list = (params: Record<string, string>) =>
      t.request('GET', `/w/${a.workspaceId}/members${q(params)}`, { token: a.apiKey });

    for (const bad of [
      'yesterday',
      '2024-13-01T00:00:00Z',
      '2023-02-29T00:00:00Z',
      '2024-05-01',
      '2024-05-01T10:00:00',
    ]) {
      const res = await list({ startTime: bad });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/^startTime:/);
    }
    const badEnd = await list({ endTime: 'soon' });
    expect(badEnd.status).toBe(400);
    expect(badEnd.body.detail).toMatch(/^endTime:/);

    const reversed = await list({ startTime: '2024-05-02T00:00:00Z', endTime: '2024-05-01T23:59:59.999Z' });
    expect(reversed.status).toBe(400);
    expect(reversed.body.detail).toMatch(/startTime: must not be after endTime/);
    // The same instant in two zones is not reversed.
    expect(
      (await list({ startTime: '2024-05-01T02:00:00+02:00', endTime: '2024-05-01T00:00:00Z' })).status,
    ).toBe(200);
    // Every list shares the checks.
    const events = await t.request('GET', `/w/${a.workspaceId}/events?startTime=nope`, { token: a.apiKey });
    expect(events.status).toBe(400);
    expect(events.body.detail).toMatch(/^startTime:/);
    // An empty search (a cleared search box) filters nothing; an overlong one is 400.
    const all = await t.request('GET', `/me/api-keys`, { token: a.apiKey });
    const emptySearch = await t.request('GET', `/me/api-keys?search=`, { token: a.apiKey });
    expect(emptySearch.status).toBe(200);
    expect(emptySearch.body.total).toBe(all.body.total);
    const long = await t.request('GET', `/me/api-keys?search=${'x'.repeat(201)}`, { token: a.apiKey });
    expect(long.status).toBe(400);
    expect(long.body.detail).toMatch(/^search:/);
  });

  it('members: memberRoleId is another name for roleId', async () => {
    const a = await t.bootstrap();
    const roles = await builtInRoles(t, a.workspaceId, a.apiKey);
    const ann = await signup(t, a.workspaceId, a.apiKey, { email: 'ann@example.com' });
    const list = (params: Record<string, string>) =>
      t.request('GET', `/w/${a.workspaceId}/members${q(params)}`, { token: a.apiKey });

    const byAlias = await list({ memberRoleId: String(roles.User) });
    expect(byAlias.status).toBe(200);
    expect(ids(byAlias.body)).toEqual([ann.member.id]);
    expect(ids((await list({ memberRoleId: String(roles.Manager) })).body)).toEqual([a.memberId]);
    expect(ids((await list({ roleId: String(roles.User), memberRoleId: String(roles.User) })).body)).toEqual([
      ann.member.id,
    ]);
    const both = await list({ roleId: String(roles.User), memberRoleId: String(roles.Manager) });
    expect(both.status).toBe(400);
    expect(both.body.detail).toMatch(/^memberRoleId:/);
    const bad = await list({ memberRoleId: 'abc' });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/^memberRoleId:/);
  });

  it('member roles: search on name and the creation window', async () => {
    const a = await t.bootstrap();
    const early = await customRole(t, a.workspaceId, a.apiKey, 'Night Shift');
    const between = await instantBetween();
    const late = await customRole(t, a.workspaceId, a.apiKey, 'Day Shift');
    const list = (params: Record<string, string>) =>
      t.request('GET', `/w/${a.workspaceId}/member-roles${q(params)}`, { token: a.apiKey });

    const shift = await list({ search: 'SHIFT' });
    expect(shift.status).toBe(200);
    expect(shift.body).toMatchObject({ total: 2 });
    expect(ids(shift.body)).toEqual([early, late]);
    expect(ids((await list({ search: 'night' })).body)).toEqual([early]);
    expect((await list({ search: 'evening' })).body).toMatchObject({ items: [], total: 0 });
    expect(ids((await list({ startTime: between })).body)).toEqual([late]);
    const before = await list({ endTime: between });
    expect(ids(before.body)).toContain(early);
    expect(ids(before.body)).not.toContain(late);
    expect(before.body.total).toBe(before.body.items.length);
  });

  it('invitations: search on email and the creation window', async () => {
    const a = await t.bootstrap();
    const roles = await builtInRoles(t, a.workspaceId, a.apiKey);
    const invite = async (email: string) => {
      const res = await t.request('POST', `/w/${a.workspaceId}/invitations`, {
        token: a.apiKey,
        body: { email, memberRoleId: roles.User },
      });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const first = await invite('carol@gamma.example');
    const between = await instantBetween();
    const second = await invite('dave@delta.example');
    const list = (params: Record<string, string>) =>
      t.request('GET', `/w/${a.workspaceId}/invitations${q(params)}`, { token: a.apiKey });

    const gamma = await list({ search: 'GAMMA' });
    expect(gamma.status).toBe(200);
    expect(gamma.body).toMatchObject({ total: 1 });
    expect(ids(gamma.body)).toEqual([first]);
    expect((await list({ search: 'zeta' })).body).toMatchObject({ items: [], total: 0 });
    expect(ids((await list({ startTime: between })).body)).toEqual([second]);
    expect(ids((await list({ endTime: between })).body)).toEqual([first]);
    expect(ids((await list({ status: 'pending', search: 'delta' })).body)).toEqual([second]);
  });

  it('API keys: search on name and the creation window, only the caller’s keys', async () => {
    const a = await t.bootstrap();
    const b = await t.bootstrap();
    const create = async (token: string, name: string) => {
      const res = await t.request('POST', '/me/api-keys', { token, body: { name, scopes: [] } });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const early = await create(a.apiKey, 'Reporting Export');
    const between = await instantBetween();
    const late = await create(a.apiKey, 'CI deploy');
    await create(b.apiKey, 'Reporting elsewhere');
    const list = (params: Record<string, string>) =>
      t.request('GET', `/me/api-keys${q(params)}`, { token: a.apiKey });

    const reporting = await list({ search: 'reporting' });
    expect(reporting.status).toBe(200);
    expect(reporting.body).toMatchObject({ total: 1 });
    expect(ids(reporting.body)).toEqual([early]);
    expect((await list({ search: 'missing' })).body).toMatchObject({ items: [], total: 0 });
    const after = await list({ startTime: between });
    expect(ids(after.body)).toEqual([late]);
    expect(after.body.total).toBe(1);
    const before = await list({ endTime: between });
    expect(ids(before.body)).toContain(early);
    expect(ids(before.body)).not.toContain(late);
  });

  it('events: search on type or stream name and the occurrence window, in the list and in a stream', async () => {
    const a = await t.bootstrap('Audited');
    const b = await t.bootstrap('Elsewhere');
    const put = (name: string) =>
      t.request('PUT', `/w/${a.workspaceId}`, { token: a.apiKey, body: { name } });
    expect((await put('One')).status).toBe(200);
    const between = await instantBetween();
    expect((await put('Two')).status).toBe(200);
    await t.request('PUT', `/w/${b.workspaceId}`, { token: b.apiKey, body: { name: 'Other' } });
    const list = (params: Record<string, string>) =>
      t.request('GET', `/w/${a.workspaceId}/events${q(params)}`, { token: a.apiKey });

    const updated = await list({ search: 'workspaceupdated' });
    expect(updated.status).toBe(200);
    expect(updated.body.total).toBe(2);
    expect(updated.body.items.map((e: { data: { name: string } }) => e.data.name)).toEqual(['Two', 'One']);
    const byStream = await list({ search: `workspace-${a.workspaceId}` });
    expect(byStream.body.total).toBeGreaterThanOrEqual(3);
    for (const e of byStream.body.items) expect(e.streamName).toBe(`workspace-${a.workspaceId}`);
    expect((await list({ search: 'NoSuchEvent' })).body).toMatchObject({ items: [], total: 0 });

    const after = await list({ startTime: between });
    expect(after.body.items.map((e: { type: string }) => e.type)).toEqual(['WorkspaceUpdated']);
    expect(after.body.total).toBe(1);
    const before = await list({ endTime: between, search: 'Updated' });
    expect(before.body.items.map((e: { data: { name: string } }) => e.data.name)).toEqual(['One']);

    const stream = (params: Record<string, string>) =>
      t.request('GET', `/w/${a.workspaceId}/events/streams/workspace-${a.workspaceId}${q(params)}`, {
        token: a.apiKey,
      });
    const streamAfter = await stream({ startTime: between });
    expect(streamAfter.status).toBe(200);
    expect(streamAfter.body).toMatchObject({ total: 1 });
    expect(streamAfter.body.items.map((e: { revision: string }) => e.revision)).toEqual(['2']);
    const streamCreated = await stream({ search: 'created' });
    expect(streamCreated.body.items.map((e: { type: string }) => e.type)).toEqual(['WorkspaceCreated']);
    // An existing stream the filters exclude is an empty page; a missing one stays 404.
    expect((await stream({ search: 'nothing' })).body).toMatchObject({ items: [], total: 0 });
    const missing = await t.request('GET', `/w/${a.workspaceId}/events/streams/member-999999?search=x`, {
      token: a.apiKey,
    });
    expect(missing.status).toBe(404);
  });

  it('workspaces: search on name and the creation window', async () => {
    const a = await t.bootstrap('Acme Logistics');
    const list = (params: Record<string, string>) => t.request('GET', `/w${q(params)}`, { token: a.apiKey });

    const hit = await list({ search: 'logistics' });
    expect(hit.status).toBe(200);
    expect(hit.body).toMatchObject({ total: 1 });
    expect(ids(hit.body)).toEqual([a.workspaceId]);
    expect((await list({ search: 'Umbrella' })).body).toMatchObject({ items: [], total: 0 });
    const created = (await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey })).body
      .createdAt as string;
    expect(ids((await list({ startTime: created })).body)).toEqual([a.workspaceId]);
    expect((await list({ endTime: created })).body.total).toBe(0);
    expect((await list({ startTime: new Date(Date.now() + 60_000).toISOString() })).body.total).toBe(0);
  });

  it('documents the parameters in OpenAPI on every list', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
    };
    const lists = [
      '/api/v2/w',
      '/api/v2/w/{wid}/members',
      '/api/v2/w/{wid}/member-roles',
      '/api/v2/w/{wid}/invitations',
      '/api/v2/me/api-keys',
      '/api/v2/w/{wid}/events',
      '/api/v2/w/{wid}/events/streams/{streamName}',
    ];
    for (const path of lists) {
      const names = (doc.paths[path]?.get?.parameters ?? [])
        .filter((p) => p.in === 'query')
        .map((p) => p.name);
      expect({ path, names }).toEqual({
        path,
        names: expect.arrayContaining(['page', 'pageSize', 'page_size', 'search', 'startTime', 'endTime']),
      });
    }
    const members = doc.paths['/api/v2/w/{wid}/members'].get.parameters!.map((p) => p.name);
    expect(members).toEqual(expect.arrayContaining(['roleId', 'memberRoleId']));
  });

  it('keyWithScopes keys see the same filtered lists', async () => {
    const a = await t.bootstrap();
    const reader = await keyWithScopes(t, a.apiKey, ['members:read']);
    await signup(t, a.workspaceId, a.apiKey, { email: 'zed@example.com', name: 'Zed' });
    const res = await t.request('GET', `/w/${a.workspaceId}/members?search=zed`, { token: reader });
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(1);
  });
});
