import { startTestApp, TestApp } from '../support/app';
import { builtInRoles, customRole, keyWithScopes } from '../support/identity-fixtures';
import { agentMember, createWorkflow, person } from '../support/work-fixtures';

describe('workflows, role gates and assignments (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  describe('workflows', () => {
    it('creates a workflow with an integer id and a uuid, reads, lists, updates and deletes it', async () => {
      const a = await t.bootstrap();
      const agentId = await agentMember(t, a.workspaceId, a.apiKey);
      const coordinators = await customRole(t, a.workspaceId, a.apiKey, 'Coordinators', ['assignments:read']);
      const res = await t.request('POST', `/w/${a.workspaceId}/workflows`, {
        token: a.apiKey,
        body: {
          name: 'Intake',
          agentId,
          defaultPhoneNumberId: 12,
          roleGate: { roleIds: [coordinators], message: 'Only coordinators run intake' },
        },
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(Number),
        uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: 'Intake',
        agentId,
        defaultPhoneNumberId: 12,
        roleGate: { roleIds: [coordinators], message: 'Only coordinators run intake' },
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const id = res.body.id as number;
      expect(res.headers.get('location')).toBe(`/api/v2/w/${a.workspaceId}/workflows/${id}`);
      expect(res.headers.get('etag')).toBe('"1"');
      await t.expectEvents(res, [
        {
          type: 'WorkflowCreated',
          stream: `workflow-${id}`,
          data: { workflowId: id, uuid: res.body.uuid, name: 'Intake', agentId, defaultPhoneNumberId: 12 },
        },
      ]);

      const got = await t.request('GET', `/w/${a.workspaceId}/workflows/${id}`, { token: a.apiKey });
      expect(got.status).toBe(200);
      expect(got.body).toEqual(res.body);
      const list = await t.request('GET', `/w/${a.workspaceId}/workflows?search=intak`, { token: a.apiKey });
      expect(list.body).toMatchObject({ total: 1, page: 1, pageSize: 50, items: [{ id, name: 'Intake' }] });
      expect(
        (await t.request('GET', `/w/${a.workspaceId}/workflows?search=nothing`, { token: a.apiKey })).body
          .total,
      ).toBe(0);

      // A stale If-Match is 412 and writes nothing; the current one applies.
      const stale = await t.request('PUT', `/w/${a.workspaceId}/workflows/${id}`, {
        token: a.apiKey,
        headers: { 'if-match': '"7"' },
        body: { name: 'Never' },
      });
      expect(stale.status).toBe(412);
      await t.expectEvents(stale, []);
      const put = await t.request('PUT', `/w/${a.workspaceId}/workflows/${id}`, {
        token: a.apiKey,
        headers: { 'if-match': '"1"' },
        body: { name: 'Intake v2', roleGate: null, defaultPhoneNumberId: null },
      });
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({ name: 'Intake v2', roleGate: null, defaultPhoneNumberId: null });
      expect(put.headers.get('etag')).toBe('"2"');
      await t.expectEvents(put, [
        {
          type: 'WorkflowUpdated',
          data: { changes: { name: 'Intake v2', roleGate: null, defaultPhoneNumberId: null } },
        },
      ]);
      const same = await t.request('PUT', `/w/${a.workspaceId}/workflows/${id}`, {
        token: a.apiKey,
        body: { name: 'Intake v2' },
      });
      expect(same.status).toBe(200);
      await t.expectEvents(same, []);

      const del = await t.request('DELETE', `/w/${a.workspaceId}/workflows/${id}`, { token: a.apiKey });
      expect(del.status).toBe(204);
      await t.expectEvents(del, [{ type: 'WorkflowDeleted', stream: `workflow-${id}` }]);
      expect(
        (await t.request('GET', `/w/${a.workspaceId}/workflows/${id}`, { token: a.apiKey })).status,
      ).toBe(404);
    });

    it('refuses an agentId that is not an agent member, and gate roles of another workspace, naming the field', async () => {
      const a = await t.bootstrap();
      const b = await t.bootstrap();
      const agentId = await agentMember(t, a.workspaceId, a.apiKey);
      const otherAgent = await agentMember(t, b.workspaceId, b.apiKey);
      const otherRole = await customRole(t, b.workspaceId, b.apiKey, 'Theirs');
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ name: 'W', agentId: a.memberId }, /^agentId: member \d+ is a person, not an agent member$/],
        [
          { name: 'W', agentId: otherAgent },
          /^agentId: member \d+ is not an active member of this workspace$/,
        ],
        [
          { name: 'W', agentId, roleGate: { roleIds: [otherRole], message: 'x' } },
          /^roleGate\.roleIds: \d+ is not a role of this workspace$/,
        ],
        [{ name: 'W', agentId, roleGate: { roleIds: [] } }, /^roleGate\.roleIds:/],
        [{ name: 'W', agentId, defaultPhoneNumberId: 0 }, /^defaultPhoneNumberId:/],
        [{ name: 'W', agentId, color: 'red' }, /^color: unknown field$/],
        [{ agentId }, /^name:/],
      ];
      for (const [body, detail] of cases) {
        const res = await t.request('POST', `/w/${a.workspaceId}/workflows`, { token: a.apiKey, body });
        expect({ body, status: res.status }).toEqual({ body, status: 400 });
        expect(res.body.detail).toMatch(detail);
        await t.expectEvents(res, []);
      }
      const wf = await createWorkflow(t, a.workspaceId, a.apiKey, { name: 'W', agentId });
      const put = await t.request('PUT', `/w/${a.workspaceId}/workflows/${wf.id}`, {
        token: a.apiKey,
        body: { agentId: a.memberId },
      });
      expect(put.status).toBe(400);
      expect(put.body.detail).toMatch(/^agentId:/);
    });

    it('needs workflows:read to read, workflows:write to create and change, workflows:admin to delete', async () => {
      const a = await t.bootstrap();
      const agentId = await agentMember(t, a.workspaceId, a.apiKey);
      const wf = await createWorkflow(t, a.workspaceId, a.apiKey, { name: 'W', agentId });
      const none = await keyWithScopes(t, a.apiKey, ['members:read']);
      const reader = await keyWithScopes(t, a.apiKey, ['workflows:read']);
      const writer = await keyWithScopes(t, a.apiKey, ['workflows:write']);
      const base = `/w/${a.workspaceId}/workflows`;
      const list = await t.request('GET', base, { token: none });
      expect(list.status).toBe(403);
      expect(list.body.detail).toMatch(/workflows:read/);
      expect((await t.request('GET', base, { token: reader })).status).toBe(200);
      expect((await t.request('POST', base, { token: reader, body: { name: 'X', agentId } })).status).toBe(
        403,
      );
      expect(
        (await t.request('PUT', `${base}/${wf.id}`, { token: reader, body: { name: 'X' } })).status,
      ).toBe(403);
      expect((await t.request('POST', base, { token: writer, body: { name: 'X', agentId } })).status).toBe(
        201,
      );
      const del = await t.request('DELETE', `${base}/${wf.id}`, { token: writer });
      expect(del.status).toBe(403);
      expect(del.body.detail).toMatch(/workflows:admin/);
      await t.expectEvents(del, []);
    });
  });

  describe('Member Role Gate', () => {
    it("starts a gated workflow for a listed role, refuses others with the gate's message, and lets anyone start an ungated one", async () => {
      const a = await t.bootstrap();
      const roles = await builtInRoles(t, a.workspaceId, a.apiKey);
      const agentId = await agentMember(t, a.workspaceId, a.apiKey);
      const coordinators = await customRole(t, a.workspaceId, a.apiKey, 'Coordinators');
      const gated = await createWorkflow(t, a.workspaceId, a.apiKey, {
        name: 'Gated',
        agentId,
        roleGate: { roleIds: [coordinators], message: 'Ask a coordinator to start intake' },
      });
      const open = await createWorkflow(t, a.workspaceId, a.apiKey, { name: 'Open', agentId });
      const coordinator = await person(t, a.workspaceId, a.apiKey, coordinators);
      const user = await person(t, a.workspaceId, a.apiKey, roles.User);

      // Allowed: the coordinator starts it for itself (self-access, no assignments scope).
      const allowed = await t.request('POST', `/w/${a.workspaceId}/assignments`, {
        token: coordinator.token,
        body: { workflowId: gated.id },
      });
      expect(allowed.status).toBe(201);
      expect(allowed.body).toMatchObject({
        workflowId: gated.id,
        workflowUuid: gated.uuid,
        memberId: coordinator.memberId,
        status: 'active',
      });

      // Refused with the gate's message, nothing appended; for oneself and when a Manager starts it for that member.
      for (const [token, memberId] of [
        [user.token, undefined],
        [a.apiKey, user.memberId],
      ] as const) {
        const refused = await t.request('POST', `/w/${a.workspaceId}/assignments`, {
          token,
          body: memberId === undefined ? { workflowId: gated.id } : { workflowId: gated.id, memberId },
        });
        expect(refused.status).toBe(403);
        expect(refused.body).toEqual({ detail: 'Ask a coordinator to start intake' });
        await t.expectEvents(refused, []);
      }

      // No gate: any member.
      const anyone = await t.request('POST', `/w/${a.workspaceId}/assignments`, {
        token: user.token,
        body: { workflowId: open.id },
      });
      expect(anyone.status).toBe(201);
      expect(anyone.body.memberId).toBe(user.memberId);

      // Lifting the gate lets the user in.
      await t.request('PUT', `/w/${a.workspaceId}/workflows/${gated.id}`, {
        token: a.apiKey,
        body: { roleGate: null },
      });
      expect(
        (
          await t.request('POST', `/w/${a.workspaceId}/assignments`, {
            token: user.token,
            body: { workflowId: gated.id },
          })
        ).status,
      ).toBe(201);
    });

    it('follows a gate role merged into a built-in role', async () => {
      const a = await t.bootstrap();
      const roles = await builtInRoles(t, a.workspaceId, a.apiKey);
      const agentId = await agentMember(t, a.workspaceId, a.apiKey);
      const dup = await customRole(t, a.workspaceId, a.apiKey, 'Users (old)');
      const gated = await createWorkflow(t, a.workspaceId, a.apiKey, {
        name: 'G',
        agentId,
        roleGate: { roleIds: [dup] },
      });
      const member = await person(t, a.workspaceId, a.apiKey, dup);
      const merge = await t.request('POST', `/w/${a.workspaceId}/member-roles/${dup}/merge`, {
        token: a.apiKey,
        body: { targetRoleId: roles.User },
      });
      expect(merge.status).toBe(200);
      const res = await t.request('POST', `/w/${a.workspaceId}/assignments`, {
        token: member.token,
        body: { workflowId: gated.id },
      });
      expect(res.status).toBe(201);
    });
  });

  describe('assignments', () => {
    it('runs the lifecycle active → completed with its events, and refuses to end it twice', async () => {
      const a = await t.bootstrap();
      const agentId = await agentMember(t, a.workspaceId, a.apiKey);
      const wf = await createWorkflow(t, a.workspaceId, a.apiKey, { name: 'Follow-up', agentId });
      const member = await person(t, a.workspaceId, a.apiKey);
      const start = await t.request('POST', `/w/${a.workspaceId}/assignments`, {
        token: a.apiKey,
        body: { workflowId: wf.id, memberId: member.memberId },
      });
      expect(start.status).toBe(201);
      const id = start.body.id as number;
      expect(start.headers.get('location')).toBe(`/api/v2/w/${a.workspaceId}/assignments/${id}`);
      expect(start.body).toEqual({
        id,
        workflowId: wf.id,
        workflowUuid: wf.uuid,
        memberId: member.memberId,
        status: 'active',
        startedAt: expect.any(String),
        completedAt: null,
        createdAt: start.body.startedAt,
        updatedAt: start.body.startedAt,
      });
      await t.expectEvents(start, [
        {
          type: 'AssignmentStarted',
          stream: `assignment-${id}`,
          data: {
            assignmentId: id,
            assignment: {
              workflowId: wf.id,
              workflowUuid: wf.uuid,
              memberId: member.memberId,
              status: 'active',
            },
          },
        },
      ]);

      const completedAt = new Date(Date.now() + 1000).toISOString();
      const done = await t.request('PUT', `/w/${a.workspaceId}/assignments/${id}`, {
        token: a.apiKey,
        headers: { 'if-match': '"1"' },
        body: { status: 'completed', completedAt },
      });
      expect(done.status).toBe(200);
      expect(done.body).toMatchObject({ status: 'completed', completedAt });
      expect(done.headers.get('etag')).toBe('"2"');
      await t.expectEvents(done, [
        {
          type: 'AssignmentCompleted',
          stream: `assignment-${id}`,
          data: { completedAt, assignment: { status: 'completed', completedAt } },
        },
      ]);
      const again = await t.request('PUT', `/w/${a.workspaceId}/assignments/${id}`, {
        token: a.apiKey,
        body: { status: 'completed' },
      });
      expect(again.status).toBe(200);
      await t.expectEvents(again, []);
      const fail = await t.request('PUT', `/w/${a.workspaceId}/assignments/${id}`, {
        token: a.apiKey,
        body: { status: 'failed' },
      });
      expect(fail.status).toBe(409);
      expect(fail.body.detail).toBe('status: the assignment has already ended (completed)');
      await t.expectEvents(fail, []);
    });

    it('records failed and cancelled assignments with their events', async () => {
      const a = await t.bootstrap();
      const agentId = await agentMember(t, a.workspaceId, a.apiKey);
      const wf = await createWorkflow(t, a.workspaceId, a.apiKey, { name: 'W', agentId });
      for (const [status, type] of [
        ['failed', 'AssignmentFailed'],
        ['cancelled', 'AssignmentCancelled'],
      ] as const) {
        const start = await t.request('POST', `/w/${a.workspaceId}/assignments`, {
          token: a.apiKey,
          body: { workflowId: wf.id },
        });
        expect(start.body.memberId).toBe(a.memberId);
        const res = await t.request('PUT', `/w/${a.workspaceId}/assignments/${start.body.id}`, {
          token: a.apiKey,
          body: { status },
        });
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ status, completedAt: expect.any(String) });
        await t.expectEvents(res, [{ type, data: { assignment: { status } } }]);
      }
      const bad = await t.request('PUT', `/w/${a.workspaceId}/assignments/1`, {
        token: a.apiKey,
        body: { status: 'paused' },
      });
      expect(bad.status).toBe(400);
      expect(bad.body.detail).toMatch(
        /^status: must be one of the following values: active, completed, failed, cancelled/,
      );
    });

    it('lists with memberId, workflowId and status filters; External members and callers without assignments:read see only their own', async () => {
      const a = await t.bootstrap();
      const roles = await builtInRoles(t, a.workspaceId, a.apiKey);
      const agentId = await agentMember(t, a.workspaceId, a.apiKey);
      const w1 = await createWorkflow(t, a.workspaceId, a.apiKey, { name: 'One', agentId });
      const w2 = await createWorkflow(t, a.workspaceId, a.apiKey, { name: 'Two', agentId });
      const ext = await person(t, a.workspaceId, a.apiKey, roles.External);
      const other = await person(t, a.workspaceId, a.apiKey);
      const start = async (workflowId: number, memberId: number) =>
        (
          await t.request('POST', `/w/${a.workspaceId}/assignments`, {
            token: a.apiKey,
            body: { workflowId, memberId },
          })
        ).body.id as number;
      const e1 = await start(w1.id, ext.memberId);
      const e2 = await start(w2.id, ext.memberId);
      const o1 = await start(w1.id, other.memberId);
      await t.request('PUT', `/w/${a.workspaceId}/assignments/${e2}`, {
        token: a.apiKey,
        body: { status: 'completed' },
      });

      const ids = async (query: string, token = a.apiKey) => {
        const res = await t.request('GET', `/w/${a.workspaceId}/assignments${query}`, { token });
        expect(res.status).toBe(200);
        return (res.body.items as { id: number }[]).map((i) => i.id);
      };
      expect(await ids('')).toEqual([e1, e2, o1]);
      expect(await ids(`?memberId=${ext.memberId}`)).toEqual([e1, e2]);
      expect(await ids(`?workflowId=${w1.id}`)).toEqual([e1, o1]);
      expect(await ids('?status=completed')).toEqual([e2]);
      expect(await ids('?search=two')).toEqual([e2]);
      expect(
        (await t.request('GET', `/w/${a.workspaceId}/assignments?status=done`, { token: a.apiKey })).status,
      ).toBe(400);

      // The External member: its own only, other's assignment is a 404, never the list of others.
      expect(await ids('', ext.token)).toEqual([e1, e2]);
      expect(await ids(`?memberId=${other.memberId}`, ext.token)).toEqual([]);
      expect(
        (await t.request('GET', `/w/${a.workspaceId}/assignments/${e1}`, { token: ext.token })).status,
      ).toBe(200);
      expect(
        (await t.request('GET', `/w/${a.workspaceId}/assignments/${o1}`, { token: ext.token })).status,
      ).toBe(404);
      // ...nor may it start one for someone else, nor change one.
      const forOther = await t.request('POST', `/w/${a.workspaceId}/assignments`, {
        token: ext.token,
        body: { workflowId: w1.id, memberId: other.memberId },
      });
      expect(forOther.status).toBe(403);
      expect(forOther.body.detail).toMatch(/^memberId: .*assignments:write$/);
      expect(
        (
          await t.request('PUT', `/w/${a.workspaceId}/assignments/${e1}`, {
            token: ext.token,
            body: { status: 'completed' },
          })
        ).status,
      ).toBe(403);

      // A key with assignments:read sees all; one without it only its member's own.
      const reader = await keyWithScopes(t, a.apiKey, ['assignments:read']);
      expect(await ids('', reader)).toEqual([e1, e2, o1]);
      const noScope = await keyWithScopes(t, a.apiKey, ['members:read']);
      expect(await ids('', noScope)).toEqual([]);
      expect(
        (
          await t.request('PUT', `/w/${a.workspaceId}/assignments/${e1}`, {
            token: reader,
            body: { status: 'completed' },
          })
        ).status,
      ).toBe(403);
    });

    it('refuses a workflow or member that does not exist in the workspace, naming the field', async () => {
      const a = await t.bootstrap();
      const b = await t.bootstrap();
      const agentB = await agentMember(t, b.workspaceId, b.apiKey);
      const wfB = await createWorkflow(t, b.workspaceId, b.apiKey, { name: 'Theirs', agentId: agentB });
      const agentA = await agentMember(t, a.workspaceId, a.apiKey);
      const wfA = await createWorkflow(t, a.workspaceId, a.apiKey, { name: 'Ours', agentId: agentA });
      const foreignWorkflow = await t.request('POST', `/w/${a.workspaceId}/assignments`, {
        token: a.apiKey,
        body: { workflowId: wfB.id },
      });
      expect(foreignWorkflow.status).toBe(400);
      expect(foreignWorkflow.body.detail).toBe(
        `workflowId: workflow ${wfB.id} does not exist in this workspace`,
      );
      const foreignMember = await t.request('POST', `/w/${a.workspaceId}/assignments`, {
        token: a.apiKey,
        body: { workflowId: wfA.id, memberId: b.memberId },
      });
      expect(foreignMember.status).toBe(400);
      expect(foreignMember.body.detail).toMatch(/^memberId:/);
      await t.expectEvents(foreignMember, []);
    });
  });

  describe('tenant isolation', () => {
    it("answers 404 for another workspace's workflows and assignments, and never lists them", async () => {
      const a = await t.bootstrap();
      const b = await t.bootstrap();
      const agentB = await agentMember(t, b.workspaceId, b.apiKey);
      const wfB = await createWorkflow(t, b.workspaceId, b.apiKey, { name: 'Secret', agentId: agentB });
      const asg = await t.request('POST', `/w/${b.workspaceId}/assignments`, {
        token: b.apiKey,
        body: { workflowId: wfB.id },
      });
      expect(asg.status).toBe(201);
      // B's resources through A's workspace path, with A's key.
      for (const [method, path, body] of [
        ['GET', `/w/${a.workspaceId}/workflows/${wfB.id}`, undefined],
        ['PUT', `/w/${a.workspaceId}/workflows/${wfB.id}`, { name: 'Mine' }],
        ['DELETE', `/w/${a.workspaceId}/workflows/${wfB.id}`, undefined],
        ['GET', `/w/${a.workspaceId}/assignments/${asg.body.id}`, undefined],
        ['PUT', `/w/${a.workspaceId}/assignments/${asg.body.id}`, { status: 'cancelled' }],
      ] as const) {
        const res = await t.request(method, path, { token: a.apiKey, body });
        expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 });
        await t.expectEvents(res, []);
      }
      // B's workspace with A's key.
      expect((await t.request('GET', `/w/${b.workspaceId}/workflows`, { token: a.apiKey })).status).toBe(404);
      expect((await t.request('GET', `/w/${a.workspaceId}/workflows`, { token: a.apiKey })).body.total).toBe(
        0,
      );
      expect(
        (await t.request('GET', `/w/${a.workspaceId}/assignments`, { token: a.apiKey })).body.total,
      ).toBe(0);
    });
  });
});
