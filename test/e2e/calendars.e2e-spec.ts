import { startTestApp, TestApp } from '../support/app';
import { keyWithScopes, signup } from '../support/identity-fixtures';

/** Calendars: creation (owner a member of the workspace), reads, access by owner or scope, tenants. */
describe('calendars (e2e)', () => {
  let t: TestApp;
  let wid: string;
  let apiKey: string;
  let managerId: number;

  beforeAll(async () => {
    t = await startTestApp();
    ({ workspaceId: wid, apiKey, memberId: managerId } = await t.bootstrap('Clinic'));
  });
  afterAll(() => t.close());

  const post = (token: string, body: unknown, w = wid) =>
    t.request('POST', `/w/${w}/calendars`, { token, body });

  it("creates the caller's own calendar by default: 201, Location, ETag, CalendarCreated", async () => {
    const res = await post(apiKey, { name: ' Rota ' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name: 'Rota',
      ownerMemberId: managerId,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(res.headers.get('location')).toBe(`/api/v2/w/${wid}/calendars/${res.body.id}`);
    expect(res.headers.get('etag')).toBe('"1"');
    await t.expectEvents(res, [
      {
        type: 'CalendarCreated',
        stream: `calendar-${res.body.id}`,
        data: { calendarId: res.body.id, workspaceId: wid, name: 'Rota', ownerMemberId: managerId },
      },
    ]);
    // Read your writes: the list and the calendar show it at once.
    const got = await t.request('GET', `/w/${wid}/calendars/${res.body.id}`, { token: apiKey });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
    expect(got.headers.get('etag')).toBe('"1"');
    const list = await t.request('GET', `/w/${wid}/calendars?search=rot`, { token: apiKey });
    expect(list.body.items.map((c: { id: number }) => c.id)).toContain(res.body.id);
  });

  it("creates another member's calendar, or the workspace's (ownerMemberId null)", async () => {
    const ann = await signup(t, wid, apiKey, { email: 'ann@example.com', name: 'Ann' });
    const forAnn = await post(apiKey, { name: 'Ann', ownerMemberId: ann.member.id });
    expect(forAnn.status).toBe(201);
    expect(forAnn.body.ownerMemberId).toBe(ann.member.id);
    const shared = await post(apiKey, { name: 'Rooms', ownerMemberId: null });
    expect(shared.status).toBe(201);
    expect(shared.body.ownerMemberId).toBeNull();
    const byOwner = await t.request('GET', `/w/${wid}/calendars?ownerMemberId=${ann.member.id}`, {
      token: apiKey,
    });
    expect(byOwner.body).toMatchObject({ total: 1, page: 1, pageSize: 50, items: [{ id: forAnn.body.id }] });
  });

  it('refuses an owner that is no member of the workspace, and bad bodies, naming the field and appending nothing', async () => {
    const other = await t.bootstrap('Other');
    const cases: [unknown, RegExp][] = [
      [
        { name: 'X', ownerMemberId: 2_000_000_000 },
        /^ownerMemberId: no member with id 2000000000 in this workspace/,
      ],
      [{ name: 'X', ownerMemberId: other.memberId }, /^ownerMemberId: no member with id/],
      [{ name: 'X', ownerMemberId: 0 }, /^ownerMemberId:/],
      [{ name: 'X', ownerMemberId: 'me' }, /^ownerMemberId:/],
      [{ ownerMemberId: managerId }, /^name:/],
      [{ name: '   ' }, /^name: must not be empty/],
      [{ name: 'X', colour: 'red' }, /^colour: unknown field/],
    ];
    for (const [body, detail] of cases) {
      const res = await post(apiKey, body);
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(detail);
      await t.expectEvents(res, []);
    }
  });

  it('refuses an archived owner, and replays a POST with the same Idempotency-Key without a second calendar', async () => {
    const dan = await signup(t, wid, apiKey, { email: 'dan@example.com' });
    expect((await t.request('DELETE', `/w/${wid}/members/${dan.member.id}`, { token: apiKey })).status).toBe(
      200,
    );
    const archived = await post(apiKey, { name: 'Dan', ownerMemberId: dan.member.id });
    expect(archived.status).toBe(400);
    expect(archived.body.detail).toMatch(/^ownerMemberId: member \d+ is archived/);

    const send = () =>
      t.request('POST', `/w/${wid}/calendars`, {
        token: apiKey,
        body: { name: 'Once' },
        headers: { 'idempotency-key': 'calendar-once' },
      });
    const first = await send();
    const again = await send();
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    const named = await t.request('GET', `/w/${wid}/calendars?search=Once`, { token: apiKey });
    expect(named.body.total).toBe(1);
  });

  it('paginates, and a path id that names nothing is 404', async () => {
    const page = await t.request('GET', `/w/${wid}/calendars?page_size=1&page=2`, { token: apiKey });
    expect(page.status).toBe(200);
    expect(page.body.pageSize).toBe(1);
    expect(page.body.page).toBe(2);
    expect(page.body.items).toHaveLength(1);
    expect(page.body.total).toBeGreaterThanOrEqual(3);
    for (const id of ['0', '-1', 'abc', '99999999999', '2147483647'])
      expect((await t.request('GET', `/w/${wid}/calendars/${id}`, { token: apiKey })).status).toBe(404);
  });

  describe('access: owners manage their own calendars, others need the calendars scopes', () => {
    it('a member with no scope at all (member token) creates, reads and lists only its own calendars', async () => {
      const bob = await signup(t, wid, apiKey, { email: 'bob@example.com', name: 'Bob' });
      const own = await post(bob.token, { name: 'Bob' });
      expect(own.status).toBe(201);
      expect(own.body.ownerMemberId).toBe(bob.member.id);
      expect(
        (await t.request('GET', `/w/${wid}/calendars/${own.body.id}`, { token: bob.token })).status,
      ).toBe(200);
      const list = await t.request('GET', `/w/${wid}/calendars`, { token: bob.token });
      expect(list.status).toBe(200);
      expect(list.body.items.map((c: { id: number }) => c.id)).toEqual([own.body.id]);
      expect(list.body.total).toBe(1);

      const managers = await post(apiKey, { name: 'Manager only' });
      const denied = await t.request('GET', `/w/${wid}/calendars/${managers.body.id}`, { token: bob.token });
      expect(denied.status).toBe(403);
      expect(denied.body.detail).toMatch(/calendars:read/);
      for (const body of [
        { name: 'For the manager', ownerMemberId: managerId },
        { name: 'Shared', ownerMemberId: null },
      ]) {
        const res = await post(bob.token, body);
        expect(res.status).toBe(403);
        expect(res.body.detail).toMatch(/^ownerMemberId: .*calendars:write/);
        await t.expectEvents(res, []);
      }
    });

    it('calendars:read reads every calendar and creates none; calendars:write creates for others; a key without calendar scopes reaches none', async () => {
      const carol = await signup(t, wid, apiKey, { email: 'carol@example.com' });
      const reader = await keyWithScopes(t, apiKey, ['calendars:read']);
      const writer = await keyWithScopes(t, apiKey, ['calendars:write']);
      const none = await keyWithScopes(t, apiKey, ['members:read']);

      const all = await t.request('GET', `/w/${wid}/calendars?pageSize=1000`, { token: reader });
      expect(all.status).toBe(200);
      const owners = new Set(all.body.items.map((c: { ownerMemberId: number | null }) => c.ownerMemberId));
      expect(owners.has(null)).toBe(true);
      expect(owners.size).toBeGreaterThan(2);

      const refused = await post(reader, { name: 'Carol', ownerMemberId: carol.member.id });
      expect(refused.status).toBe(403);
      // The reader's member is the manager's, but a key is bounded by its own scopes: the
      // owner rule does not lend a read-only key the right to write.
      const ownByReader = await post(reader, { name: 'Mine' });
      expect(ownByReader.status).toBe(403);
      await t.expectEvents(ownByReader, []);
      const own = await post(writer, { name: 'Mine' });
      expect(own.status).toBe(201);
      expect(own.body.ownerMemberId).toBe(managerId);
      const forCarol = await post(writer, { name: 'Carol', ownerMemberId: carol.member.id });
      expect(forCarol.status).toBe(201);

      // A key that names no calendars scope reaches no calendar, its member's own included.
      const mine = await t.request('GET', `/w/${wid}/calendars?pageSize=1000`, { token: none });
      expect(mine.status).toBe(200);
      expect(mine.body.items).toEqual([]);
      expect((await t.request('GET', `/w/${wid}/calendars/${own.body.id}`, { token: none })).status).toBe(
        403,
      );
      expect(
        (await t.request('GET', `/w/${wid}/calendars/${forCarol.body.id}`, { token: none })).status,
      ).toBe(403);
    });
  });

  it('keeps tenants apart: another workspace neither sees nor reaches these calendars', async () => {
    const mine = await post(apiKey, { name: 'Private' });
    const other = await t.bootstrap('Elsewhere');
    expect(
      (await t.request('GET', `/w/${other.workspaceId}/calendars/${mine.body.id}`, { token: other.apiKey }))
        .status,
    ).toBe(404);
    const list = await t.request('GET', `/w/${other.workspaceId}/calendars`, { token: other.apiKey });
    expect(list.body).toMatchObject({ total: 0, items: [] });
    expect((await t.request('GET', `/w/${wid}/calendars`, { token: other.apiKey })).status).toBe(404);
    expect((await post(other.apiKey, { name: 'Intruder' }, wid)).status).toBe(404);
  });
});
