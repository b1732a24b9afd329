import { startTestApp, TestApp } from '../support/app';
import { builtInRoles, customRole } from '../support/identity-fixtures';
import { agentMember, createWorkflow, person } from '../support/work-fixtures';

/** Chats that run a workflow: POST /chats with workflowId, PUT /chats with assignmentId. */
describe('Messaging: chats with workflows (e2e)', () => {
  let t: TestApp;
  let wid: string;
  let key: string;
  let agentId: number;
  let phoneId: number;
  let otherPhoneId: number;

  beforeAll(async () => {
    t = await startTestApp();
    ({ workspaceId: wid, apiKey: key } = await t.bootstrap('Clinic'));
    agentId = await agentMember(t, wid, key);
    phoneId = (await post('/phone-numbers', { number: '+14155550300' })).body.id;
    otherPhoneId = (await post('/phone-numbers', { number: '+14155550301' })).body.id;
  });
  afterAll(() => t.close());

  function post(path: string, body: unknown, token = key) {
    return t.request('POST', `/w/${wid}${path}`, { token, body });
  }

  it('starts the assignment that runs the workflow for the chat member, and says so in the chat', async () => {
    const wf = await createWorkflow(t, wid, key, { name: 'Intake', agentId, defaultPhoneNumberId: phoneId });
    const patient = await person(t, wid, key);
    const res = await post('/chats', { channel: 'phone-sms', workflowId: wf.id, memberId: patient.memberId });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      channel: 'phone-sms',
      workflowId: wf.id,
      assignmentId: expect.any(Number),
      memberId: patient.memberId,
      // The workflow's default number.
      phoneNumberId: phoneId,
    });
    const assignmentId = res.body.assignmentId as number;
    await t.expectEvents(res, [
      {
        type: 'AssignmentStarted',
        stream: `assignment-${assignmentId}`,
        data: { assignment: { workflowId: wf.id, memberId: patient.memberId, status: 'active' } },
      },
      {
        type: 'ChatCreated',
        stream: `chat-${res.body.id}`,
        data: { workflowId: wf.id, assignmentId, phoneNumberId: phoneId },
      },
    ]);
    const assignment = await t.request('GET', `/w/${wid}/assignments/${assignmentId}`, { token: key });
    expect(assignment.status).toBe(200);
    expect(assignment.body).toMatchObject({ workflowId: wf.id, memberId: patient.memberId });
    // Listed under its workflow.
    const list = await t.request('GET', `/w/${wid}/chats?workflowId=${wf.id}`, { token: key });
    expect(list.body.items.map((c: { id: number }) => c.id)).toEqual([res.body.id]);
    // A number given wins over the default.
    const own = await post('/chats', {
      channel: 'phone-voice',
      workflowId: wf.id,
      memberId: patient.memberId,
      phoneNumberId: otherPhoneId,
    });
    expect(own.status).toBe(201);
    expect(own.body.phoneNumberId).toBe(otherPhoneId);
  });

  it('refuses a phone chat without a number when the workflow has no default: 400 naming phoneNumberId, nothing started', async () => {
    const wf = await createWorkflow(t, wid, key, { name: 'No number', agentId });
    const res = await post('/chats', { channel: 'phone-voice', workflowId: wf.id });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^phoneNumberId: /);
    expect(await t.eventsOf(res)).toEqual([]);
    // A web chat needs none.
    expect((await post('/chats', { channel: 'web-chat', workflowId: wf.id })).status).toBe(201);
  });

  it('refuses an unknown, deleted or foreign workflow with 400 naming workflowId', async () => {
    const gone = await createWorkflow(t, wid, key, { name: 'Gone', agentId });
    expect((await t.request('DELETE', `/w/${wid}/workflows/${gone.id}`, { token: key })).status).toBe(204);
    const other = await t.bootstrap('Other');
    const foreign = await createWorkflow(t, other.workspaceId, other.apiKey, {
      name: 'Foreign',
      agentId: await agentMember(t, other.workspaceId, other.apiKey),
    });
    for (const id of [gone.id, foreign.id, 2_000_000_000]) {
      const res = await post('/chats', { channel: 'web-chat', workflowId: id });
      expect(res.status).toBe(400);
      expect(res.body.detail).toBe(`workflowId: no workflow ${id} in this workspace`);
      expect(await t.eventsOf(res)).toEqual([]);
    }
  });

  it("applies the workflow's Member Role Gate: 403 with the gate's message, no assignment and no chat", async () => {
    const roles = await builtInRoles(t, wid, key);
    const coordinators = await customRole(t, wid, key, 'Coordinators');
    const wf = await createWorkflow(t, wid, key, {
      name: 'Gated',
      agentId,
      roleGate: { roleIds: [coordinators], message: 'Only coordinators start intake' },
    });
    const user = await person(t, wid, key, roles.User);
    const coordinator = await person(t, wid, key, coordinators);
    for (const [token, body] of [
      [user.token, { channel: 'web-chat', workflowId: wf.id }],
      [key, { channel: 'web-chat', workflowId: wf.id, memberId: user.memberId }],
    ] as const) {
      const refused = await post('/chats', body, token);
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual({ detail: 'Only coordinators start intake' });
      expect(await t.eventsOf(refused)).toEqual([]);
    }
    // A listed role starts it for itself, no scope needed.
    const allowed = await post('/chats', { channel: 'web-chat', workflowId: wf.id }, coordinator.token);
    expect(allowed.status).toBe(201);
    expect(allowed.body).toMatchObject({ workflowId: wf.id, memberId: coordinator.memberId });
  });

  it("attaches an assignment of the chat's member with PUT assignmentId; others are 400", async () => {
    const wf = await createWorkflow(t, wid, key, { name: 'Follow-up', agentId });
    const patient = await person(t, wid, key);
    const stranger = await person(t, wid, key);
    const chat = await post('/chats', { channel: 'web-chat', memberId: patient.memberId });
    expect(chat.body).toMatchObject({ workflowId: null, assignmentId: null });
    const started = await post('/assignments', { workflowId: wf.id, memberId: patient.memberId });
    expect(started.status).toBe(201);
    const foreign = await post('/assignments', { workflowId: wf.id, memberId: stranger.memberId });

    const put = (body: unknown, headers: Record<string, string> = {}) =>
      t.request('PUT', `/w/${wid}/chats/${chat.body.id}`, { token: key, body, headers });
    for (const [id, detail] of [
      [foreign.body.id, /^assignmentId: assignment \d+ runs for member/],
      [2_000_000_000, /^assignmentId: no assignment/],
    ] as const) {
      const res = await put({ assignmentId: id });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(detail);
      expect(await t.eventsOf(res)).toEqual([]);
    }
    const res = await put({ assignmentId: started.body.id }, { 'if-match': '"1"' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ assignmentId: started.body.id, workflowId: wf.id });
    expect(res.headers.get('etag')).toBe('"2"');
    await t.expectEvents(res, [
      {
        type: 'ChatUpdated',
        data: { changes: { assignmentId: started.body.id, workflowId: wf.id } },
      },
    ]);
    // The same again changes nothing.
    const same = await put({ assignmentId: started.body.id });
    expect(same.status).toBe(200);
    await t.expectEvents(same, []);
    // Another workspace's assignment is unknown here.
    const other = await t.bootstrap('Elsewhere');
    const otherWf = await createWorkflow(t, other.workspaceId, other.apiKey, {
      name: 'X',
      agentId: await agentMember(t, other.workspaceId, other.apiKey),
    });
    const otherAssignment = await t.request('POST', `/w/${other.workspaceId}/assignments`, {
      token: other.apiKey,
      body: { workflowId: otherWf.id, memberId: other.memberId },
    });
    expect(otherAssignment.status).toBe(201);
    const cross = await put({ assignmentId: otherAssignment.body.id });
    expect(cross.status).toBe(400);
    expect(cross.body.detail).toMatch(/^assignmentId: no assignment/);
  });
});
