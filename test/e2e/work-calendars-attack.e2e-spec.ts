import { startTestApp, TestApp, TestResponse } from '../support/app';
import { builtInRoles, customRole, keyWithScopes } from '../support/identity-fixtures';
import { agentMember, createWorkflow, person } from '../support/work-fixtures';

/**
 * Work (workflows, assignments, tasks) and calendars met as a hostile client and a careless
 * one would: other tenants' ids everywhere, narrow credentials, escalation, odd input,
 * races. Each assertion states the correct behaviour.
 */
describe('work and calendars under attack (e2e)', () => {
  let t: TestApp;
  // Workspace A is the victim, B the attacker's own.
  let a: { workspaceId: string; apiKey: string; memberId: number };
  let b: { workspaceId: string; apiKey: string; memberId: number };
  let aAgent: number;
  let aWorkflow: { id: number; uuid: string };
  let aTask: number;
  let aAssignment: number;
  let aCalendar: number;
  let aEvent: number;
  let bAgent: number;

  beforeAll(async () => {
    t = await startTestApp();
    a = await t.bootstrap('Victim');
    b = await t.bootstrap('Attacker');
    aAgent = await agentMember(t, a.workspaceId, a.apiKey);
    bAgent = await agentMember(t, b.workspaceId, b.apiKey);
    aWorkflow = await createWorkflow(t, a.workspaceId, a.apiKey, { name: 'Victim flow', agentId: aAgent });
    aTask = (
      await t.request('POST', `/w/${a.workspaceId}/tasks`, {
        token: a.apiKey,
        body: { name: 'Victim task', slug: 'victim' },
      })
    ).body.id;
    aAssignment = (
      await t.request('POST', `/w/${a.workspaceId}/assignments`, {
        token: a.apiKey,
        body: { workflowId: aWorkflow.id },
      })
    ).body.id;
    aCalendar = (
      await t.request('POST', `/w/${a.workspaceId}/calendars`, {
        token: a.apiKey,
        body: { name: 'Victim rota' },
      })
    ).body.id;
    aEvent = (
      await t.request('POST', `/w/${a.workspaceId}/calendar-events`, {
        token: a.apiKey,
        body: { title: 'Victim meeting', startTime: '2026-01-01T09:00:00Z', calendarId: aCalendar },
      })
    ).body.id;
    expect([aTask, aAssignment, aCalendar, aEvent].every((id) => Number.isInteger(id))).toBe(true);
  });
  afterAll(() => t.close());

  const req = (
    method: string,
    path: string,
    token: string,
    body?: unknown,
    headers?: Record<string, string>,
  ) => t.request(method, path, { token, body, headers });
  const expectDetail = (res: TestResponse, status: number, field?: string) => {
    expect({ status: res.status, body: res.body }).toMatchObject({
      status,
      body: { detail: expect.any(String) },
    });
    if (field) expect(res.body.detail).toContain(field);
  };

  describe("another tenant's ids", () => {
    it('are 404 in the path, with or without If-Match, and append nothing', async () => {
      const w = `/w/${b.workspaceId}`;
      const paths = [
        `${w}/workflows/${aWorkflow.id}`,
        `${w}/tasks/${aTask}`,
        `${w}/assignments/${aAssignment}`,
        `${w}/calendars/${aCalendar}`,
        `${w}/calendar-events/${aEvent}`,
      ];
      for (const p of paths) expectDetail(await req('GET', p, b.apiKey), 404);
      const puts: [string, Record<string, unknown>][] = [
        [`${w}/workflows/${aWorkflow.id}`, { name: 'Mine now' }],
        [`${w}/tasks/${aTask}`, { name: 'Mine now' }],
        [`${w}/assignments/${aAssignment}`, { status: 'cancelled' }],
        [`${w}/calendar-events/${aEvent}`, { title: 'Mine now' }],
      ];
      for (const [p, body] of puts) {
        for (const headers of [
          undefined,
          { 'if-match': '"1"' },
          { 'if-match': '"99"' },
          { 'if-match': '*' },
        ]) {
          const res = await req('PUT', p, b.apiKey, body, headers);
          expectDetail(res, 404);
          await t.expectEvents(res, []);
        }
      }
      for (const p of [
        `${w}/workflows/${aWorkflow.id}`,
        `${w}/tasks/${aTask}`,
        `${w}/calendar-events/${aEvent}`,
      ]) {
        for (const headers of [undefined, { 'if-match': '"1"' }]) {
          const res = await req('DELETE', p, b.apiKey, undefined, headers);
          expectDetail(res, 404);
          await t.expectEvents(res, []);
        }
      }
      // The victim's resources are untouched.
      expect((await req('GET', `/w/${a.workspaceId}/workflows/${aWorkflow.id}`, a.apiKey)).body.name).toBe(
        'Victim flow',
      );
      expect((await req('GET', `/w/${a.workspaceId}/assignments/${aAssignment}`, a.apiKey)).body.status).toBe(
        'active',
      );
    });

    it('are 400 naming the field in bodies (agentId, roleGate.roleIds, workflowId, memberId, assignees, calendarId, ownerMemberId, attendeeMemberIds)', async () => {
      const w = `/w/${b.workspaceId}`;
      const aRoles = await builtInRoles(t, a.workspaceId, a.apiKey);
      const bodies: [string, string, Record<string, unknown>, string][] = [
        ['POST', `${w}/workflows`, { name: 'X', agentId: aAgent }, 'agentId'],
        [
          'POST',
          `${w}/workflows`,
          { name: 'X', agentId: bAgent, roleGate: { roleIds: [aRoles.User] } },
          'roleGate.roleIds',
        ],
        ['POST', `${w}/assignments`, { workflowId: aWorkflow.id }, 'workflowId'],
        ['POST', `${w}/tasks`, { name: 'X', workflowId: aWorkflow.id }, 'workflowId'],
        ['POST', `${w}/tasks`, { name: 'X', assignees: [a.memberId] }, 'assignees'],
        ['POST', `${w}/calendars`, { name: 'X', ownerMemberId: a.memberId }, 'ownerMemberId'],
        [
          'POST',
          `${w}/calendar-events`,
          { title: 'X', startTime: '2026-01-01T09:00:00Z', calendarId: aCalendar },
          'calendarId',
        ],
        [
          'POST',
          `${w}/calendar-events`,
          { title: 'X', startTime: '2026-01-01T09:00:00Z', attendeeMemberIds: [a.memberId] },
          'attendeeMemberIds',
        ],
      ];
      for (const [method, path, body, field] of bodies) {
        const res = await req(method, path, b.apiKey, body);
        expectDetail(res, 400, field);
        await t.expectEvents(res, []);
      }
      const bFlow = await createWorkflow(t, b.workspaceId, b.apiKey, { name: 'Mine', agentId: bAgent });
      const res = await req('POST', `${w}/assignments`, b.apiKey, {
        workflowId: bFlow.id,
        memberId: a.memberId,
      });
      expectDetail(res, 400, 'memberId');
      const upd = await req('PUT', `${w}/workflows/${bFlow.id}`, b.apiKey, { agentId: aAgent });
      expectDetail(upd, 400, 'agentId');
      const gate = await req('PUT', `${w}/workflows/${bFlow.id}`, b.apiKey, {
        roleGate: { roleIds: [aRoles.Manager] },
      });
      expectDetail(gate, 400, 'roleGate.roleIds');
    });

    it('never show up in lists, filters or counts', async () => {
      const w = `/w/${b.workspaceId}`;
      for (const p of [
        `${w}/workflows?search=Victim`,
        `${w}/tasks?search=Victim`,
        `${w}/tasks?workflowId=${aWorkflow.id}`,
        `${w}/assignments?workflowId=${aWorkflow.id}`,
        `${w}/assignments?memberId=${a.memberId}`,
        `${w}/calendars?ownerMemberId=${a.memberId}`,
        `${w}/calendar-events?calendarId=${aCalendar}`,
        `${w}/calendar-events?search=Victim`,
      ]) {
        const res = await req('GET', p, b.apiKey);
        expect({ p, status: res.status, total: res.body.total, items: res.body.items }).toEqual({
          p,
          status: 200,
          total: 0,
          items: [],
        });
      }
      // The same slug is free in another workspace.
      expect((await req('POST', `${w}/tasks`, b.apiKey, { name: 'Mine', slug: 'victim' })).status).toBe(201);
    });
  });

  describe('narrow credentials', () => {
    it('a key holding only workflows:read reads workflows and nothing it lacks', async () => {
      const w = `/w/${a.workspaceId}`;
      const key = await keyWithScopes(t, a.apiKey, ['workflows:read']);
      expect((await req('GET', `${w}/workflows`, key)).status).toBe(200);
      expect((await req('GET', `${w}/workflows/${aWorkflow.id}`, key)).status).toBe(200);
      for (const [method, path, body] of [
        ['POST', `${w}/workflows`, { name: 'X', agentId: aAgent }],
        ['PUT', `${w}/workflows/${aWorkflow.id}`, { name: 'X' }],
        ['DELETE', `${w}/workflows/${aWorkflow.id}`, undefined],
        ['GET', `${w}/tasks`, undefined],
        ['GET', `${w}/tasks/${aTask}`, undefined],
        ['POST', `${w}/tasks`, { name: 'X' }],
        ['PUT', `${w}/tasks/${aTask}`, { name: 'X' }],
        ['PUT', `${w}/assignments/${aAssignment}`, { status: 'cancelled' }],
        ['POST', `${w}/calendar-events`, { title: 'X', startTime: '2026-01-01T09:00:00Z' }],
      ] as const) {
        const res = await req(method, path, key, body);
        expect({ method, path, status: res.status }).toEqual({ method, path, status: 403 });
        await t.expectEvents(res, []);
      }
      // The bootstrap account is the Manager whose member started aAssignment: the key sees its own.
      const mine = await req('GET', `${w}/assignments`, key);
      expect(mine.status).toBe(200);
      expect(mine.body.items.every((x: { memberId: number }) => x.memberId === a.memberId)).toBe(true);
    });

    it('a key holding only assignments:read lists tasks and assignments but changes nothing and sees no admin task', async () => {
      const w = `/w/${a.workspaceId}`;
      const admin = await req('POST', `${w}/tasks`, a.apiKey, {
        name: 'Salary review',
        isAdmin: true,
        slug: 'salary-review',
      });
      expect(admin.status).toBe(201);
      const key = await keyWithScopes(t, a.apiKey, ['assignments:read']);
      const list = await req('GET', `${w}/tasks?pageSize=1000`, key);
      expect(list.status).toBe(200);
      expect(list.body.items.map((x: { id: number }) => x.id)).not.toContain(admin.body.id);
      expect(list.body.total).toBe(list.body.items.length);
      expectDetail(await req('GET', `${w}/tasks/${admin.body.id}`, key), 404);
      for (const [method, path, body] of [
        ['POST', `${w}/tasks`, { name: 'X' }],
        ['PUT', `${w}/tasks/${aTask}`, { name: 'X' }],
        ['DELETE', `${w}/tasks/${aTask}`, undefined],
        ['PUT', `${w}/assignments/${aAssignment}`, { status: 'cancelled' }],
        ['POST', `${w}/workflows`, { name: 'X', agentId: aAgent }],
        ['GET', `${w}/workflows`, undefined],
      ] as const) {
        const res = await req(method, path, key, body);
        expect({ method, path, status: res.status }).toEqual({ method, path, status: 403 });
      }
      expect((await req('GET', `${w}/assignments/${aAssignment}`, key)).status).toBe(200);
    });

    it('a key holding only calendars:read reads calendars and events but writes none', async () => {
      const w = `/w/${a.workspaceId}`;
      const ann = await person(t, a.workspaceId, a.apiKey);
      const annCal = await req('POST', `${w}/calendars`, ann.token, { name: 'Ann' });
      expect(annCal.status).toBe(201);
      const annEvent = await req('POST', `${w}/calendar-events`, ann.token, {
        title: 'Ann meets',
        startTime: '2026-01-01T09:00:00Z',
        calendarId: annCal.body.id,
      });
      expect(annEvent.status).toBe(201);
      // The key's own member (the Manager) owns neither Ann's calendar nor its events.
      const key = await keyWithScopes(t, a.apiKey, ['calendars:read']);
      expect((await req('GET', `${w}/calendar-events/${annEvent.body.id}`, key)).status).toBe(200);
      expect((await req('GET', `${w}/calendars/${annCal.body.id}`, key)).status).toBe(200);
      expect((await req('GET', `${w}/calendar-events/${aEvent}`, key)).status).toBe(200);
      for (const [method, path, body] of [
        ['POST', `${w}/calendars`, { name: 'X', ownerMemberId: ann.memberId }],
        ['POST', `${w}/calendars`, { name: 'X', ownerMemberId: null }],
        [
          'POST',
          `${w}/calendar-events`,
          { title: 'X', startTime: '2026-01-01T09:00:00Z', calendarId: annCal.body.id },
        ],
        ['POST', `${w}/calendar-events`, { title: 'X', startTime: '2026-01-01T09:00:00Z' }],
        ['PUT', `${w}/calendar-events/${annEvent.body.id}`, { title: 'X' }],
        ['PUT', `${w}/calendar-events/${aEvent}`, { calendarId: annCal.body.id }],
        ['DELETE', `${w}/calendar-events/${annEvent.body.id}`, undefined],
      ] as const) {
        const res = await req(method, path, key, body);
        expect({ method, path, status: res.status }).toEqual({ method, path, status: 403 });
        await t.expectEvents(res, []);
      }
    });

    it('a key holding none of them, a plain User and an External member reach only their own', async () => {
      const w = `/w/${a.workspaceId}`;
      const roles = await builtInRoles(t, a.workspaceId, a.apiKey);
      const none = await keyWithScopes(t, a.apiKey, ['agents:read']);
      const user = await person(t, a.workspaceId, a.apiKey, roles.User);
      const ext = await person(t, a.workspaceId, a.apiKey, roles.External);
      const annsCal = await req('POST', `${w}/calendars`, a.apiKey, { name: 'Ops', ownerMemberId: null });
      const opsEvent = await req('POST', `${w}/calendar-events`, a.apiKey, {
        title: 'Ops',
        startTime: '2026-01-01T09:00:00Z',
        calendarId: annsCal.body.id,
      });
      const other = await person(t, a.workspaceId, a.apiKey);
      const othersRun = await req('POST', `${w}/assignments`, a.apiKey, {
        workflowId: aWorkflow.id,
        memberId: other.memberId,
      });
      expect(othersRun.status).toBe(201);
      for (const token of [none, user.token, ext.token]) {
        for (const path of [
          `${w}/workflows`,
          `${w}/tasks`,
          `${w}/tasks/${aTask}`,
          `${w}/workflows/${aWorkflow.id}`,
        ])
          expect({ path, status: (await req('GET', path, token)).status }).toEqual({ path, status: 403 });
        expectDetail(await req('GET', `${w}/assignments/${othersRun.body.id}`, token), 404);
        const runs = await req('GET', `${w}/assignments?memberId=${other.memberId}`, token);
        expect({ total: runs.body.total, items: runs.body.items }).toEqual({ total: 0, items: [] });
        expect((await req('GET', `${w}/calendar-events/${opsEvent.body.id}`, token)).status).toBe(403);
        const events = await req('GET', `${w}/calendar-events`, token);
        expect(events.body.items.map((e: { id: number }) => e.id)).not.toContain(opsEvent.body.id);
        const end = await req('PUT', `${w}/assignments/${othersRun.body.id}`, token, { status: 'cancelled' });
        expect(end.status).toBe(403);
        await t.expectEvents(end, []);
      }
      // Each may start an ungated workflow for itself, never for another member.
      for (const who of [user, ext]) {
        const own = await req('POST', `${w}/assignments`, who.token, { workflowId: aWorkflow.id });
        expect(own.status).toBe(201);
        expect(own.body.memberId).toBe(who.memberId);
        const other = await req('POST', `${w}/assignments`, who.token, {
          workflowId: aWorkflow.id,
          memberId: a.memberId,
        });
        expectDetail(other, 403, 'memberId');
        await t.expectEvents(other, []);
        // ... and neither ends its own assignment without assignments:write.
        expect(
          (await req('PUT', `${w}/assignments/${own.body.id}`, who.token, { status: 'completed' })).status,
        ).toBe(403);
        expect((await req('GET', `${w}/assignments/${own.body.id}`, who.token)).status).toBe(200);
      }
    });
  });

  describe('escalation', () => {
    it('assignments:write cannot start a gated workflow for a member whose role is not listed, with or without memberId', async () => {
      const w = `/w/${a.workspaceId}`;
      const roles = await builtInRoles(t, a.workspaceId, a.apiKey);
      const nurse = await customRole(t, a.workspaceId, a.apiKey, 'Nurse', ['assignments:write']);
      const gated = await createWorkflow(t, a.workspaceId, a.apiKey, {
        name: 'Gated',
        agentId: aAgent,
        roleGate: { roleIds: [roles.User, roles.User], message: 'Users only' },
      });
      // Member tokens hold no scope: the writer is a key of the Manager (not listed) with assignments:write.
      const writer = { token: await keyWithScopes(t, a.apiKey, ['assignments:write']), memberId: a.memberId };
      const nursey = await person(t, a.workspaceId, a.apiKey, nurse);
      const user = await person(t, a.workspaceId, a.apiKey, roles.User);
      const ext = await person(t, a.workspaceId, a.apiKey, roles.External);
      // The writer for its own member, implicitly and explicitly: the gate.
      for (const body of [{ workflowId: gated.id }, { workflowId: gated.id, memberId: writer.memberId }]) {
        const res = await req('POST', `${w}/assignments`, writer.token, body);
        expect({ status: res.status, body: res.body }).toEqual({
          status: 403,
          body: { detail: 'Users only' },
        });
        await t.expectEvents(res, []);
      }
      // For an External member, or the Manager: the gate, whoever asks.
      for (const memberId of [ext.memberId, nursey.memberId]) {
        for (const token of [writer.token, a.apiKey]) {
          const res = await req('POST', `${w}/assignments`, token, { workflowId: gated.id, memberId });
          expect({ status: res.status, body: res.body }).toEqual({
            status: 403,
            body: { detail: 'Users only' },
          });
        }
      }
      // For a listed member, the writer may.
      const ok = await req('POST', `${w}/assignments`, writer.token, {
        workflowId: gated.id,
        memberId: user.memberId,
      });
      expect(ok.status).toBe(201);
      expect((await req('GET', `${w}/workflows/${gated.id}`, a.apiKey)).body.roleGate).toEqual({
        roleIds: [roles.User],
        message: 'Users only',
      });
    });

    it('a non-admin cannot see, find, count, change or delete an isAdmin task by any route', async () => {
      const w = `/w/${a.workspaceId}`;
      const wf = await createWorkflow(t, a.workspaceId, a.apiKey, { name: 'Payroll', agentId: aAgent });
      const secret = await req('POST', `${w}/tasks`, a.apiKey, {
        name: 'Fire Bob',
        title: 'Confidential',
        isAdmin: true,
        workflowId: wf.id,
        priority: 'urgent',
        assignees: [a.memberId],
        slug: 'fire-bob',
      });
      expect(secret.status).toBe(201);
      const id = secret.body.id as number;
      const writer = await keyWithScopes(t, a.apiKey, ['assignments:write']);
      for (const q of [
        'search=Fire',
        'search=Confidential',
        `workflowId=${wf.id}`,
        'priority=urgent',
        `assignee=${a.memberId}`,
        'status=open&pageSize=1000',
      ]) {
        const res = await req('GET', `${w}/tasks?${q}`, writer);
        expect(res.status).toBe(200);
        expect(res.body.items.map((x: { id: number }) => x.id)).not.toContain(id);
        expect(res.body.total).toBe(res.body.items.length);
      }
      expectDetail(await req('GET', `${w}/tasks/${id}`, writer), 404);
      // Whatever If-Match says, a hidden task is as absent as a missing one: 404, nothing appended.
      for (const headers of [
        undefined,
        { 'if-match': '"1"' },
        { 'if-match': '"7"' },
        { 'if-match': '"1", "2"' },
      ]) {
        const res = await req('PUT', `${w}/tasks/${id}`, writer, { name: 'Keep Bob' }, headers);
        expect({ headers, status: res.status }).toEqual({ headers, status: 404 });
        await t.expectEvents(res, []);
      }
      expect((await req('DELETE', `${w}/tasks/${id}`, writer)).status).toBe(403);
      // Creating one, or a field that makes one, is not open to the writer either.
      expectDetail(await req('POST', `${w}/tasks`, writer, { name: 'Mine', isAdmin: true }), 403, 'isAdmin');
      expectDetail(await req('PUT', `${w}/tasks/${aTask}`, writer, { isAdmin: true }), 400, 'isAdmin');
      // A slug taken by a hidden task is 409 (uniqueness is the workspace's), naming no task.
      const clash = await req('POST', `${w}/tasks`, writer, { name: 'Mine', slug: 'fire-bob' });
      expectDetail(clash, 409, 'slug');
      expect(clash.body.detail).not.toContain(String(id));
      // Still as it was.
      expect((await req('GET', `${w}/tasks/${id}`, a.apiKey)).body).toMatchObject({
        name: 'Fire Bob',
        isAdmin: true,
      });
    });
  });

  describe('careless input', () => {
    it('refuses bad task bodies with 400 naming the field, appending nothing', async () => {
      const w = `/w/${a.workspaceId}`;
      const cases: [Record<string, unknown>, string][] = [
        [{ name: 'x'.repeat(201) }, 'name'],
        [{ name: '   ' }, 'name'],
        [{ name: null }, 'name'],
        [{}, 'name'],
        [{ name: 'X', description: 'd'.repeat(10_001) }, 'description'],
        [{ name: 'X', slug: 'Upper' }, 'slug'],
        [{ name: 'X', slug: '' }, 'slug'],
        [{ name: 'X', slug: 's'.repeat(101) }, 'slug'],
        [{ name: 'X', isAdmin: null }, 'isAdmin'],
        [{ name: 'X', isAdmin: 'true' }, 'isAdmin'],
        [{ name: 'X', priority: 'critical' }, 'priority'],
        [{ name: 'X', priority: null }, 'priority'],
        [{ name: 'X', workflowId: '1' }, 'workflowId'],
        [{ name: 'X', workflowId: 1.5 }, 'workflowId'],
        [{ name: 'X', workflowId: -1 }, 'workflowId'],
        [{ name: 'X', workflowId: 2 ** 31 }, 'workflowId'],
        [{ name: 'X', dueAt: '2026-12-01T09:00:00' }, 'dueAt'],
        [{ name: 'X', dueAt: '2026-02-30T09:00:00Z' }, 'dueAt'],
        [{ name: 'X', assignees: Array.from({ length: 10_000 }, (_, i) => i + 1) }, 'assignees'],
        [{ name: 'X', assignees: [0] }, 'assignees'],
        [{ name: 'X', assignees: null }, 'assignees'],
        [{ name: 'X', assignees: 'all' }, 'assignees'],
        [{ name: 'X', status: 'done' }, 'status'],
      ];
      for (const [body, field] of cases) {
        const res = await req('POST', `${w}/tasks`, a.apiKey, body);
        expect({ body: JSON.stringify(body).slice(0, 80), status: res.status }).toEqual({
          body: JSON.stringify(body).slice(0, 80),
          status: 400,
        });
        expect(res.body.detail).toContain(field);
        await t.expectEvents(res, []);
      }
      const puts: [Record<string, unknown>, string][] = [
        [{ status: 'closed' }, 'status'],
        [{ status: null }, 'status'],
        [{ name: '' }, 'name'],
        [{ priority: 'HIGH' }, 'priority'],
        [{ workflowId: aWorkflow.id }, 'workflowId'],
        [{ slug: 'new' }, 'slug'],
      ];
      for (const [body, field] of puts) {
        const res = await req('PUT', `${w}/tasks/${aTask}`, a.apiKey, body);
        expectDetail(res, 400, field);
        await t.expectEvents(res, []);
      }
    });

    it('keeps unicode, de-duplicates assignees, and tells null from missing', async () => {
      const w = `/w/${a.workspaceId}`;
      const ann = await person(t, a.workspaceId, a.apiKey);
      const res = await req('POST', `${w}/tasks`, a.apiKey, {
        name: 'Rückruf 📞 — 東京',
        slug: null,
        description: null,
        workflowId: null,
        dueAt: null,
        assignees: [ann.memberId, ann.memberId, a.memberId, ann.memberId],
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        name: 'Rückruf 📞 — 東京',
        title: 'Rückruf 📞 — 東京',
        slug: null,
        description: null,
        workflowId: null,
        dueAt: null,
        assignees: [ann.memberId, a.memberId],
      });
      const found = await req('GET', `${w}/tasks?search=${encodeURIComponent('📞 — 東')}`, a.apiKey);
      expect(found.body.items.map((x: { id: number }) => x.id)).toEqual([res.body.id]);
      // Missing changes nothing (no event); null clears.
      const same = await req('PUT', `${w}/tasks/${res.body.id}`, a.apiKey, {});
      expect(same.status).toBe(200);
      await t.expectEvents(same, []);
      const dup = await req('PUT', `${w}/tasks/${res.body.id}`, a.apiKey, {
        assignees: [ann.memberId, a.memberId, a.memberId],
      });
      expect(dup.status).toBe(200);
      await t.expectEvents(dup, []);
      const due = await req('PUT', `${w}/tasks/${res.body.id}`, a.apiKey, {
        dueAt: '2026-12-01T09:00:00-05:00',
      });
      expect(due.body.dueAt).toBe('2026-12-01T14:00:00.000Z');
      const cleared = await req('PUT', `${w}/tasks/${res.body.id}`, a.apiKey, { dueAt: null });
      expect(cleared.body.dueAt).toBeNull();
    });

    it('pages at the edges and treats path ids that name nothing as 404', async () => {
      const w = `/w/${a.workspaceId}`;
      for (const path of ['workflows', 'tasks', 'assignments', 'calendars', 'calendar-events']) {
        for (const q of ['page=0', 'pageSize=1001', 'page_size=0', 'page=-1', 'pageSize=abc', 'page=1.5']) {
          const res = await req('GET', `${w}/${path}?${q}`, a.apiKey);
          expect({ path, q, status: res.status }).toEqual({ path, q, status: 400 });
        }
        const all = await req('GET', `${w}/${path}?pageSize=1000`, a.apiKey);
        const beyond = await req('GET', `${w}/${path}?page=1000&page_size=1`, a.apiKey);
        expect(beyond.status).toBe(200);
        expect(beyond.body).toEqual({ items: [], total: all.body.total, page: 1000, pageSize: 1 });
        for (const id of ['0', '-1', 'abc', '1.0', '99999999999999999999', '2147483648'])
          expect({ path, id, status: (await req('GET', `${w}/${path}/${id}`, a.apiKey)).status }).toEqual({
            path,
            id,
            status: 404,
          });
      }
    });

    it('ends an assignment once, at a time not before its start whatever the offset is written as', async () => {
      const w = `/w/${a.workspaceId}`;
      const start = async () => {
        const res = await req('POST', `${w}/assignments`, a.apiKey, { workflowId: aWorkflow.id });
        expect(res.status).toBe(201);
        return res.body.id as number;
      };
      const id = await start();
      for (const [body, field] of [
        [{ status: 'completed', completedAt: '2020-01-01T00:00:00Z' }, 'completedAt'],
        // The same instant before the start, written with an hours-only offset and without a colon.
        [{ status: 'completed', completedAt: '2020-01-01T05:00:00+05' }, 'completedAt'],
        [{ status: 'completed', completedAt: '2020-01-01T05:00:00+0500' }, 'completedAt'],
        [{ status: 'failed', completedAt: '2020-01-01t00:00:00z' }, 'completedAt'],
        [{ status: 'completed', completedAt: '2026-12-01T09:00:00' }, 'completedAt'],
        [{ status: 'completed', completedAt: null }, 'completedAt'],
        [{ status: 'active', completedAt: '2099-01-01T00:00:00Z' }, 'completedAt'],
        [{ status: 'done' }, 'status'],
        [{ status: null }, 'status'],
        [{}, 'status'],
      ] as const) {
        const res = await req('PUT', `${w}/assignments/${id}`, a.apiKey, body);
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expect(res.body.detail).toContain(field);
        await t.expectEvents(res, []);
      }
      // An offset written any valid way is the same instant; the answer is in UTC.
      const later = await req('PUT', `${w}/assignments/${id}`, a.apiKey, {
        status: 'completed',
        completedAt: '2099-01-01T05:00:00+05',
      });
      expect(later.status).toBe(200);
      expect(later.body.completedAt).toBe('2099-01-01T00:00:00.000Z');
      const [ended] = await t.expectEvents(later, [{ type: 'AssignmentCompleted' }]);
      expect(new Date((ended.data as { completedAt: string }).completedAt).toISOString()).toBe(
        '2099-01-01T00:00:00.000Z',
      );
      // Reads and lists still answer (the projection took the event).
      expect((await req('GET', `${w}/assignments/${id}`, a.apiKey)).body.status).toBe('completed');
      const next = await start();
      expect((await req('GET', `${w}/assignments/${next}`, a.apiKey)).status).toBe(200);
      // Ended once: the same end again changes nothing, another end or active again is 409.
      const again = await req('PUT', `${w}/assignments/${id}`, a.apiKey, { status: 'completed' });
      expect(again.status).toBe(200);
      await t.expectEvents(again, []);
      for (const status of ['failed', 'cancelled', 'active'])
        expectDetail(await req('PUT', `${w}/assignments/${id}`, a.apiKey, { status }), 409, 'status');
    });

    it('refuses bad calendar event times and windows, naming the field', async () => {
      const w = `/w/${a.workspaceId}`;
      for (const [body, field] of [
        [{ title: 'X', startTime: '2026-01-01T09:00:00' }, 'startTime'],
        [{ title: 'X', startTime: '2026-01-01' }, 'startTime'],
        [{ title: 'X', startTime: '2026-01-01T09:00:00Z', endTime: '2026-01-01T09:00:00Z' }, 'endTime'],
        [{ title: 'X', startTime: '2026-01-01T09:00:00Z', endTime: '2026-01-01T10:00:00+02:00' }, 'endTime'],
        [{ title: 'X', startTime: '2026-01-01T09:00:00Z', endTime: null }, 'endTime'],
        [{ title: 'X', startTime: null }, 'startTime'],
        [{ title: 'X'.repeat(201), startTime: '2026-01-01T09:00:00Z' }, 'title'],
        [
          {
            title: 'X',
            startTime: '2026-01-01T09:00:00Z',
            attendeeMemberIds: Array.from({ length: 10_000 }, (_, i) => i + 1),
          },
          'attendeeMemberIds',
        ],
        [{ title: 'X', startTime: '2026-01-01T09:00:00Z', calendarId: -1 }, 'calendarId'],
      ] as const) {
        const res = await req('POST', `${w}/calendar-events`, a.apiKey, body);
        expect({ body: JSON.stringify(body).slice(0, 90), status: res.status }).toEqual({
          body: JSON.stringify(body).slice(0, 90),
          status: 400,
        });
        expect(res.body.detail).toContain(field);
        await t.expectEvents(res, []);
      }
      const ev = await req('POST', `${w}/calendar-events`, a.apiKey, {
        title: 'Slot',
        startTime: '2026-03-01T09:00:00Z',
        endTime: '2026-03-01T10:00:00Z',
      });
      expect(ev.status).toBe(201);
      // An end later only by nanoseconds is the same microsecond in the read model: not after.
      expectDetail(
        await req('POST', `${w}/calendar-events`, a.apiKey, {
          title: 'Blink',
          startTime: '2026-04-01T00:00:00.0000001Z',
          endTime: '2026-04-01T00:00:00.0000009Z',
        }),
        400,
        'endTime',
      );
      const tiny = await req('POST', `${w}/calendar-events`, a.apiKey, {
        title: 'Blink',
        startTime: '2026-04-01T00:00:00.0000001Z',
        endTime: '2026-04-01T00:00:00.0000019Z',
      });
      expect(tiny.status).toBe(201);
      const blink = await req(
        'GET',
        `${w}/calendar-events?search=Blink&startTime=2026-04-01T00:00:00Z&endTime=2026-04-02T00:00:00Z`,
        a.apiKey,
      );
      expect(blink.body.items.map((e: { id: number }) => e.id)).toEqual([tiny.body.id]);
      // A new end against the kept start, a new start against the kept end.
      expectDetail(
        await req('PUT', `${w}/calendar-events/${ev.body.id}`, a.apiKey, { endTime: '2026-03-01T08:00:00Z' }),
        400,
        'endTime',
      );
      expectDetail(
        await req('PUT', `${w}/calendar-events/${ev.body.id}`, a.apiKey, {
          startTime: '2026-03-01T11:00:00Z',
        }),
        400,
        'endTime',
      );
      for (const q of [
        'startTime=2026-03-01T10:00:00Z&endTime=2026-03-01T10:00:00Z',
        'startTime=2026-03-01T10:00:00Z&endTime=2026-03-01T09:00:00Z',
        'startTime=2026-03-01T10:00:00',
        'endTime=yesterday',
      ])
        expect({ q, status: (await req('GET', `${w}/calendar-events?${q}`, a.apiKey)).status }).toEqual({
          q,
          status: 400,
        });
    });
  });

  describe('offsets beyond what PostgreSQL reads', () => {
    it('are 400 naming the field in bodies and list filters, and never stop a projection', async () => {
      const w = `/w/${a.workspaceId}`;
      const ann = await person(t, a.workspaceId, a.apiKey);
      const annCal = await req('POST', `${w}/calendars`, ann.token, { name: 'Ann' });
      // A member with no scope at all, on its own calendar.
      for (const startTime of [
        '2026-01-01T00:00:00+16:00',
        '0001-01-01T00:00:00+23:59',
        '2026-01-01T09:00:00-20',
      ]) {
        const res = await req('POST', `${w}/calendar-events`, ann.token, {
          title: 'Far east',
          startTime,
          calendarId: annCal.body.id,
        });
        expectDetail(res, 400, 'startTime');
        await t.expectEvents(res, []);
      }
      const ev = await req('POST', `${w}/calendar-events`, ann.token, {
        title: 'Near',
        startTime: '2026-01-01T09:00:00+15:59',
        calendarId: annCal.body.id,
      });
      expect(ev.status).toBe(201);
      expect(ev.body.startTime).toBe('2025-12-31T17:01:00.000Z');
      expectDetail(
        await req('PUT', `${w}/calendar-events/${ev.body.id}`, ann.token, {
          endTime: '2026-01-02T00:00:00+18:00',
        }),
        400,
        'endTime',
      );
      const run = await req('POST', `${w}/assignments`, a.apiKey, { workflowId: aWorkflow.id });
      expectDetail(
        await req('PUT', `${w}/assignments/${run.body.id}`, a.apiKey, {
          status: 'completed',
          completedAt: '2099-01-01T00:00:00+23:00',
        }),
        400,
        'completedAt',
      );
      expectDetail(
        await req('POST', `${w}/tasks`, a.apiKey, { name: 'X', dueAt: '2026-01-01T00:00:00-16:00' }),
        400,
        'dueAt',
      );
      for (const path of ['workflows', 'tasks', 'assignments', 'calendars', 'calendar-events', 'members'])
        for (const q of ['startTime=2026-01-01T00:00:00%2B20:00', 'endTime=2026-01-01T00:00:00-16:00'])
          expectDetail(await req('GET', `${w}/${path}?${q}`, a.apiKey), 400, q.split('=')[0]);
      // The read models still follow: a write after all that is read back at once.
      const later = await req('POST', `${w}/calendar-events`, ann.token, {
        title: 'After',
        startTime: '2026-01-01T10:00:00Z',
        calendarId: annCal.body.id,
      });
      expect(later.status).toBe(201);
      expect(
        (await req('PUT', `${w}/assignments/${run.body.id}`, a.apiKey, { status: 'completed' })).body.status,
      ).toBe('completed');
    });
  });

  describe('round trips of a careless client', () => {
    it('sends back a task with an assignee archived since, or a workflow whose gate role was deleted since', async () => {
      const w = `/w/${a.workspaceId}`;
      const ann = await person(t, a.workspaceId, a.apiKey);
      const bob = await person(t, a.workspaceId, a.apiKey);
      const task = await req('POST', `${w}/tasks`, a.apiKey, {
        name: 'Round trip',
        assignees: [ann.memberId, a.memberId],
      });
      expect((await req('DELETE', `${w}/members/${ann.memberId}`, a.apiKey)).status).toBe(200);
      const read = await req('GET', `${w}/tasks/${task.body.id}`, a.apiKey);
      const {
        id: _i,
        createdAt: _c,
        updatedAt: _u,
        slug: _s,
        workflowId: _w,
        isAdmin: _a,
        ...editable
      } = read.body;
      void [_i, _c, _u, _s, _w, _a];
      const put = await req('PUT', `${w}/tasks/${task.body.id}`, a.apiKey, { ...editable, status: 'done' });
      expect({ status: put.status, assignees: put.body.assignees }).toEqual({
        status: 200,
        assignees: [ann.memberId, a.memberId],
      });
      // Once dropped, an archived member is not assigned anew.
      expect(
        (await req('PUT', `${w}/tasks/${task.body.id}`, a.apiKey, { assignees: [a.memberId] })).status,
      ).toBe(200);
      const reassign = await req('PUT', `${w}/tasks/${task.body.id}`, a.apiKey, {
        assignees: [ann.memberId, bob.memberId],
      });
      expectDetail(reassign, 400, 'assignees');

      const temp = await customRole(t, a.workspaceId, a.apiKey, 'Temp');
      const wf = await createWorkflow(t, a.workspaceId, a.apiKey, {
        name: 'Temp only',
        agentId: aAgent,
        roleGate: { roleIds: [temp] },
      });
      expect((await req('DELETE', `${w}/member-roles/${temp}`, a.apiKey)).status).toBe(204);
      const got = await req('GET', `${w}/workflows/${wf.id}`, a.apiKey);
      const renamed = await req('PUT', `${w}/workflows/${wf.id}`, a.apiKey, {
        name: 'Renamed',
        agentId: got.body.agentId,
        roleGate: got.body.roleGate,
      });
      expect({ status: renamed.status, name: renamed.body.name }).toEqual({ status: 200, name: 'Renamed' });
      const other = await customRole(t, a.workspaceId, a.apiKey, 'Other');
      expect((await req('DELETE', `${w}/member-roles/${other}`, a.apiKey)).status).toBe(204);
      expectDetail(
        await req('PUT', `${w}/workflows/${wf.id}`, a.apiKey, { roleGate: { roleIds: [temp, other] } }),
        400,
        `roleGate.roleIds: ${other} is not`,
      );
    });
  });

  describe('races', () => {
    it('20 parallel creates of one slug make one task; the others are 409 and append nothing', async () => {
      const w = `/w/${a.workspaceId}`;
      const racing = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          req('POST', `${w}/tasks`, a.apiKey, { name: `Racer ${i}`, slug: 'photo-finish' }),
        ),
      );
      expect(racing.filter((r) => r.status === 201)).toHaveLength(1);
      expect(racing.filter((r) => r.status === 409)).toHaveLength(19);
      for (const r of racing.filter((x) => x.status === 409)) await t.expectEvents(r, []);
      const listed = await req('GET', `${w}/tasks?search=Racer&pageSize=1000`, a.apiKey);
      expect(listed.body.total).toBe(1);
    });

    it('parallel PUTs pinned to one version: one wins, the others are 412 and append nothing', async () => {
      const w = `/w/${a.workspaceId}`;
      const task = await req('POST', `${w}/tasks`, a.apiKey, { name: 'Contended' });
      const wf = await createWorkflow(t, a.workspaceId, a.apiKey, { name: 'Contended', agentId: aAgent });
      const ev = await req('POST', `${w}/calendar-events`, a.apiKey, {
        title: 'Contended',
        startTime: '2026-05-01T09:00:00Z',
      });
      for (const [path, field] of [
        [`${w}/tasks/${task.body.id}`, 'name'],
        [`${w}/workflows/${wf.id}`, 'name'],
        [`${w}/calendar-events/${ev.body.id}`, 'title'],
      ] as const) {
        const etag = (await req('GET', path, a.apiKey)).headers.get('etag')!;
        const racing = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            req('PUT', path, a.apiKey, { [field]: `Writer ${i}` }, { 'if-match': etag }),
          ),
        );
        const won = racing.filter((r) => r.status === 200);
        expect({ path, statuses: racing.map((r) => r.status).sort() }).toEqual({
          path,
          statuses: [200, ...Array(9).fill(412)],
        });
        for (const r of racing.filter((x) => x.status === 412)) await t.expectEvents(r, []);
        const now = await req('GET', path, a.apiKey);
        expect(now.body[field]).toBe(won[0].body[field]);
        expect(Number(JSON.parse(now.headers.get('etag')!))).toBe(Number(JSON.parse(etag)) + 1);
      }
    });

    it('complete against cancel: one end wins, the other is 409, and one end event is stored', async () => {
      const w = `/w/${a.workspaceId}`;
      for (let round = 0; round < 5; round++) {
        const run = await req('POST', `${w}/assignments`, a.apiKey, { workflowId: aWorkflow.id });
        const [done, cancelled] = await Promise.all([
          req('PUT', `${w}/assignments/${run.body.id}`, a.apiKey, { status: 'completed' }),
          req('PUT', `${w}/assignments/${run.body.id}`, a.apiKey, { status: 'cancelled' }),
        ]);
        expect([done.status, cancelled.status].sort()).toEqual([200, 409]);
        const winner = done.status === 200 ? 'completed' : 'cancelled';
        const stream = await t.store.readStream(`assignment-${run.body.id}`);
        expect(stream.map((e) => e.type)).toEqual([
          'AssignmentStarted',
          winner === 'completed' ? 'AssignmentCompleted' : 'AssignmentCancelled',
        ]);
        expect((await req('GET', `${w}/assignments/${run.body.id}`, a.apiKey)).body.status).toBe(winner);
      }
    });
  });

  describe('events and reads', () => {
    it('task.created / task.updated and workflow.completed / workflow.failed payloads are built from the events alone', async () => {
      const w = `/w/${a.workspaceId}`;
      const { PublicEventCatalogue } = await import('../../src/core/events/public-events');
      const catalogue = t.app.get(PublicEventCatalogue);
      const created = await req('POST', `${w}/tasks`, a.apiKey, {
        name: 'Webhook me',
        workflowId: aWorkflow.id,
        dueAt: '2026-12-01T09:00:00+01:00',
      });
      const [taskCreated] = await t.expectEvents(created, [{ type: 'TaskCreated' }]);
      const [def] = catalogue.fromSource('TaskCreated');
      const payload = def.payload(taskCreated as never) as { task: Record<string, unknown> };
      const { ETag: _e, ...body } = created.body;
      void _e;
      expect(payload).toEqual({ task: body });
      expect(Object.keys(payload.task)).not.toContain('workspaceId');
      const updated = await req('PUT', `${w}/tasks/${created.body.id}`, a.apiKey, { status: 'done' });
      const [taskUpdated] = await t.expectEvents(updated, [{ type: 'TaskUpdated' }]);
      expect(catalogue.fromSource('TaskUpdated')[0].payload(taskUpdated as never)).toEqual({
        task: updated.body,
      });

      for (const [status, type, name] of [
        ['completed', 'AssignmentCompleted', 'workflow.completed'],
        ['failed', 'AssignmentFailed', 'workflow.failed'],
      ] as const) {
        const run = await req('POST', `${w}/assignments`, a.apiKey, { workflowId: aWorkflow.id });
        const end = await req('PUT', `${w}/assignments/${run.body.id}`, a.apiKey, {
          status,
          completedAt: '2099-06-01T12:00:00+02:00',
        });
        expect(end.status).toBe(200);
        const [ev] = await t.expectEvents(end, [{ type }]);
        const [d] = catalogue.fromSource(type);
        expect(d.name).toBe(name);
        const { createdAt: _c, updatedAt: _u, ...assignment } = end.body;
        void _c;
        void _u;
        expect(d.payload(ev as never)).toEqual({
          assignment: { ...assignment, completedAt: '2099-06-01T10:00:00.000Z' },
          workflow: { id: aWorkflow.id, uuid: aWorkflow.uuid, name: 'Victim flow' },
        });
      }
      expect(catalogue.fromSource('AssignmentCancelled')).toEqual([]);
      expect(catalogue.fromSource('TaskDeleted')).toEqual([]);
    });

    it('reads its writes: a create is in the very next GET and list', async () => {
      const w = `/w/${a.workspaceId}`;
      for (let i = 0; i < 5; i++) {
        const task = await req('POST', `${w}/tasks`, a.apiKey, { name: `Fresh ${i}` });
        expect((await req('GET', `${w}/tasks/${task.body.id}`, a.apiKey)).status).toBe(200);
        const listed = await req('GET', `${w}/tasks?search=Fresh ${i}`, a.apiKey);
        expect(listed.body.items.map((x: { id: number }) => x.id)).toEqual([task.body.id]);
        const ev = await req('POST', `${w}/calendar-events`, a.apiKey, {
          title: `Fresh ${i}`,
          startTime: '2026-07-01T09:00:00Z',
        });
        const window = await req(
          'GET',
          `${w}/calendar-events?search=Fresh ${i}&startTime=2026-07-01T09:00:00Z&endTime=2026-07-01T09:00:01Z`,
          a.apiKey,
        );
        expect(window.body.items.map((x: { id: number }) => x.id)).toEqual([ev.body.id]);
      }
    });
  });
});
