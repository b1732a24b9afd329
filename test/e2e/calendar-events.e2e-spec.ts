import { startTestApp, TestApp } from '../support/app';
import { keyWithScopes, signup } from '../support/identity-fixtures';

type Ev = { id: number; title: string };
const titles = (body: { items: Ev[] }): string[] => body.items.map((e) => e.title).sort();

/** Calendar events: CRUD with ETags and events, the window query at its edges, access, tenants. */
describe('calendar events (e2e)', () => {
  let t: TestApp;
  let wid: string;
  let apiKey: string;
  let managerId: number;
  let calendarId: number;

  beforeAll(async () => {
    t = await startTestApp();
    ({ workspaceId: wid, apiKey, memberId: managerId } = await t.bootstrap('Clinic'));
    calendarId = (await t.request('POST', `/w/${wid}/calendars`, { token: apiKey, body: { name: 'Rota' } }))
      .body.id;
  });
  afterAll(() => t.close());

  const create = (token: string, body: Record<string, unknown>, w = wid) =>
    t.request('POST', `/w/${w}/calendar-events`, { token, body });

  it('creates, reads, updates with If-Match and deletes an event, appending its events', async () => {
    const ann = await signup(t, wid, apiKey, { email: 'ann@example.com' });
    const res = await create(apiKey, {
      title: 'Intake call',
      startTime: '2024-05-01T09:00:00+05:30',
      endTime: '2024-05-01T10:00:00+05:30',
      calendarId,
      attendeeMemberIds: [ann.member.id, managerId],
      description: 'First call',
    });
    expect(res.status).toBe(201);
    const id = res.body.id as number;
    expect(res.body).toEqual({
      id,
      calendarId,
      title: 'Intake call',
      description: 'First call',
      startTime: '2024-05-01T03:30:00.000Z',
      endTime: '2024-05-01T04:30:00.000Z',
      attendeeMemberIds: [ann.member.id, managerId],
      organizerMemberId: managerId,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(res.headers.get('location')).toBe(`/api/v2/w/${wid}/calendar-events/${id}`);
    expect(res.headers.get('etag')).toBe('"1"');
    await t.expectEvents(res, [
      {
        type: 'CalendarEventCreated',
        stream: `calendarevent-${id}`,
        data: {
          eventId: id,
          workspaceId: wid,
          calendarId,
          startTime: '2024-05-01T09:00:00+05:30',
          endTime: '2024-05-01T10:00:00+05:30',
          attendeeMemberIds: [ann.member.id, managerId],
        },
      },
    ]);
    const got = await t.request('GET', `/w/${wid}/calendar-events/${id}`, { token: apiKey });
    expect(got.body).toEqual(res.body);

    const stale = await t.request('PUT', `/w/${wid}/calendar-events/${id}`, {
      token: apiKey,
      body: { title: 'Stale' },
      headers: { 'if-match': '"7"' },
    });
    expect(stale.status).toBe(412);
    await t.expectEvents(stale, []);

    const put = await t.request('PUT', `/w/${wid}/calendar-events/${id}`, {
      token: apiKey,
      body: { title: 'Intake', endTime: null, description: null, attendeeMemberIds: [ann.member.id] },
      headers: { 'if-match': '"1"' },
    });
    expect(put.status).toBe(200);
    expect(put.headers.get('etag')).toBe('"2"');
    expect(put.body).toMatchObject({
      title: 'Intake',
      endTime: null,
      description: null,
      attendeeMemberIds: [ann.member.id],
    });
    await t.expectEvents(put, [
      {
        type: 'CalendarEventUpdated',
        data: {
          eventId: id,
          title: 'Intake',
          endTime: null,
          description: null,
          attendeeMemberIds: [ann.member.id],
        },
      },
    ]);
    // Nothing different: 200, no event, same version.
    const same = await t.request('PUT', `/w/${wid}/calendar-events/${id}`, {
      token: apiKey,
      body: { title: 'Intake' },
    });
    expect(same.headers.get('etag')).toBe('"2"');
    await t.expectEvents(same, []);

    const del = await t.request('DELETE', `/w/${wid}/calendar-events/${id}`, {
      token: apiKey,
      headers: { 'if-match': '"2"' },
    });
    expect(del.status).toBe(204);
    await t.expectEvents(del, [
      { type: 'CalendarEventDeleted', stream: `calendarevent-${id}`, data: { eventId: id } },
    ]);
    expect((await t.request('GET', `/w/${wid}/calendar-events/${id}`, { token: apiKey })).status).toBe(404);
    expect((await t.request('DELETE', `/w/${wid}/calendar-events/${id}`, { token: apiKey })).status).toBe(
      404,
    );
  });

  it('refuses bad events with 400 naming the field, appending nothing', async () => {
    const other = await t.bootstrap('Other');
    const start = '2024-05-01T09:00:00Z';
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ startTime: start }, /^title:/],
      [{ title: 'x' }, /^startTime:/],
      [
        { title: 'x', startTime: '2024-05-01T09:00:00' },
        /^startTime: must be an ISO 8601 date-time with an offset/,
      ],
      [{ title: 'x', startTime: '2024-02-30T09:00:00Z' }, /^startTime:/],
      [{ title: 'x', startTime: start, endTime: start }, /^endTime: must be after startTime/],
      [
        { title: 'x', startTime: start, endTime: '2024-05-01T14:00:00+05:30' },
        /^endTime: must be after startTime/,
      ],
      [
        { title: 'x', startTime: start, calendarId: 2_000_000_000 },
        /^calendarId: no calendar with id 2000000000/,
      ],
      [
        { title: 'x', startTime: start, attendeeMemberIds: [other.memberId] },
        /^attendeeMemberIds: no member with id/,
      ],
      [{ title: 'x', startTime: start, attendeeMemberIds: [0] }, /^attendeeMemberIds:/],
      [{ title: 'x', startTime: start, endTime: null }, /^endTime: must not be null/],
      [{ title: 'x', startTime: start, room: 'A' }, /^room: unknown field/],
    ];
    for (const [body, detail] of cases) {
      const res = await create(apiKey, body);
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(detail);
      await t.expectEvents(res, []);
    }
    const ok = await create(apiKey, { title: 'x', startTime: start, endTime: '2024-05-01T10:00:00Z' });
    const bad = await t.request('PUT', `/w/${wid}/calendar-events/${ok.body.id}`, {
      token: apiKey,
      body: { startTime: '2024-05-01T11:00:00Z' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/^endTime: must be after startTime/);
    await t.expectEvents(bad, []);
  });

  describe('the window query: events overlapping [startTime, endTime)', () => {
    let cal: number;
    const window = { startTime: '2030-01-01T09:00:00Z', endTime: '2030-01-01T17:00:00Z' };

    beforeAll(async () => {
      cal = (await t.request('POST', `/w/${wid}/calendars`, { token: apiKey, body: { name: 'Window' } })).body
        .id;
      const events: [string, string, string | undefined][] = [
        ['ends at start', '2030-01-01T08:00:00Z', '2030-01-01T09:00:00Z'],
        ['ends at start (+05:30)', '2030-01-01T13:00:00+05:30', '2030-01-01T14:30:00+05:30'],
        ['ends just after start', '2030-01-01T08:00:00Z', '2030-01-01T09:00:00.001Z'],
        ['starts at end', '2030-01-01T17:00:00Z', '2030-01-01T18:00:00Z'],
        ['starts at end (-04:00)', '2030-01-01T13:00:00-04:00', '2030-01-01T14:00:00-04:00'],
        ['starts just before end', '2030-01-01T16:59:59.999Z', '2030-01-01T18:00:00Z'],
        ['spans the window', '2030-01-01T00:00:00Z', '2030-01-02T00:00:00Z'],
        ['inside', '2030-01-01T12:00:00Z', '2030-01-01T13:00:00Z'],
        ['instant at start', '2030-01-01T09:00:00Z', undefined],
        ['instant at end', '2030-01-01T17:00:00Z', undefined],
        ['the day before', '2029-12-31T09:00:00Z', '2029-12-31T17:00:00Z'],
      ];
      for (const [title, startTime, endTime] of events) {
        const res = await create(apiKey, {
          title,
          startTime,
          ...(endTime ? { endTime } : {}),
          calendarId: cal,
        });
        expect(res.status).toBe(201);
      }
    });

    const list = (query: Record<string, string | number>) =>
      t.request(
        'GET',
        `/w/${wid}/calendar-events?${new URLSearchParams({ calendarId: String(cal), ...Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])) })}`,
        {
          token: apiKey,
        },
      );

    const inside = [
      'ends just after start',
      'inside',
      'instant at start',
      'spans the window',
      'starts just before end',
    ];

    it('leaves out an event ending exactly at startTime and one starting exactly at endTime; keeps one spanning the window', async () => {
      const res = await list(window);
      expect(res.status).toBe(200);
      expect(titles(res.body)).toEqual(inside);
      expect(res.body.total).toBe(inside.length);
    });

    it('honours offsets in the query (+05:30 for the same instants gives the same events)', async () => {
      const res = await list({
        startTime: '2030-01-01T14:30:00+05:30',
        endTime: '2030-01-01T22:30:00+05:30',
      });
      expect(titles(res.body)).toEqual(inside);
    });

    it('orders by start time and paginates', async () => {
      const page1 = await list({ ...window, pageSize: 2 });
      expect(page1.body.items.map((e: Ev) => e.title)).toEqual(['spans the window', 'ends just after start']);
      const page3 = await list({ ...window, pageSize: 2, page: 3 });
      expect(page3.body).toMatchObject({
        total: 5,
        page: 3,
        pageSize: 2,
        items: [{ title: 'starts just before end' }],
      });
    });

    it('takes one side alone, a search on the title, and the attendee filter', async () => {
      const after = await list({ startTime: '2030-01-01T17:00:00Z' });
      expect(titles(after.body)).toEqual([
        'instant at end',
        'spans the window',
        'starts at end',
        'starts at end (-04:00)',
        'starts just before end',
      ]);
      const before = await list({ endTime: '2030-01-01T09:00:00Z' });
      expect(titles(before.body)).toEqual([
        'ends at start',
        'ends at start (+05:30)',
        'ends just after start',
        'spans the window',
        'the day before',
      ]);
      expect(titles((await list({ ...window, search: 'INSTANT' })).body)).toEqual(['instant at start']);
      expect((await list({ ...window, attendeeMemberId: managerId })).body.total).toBe(0);
    });

    it('is 400 naming the field for a window that is empty, reversed, or lacks an offset', async () => {
      const cases: [Record<string, string>, RegExp][] = [
        [{ startTime: window.startTime, endTime: window.startTime }, /endTime: must be after startTime/],
        [{ startTime: window.endTime, endTime: window.startTime }, /endTime: must be after startTime/],
        [
          { startTime: '2030-01-01T09:00:00', endTime: window.endTime },
          /^startTime: must be an ISO 8601 date-time with an offset/,
        ],
        [{ startTime: window.startTime, endTime: 'tomorrow' }, /^endTime:/],
      ];
      for (const [query, detail] of cases) {
        const res = await list(query);
        expect(res.status).toBe(400);
        expect(res.body.detail).toMatch(detail);
      }
    });

    it('serves the window from the GiST index on (workspace_id, during)', async () => {
      const rows = (await t.database.pool().query(
        `SET enable_seqscan = off;
         EXPLAIN SELECT id FROM calendar_events
          WHERE workspace_id = '${wid}' AND during && tstzrange('${window.startTime}', '${window.endTime}', '[)')`,
      )) as unknown as { rows: { 'QUERY PLAN': string }[] }[];
      const plan = rows[1].rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(plan).toMatch(/calendar_events_during/);
    });
  });

  describe('access: the owner of the calendar, or calendars:read / write / admin', () => {
    let bob: { token: string; member: { id: number } };
    let bobs: number;
    let eventId: number;

    beforeAll(async () => {
      bob = await signup(t, wid, apiKey, { email: 'bob@example.com' });
      bobs = (await t.request('POST', `/w/${wid}/calendars`, { token: bob.token, body: { name: 'Bob' } }))
        .body.id;
    });

    it('the owner, holding no scope, manages the events of its own calendar', async () => {
      const res = await create(bob.token, {
        title: 'Bob 1',
        startTime: '2031-01-01T10:00:00Z',
        calendarId: bobs,
      });
      expect(res.status).toBe(201);
      expect(res.body.organizerMemberId).toBe(bob.member.id);
      eventId = res.body.id;
      expect(
        (await t.request('GET', `/w/${wid}/calendar-events/${eventId}`, { token: bob.token })).status,
      ).toBe(200);
      const put = await t.request('PUT', `/w/${wid}/calendar-events/${eventId}`, {
        token: bob.token,
        body: { title: 'Bob 2' },
      });
      expect(put.status).toBe(200);
      const list = await t.request('GET', `/w/${wid}/calendar-events`, { token: bob.token });
      expect(list.body.items.map((e: Ev) => e.id)).toEqual([eventId]);
      const temp = await create(bob.token, {
        title: 'Bob temp',
        startTime: '2031-01-02T10:00:00Z',
        calendarId: bobs,
      });
      const del = await t.request('DELETE', `/w/${wid}/calendar-events/${temp.body.id}`, {
        token: bob.token,
      });
      expect(del.status).toBe(204);
      await t.expectEvents(del, [{ type: 'CalendarEventDeleted' }]);
    });

    it('the owner cannot touch events elsewhere: another calendar, no calendar, or moving its own out', async () => {
      const managers = await create(apiKey, { title: 'M', startTime: '2031-01-01T10:00:00Z', calendarId });
      const refusals = [
        await create(bob.token, { title: 'x', startTime: '2031-01-01T10:00:00Z', calendarId }),
        await create(bob.token, { title: 'x', startTime: '2031-01-01T10:00:00Z' }),
        await t.request('GET', `/w/${wid}/calendar-events/${managers.body.id}`, { token: bob.token }),
        await t.request('PUT', `/w/${wid}/calendar-events/${managers.body.id}`, {
          token: bob.token,
          body: { title: 'x' },
        }),
        await t.request('DELETE', `/w/${wid}/calendar-events/${managers.body.id}`, { token: bob.token }),
        await t.request('PUT', `/w/${wid}/calendar-events/${eventId}`, {
          token: bob.token,
          body: { calendarId: null },
        }),
      ];
      for (const res of refusals) {
        expect(res.status).toBe(403);
        expect(res.body.detail).toMatch(/calendars:(read|write|admin)/);
        await t.expectEvents(res, []);
      }
    });

    it('calendars:read reads, calendars:write creates and changes, only calendars:admin deletes', async () => {
      const reader = await keyWithScopes(t, apiKey, ['calendars:read']);
      const writer = await keyWithScopes(t, apiKey, ['calendars:write']);
      const admin = await keyWithScopes(t, apiKey, ['calendars:admin']);
      const path = `/w/${wid}/calendar-events/${eventId}`;

      expect((await t.request('GET', path, { token: reader })).status).toBe(200);
      const readerPut = await t.request('PUT', path, { token: reader, body: { title: 'R' } });
      expect(readerPut.status).toBe(403);
      expect(readerPut.body.detail).toMatch(/calendars:write/);
      expect(
        (await create(reader, { title: 'R', startTime: '2031-01-01T10:00:00Z', calendarId: bobs })).status,
      ).toBe(403);

      const writerPut = await t.request('PUT', path, { token: writer, body: { title: 'W' } });
      expect(writerPut.status).toBe(200);
      await t.expectEvents(writerPut, [{ type: 'CalendarEventUpdated', data: { title: 'W' } }]);
      expect((await create(writer, { title: 'W', startTime: '2031-01-01T10:00:00Z' })).status).toBe(201);
      const writerDelete = await t.request('DELETE', path, { token: writer });
      expect(writerDelete.status).toBe(403);
      expect(writerDelete.body.detail).toMatch(/calendars:admin/);
      await t.expectEvents(writerDelete, []);

      expect((await t.request('DELETE', path, { token: admin })).status).toBe(204);
    });
  });

  it('keeps tenants apart: ids of another workspace are 404 there, its calendars and members 400 here', async () => {
    const ev = await create(apiKey, { title: 'Private', startTime: '2032-01-01T10:00:00Z', calendarId });
    const other = await t.bootstrap('Elsewhere');
    const path = `/w/${other.workspaceId}/calendar-events/${ev.body.id}`;
    expect((await t.request('GET', path, { token: other.apiKey })).status).toBe(404);
    expect((await t.request('PUT', path, { token: other.apiKey, body: { title: 'x' } })).status).toBe(404);
    expect((await t.request('DELETE', path, { token: other.apiKey })).status).toBe(404);
    const list = await t.request('GET', `/w/${other.workspaceId}/calendar-events`, { token: other.apiKey });
    expect(list.body).toMatchObject({ total: 0, items: [] });
    const foreign = await create(
      other.apiKey,
      { title: 'x', startTime: '2032-01-01T10:00:00Z', calendarId },
      other.workspaceId,
    );
    expect(foreign.status).toBe(400);
    expect(foreign.body.detail).toMatch(/^calendarId: no calendar/);
    const attendee = await create(
      other.apiKey,
      { title: 'x', startTime: '2032-01-01T10:00:00Z', attendeeMemberIds: [managerId] },
      other.workspaceId,
    );
    expect(attendee.status).toBe(400);
    expect(attendee.body.detail).toMatch(/^attendeeMemberIds: no member/);
    expect(
      (await t.request('GET', `/w/${wid}/calendar-events/${ev.body.id}`, { token: other.apiKey })).status,
    ).toBe(404);
    expect(
      (await t.request('GET', `/w/${wid}/calendar-events/${ev.body.id}`, { token: apiKey })).body.title,
    ).toBe('Private');
  });
});
