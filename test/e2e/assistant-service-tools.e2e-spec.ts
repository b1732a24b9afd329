import type { StoredEvent } from '../../src/core/event-store/event-store.port';
import { startTestApp, TestApp } from '../support/app';
import { signup } from '../support/identity-fixtures';
import {
  lastUserText,
  OpenAiPeer,
  PeerAnswer,
  PeerChatRequest,
  startOpenAiPeer,
  toolResults,
} from '../support/openai-peer';
import { eventually } from '../support/processes';
import { CONTACT_FIELDS, createDataType, recordsPath } from '../support/records-fixtures';
import { agentMember, createWorkflow } from '../support/work-fixtures';

const DEBOUNCE_MS = 200;

type ToolCalled = {
  name: string;
  source: string | null;
  target: { tool: string; memberId?: number } | null;
  arguments: unknown;
  outcome: string;
  result: string;
};

/**
 * The service's own tools (the MCP endpoint's) offered to a chat's assistant as its
 * workflow's agent member: only those the member's role allows, calls refused outside
 * them and outside its workspace, and the events of a write naming the agent as actor.
 */
describe('Assistant: the service tools as the workflow agent member (e2e)', () => {
  let model: OpenAiPeer;
  let t: TestApp;
  let wid: string;
  let key: string;
  let other: { wid: string; key: string; dataTypeId: number };
  let dataTypeId: number;
  /** Agents: records:read; the built-in Agent role (no scopes); assignments:write. */
  const agents = { reader: 0, plain: 0, tasker: 0 };
  const workflows = { reader: 0, plain: 0, tasker: 0 };
  const scripts = new Map<string, (request: PeerChatRequest) => PeerAnswer | Promise<PeerAnswer>>();

  beforeAll(async () => {
    model = await startOpenAiPeer();
    model.script = (request) => {
      const script = scripts.get(lastUserText(request));
      return script ? script(request) : { content: `echo: ${lastUserText(request)}` };
    };
    t = await startTestApp({
      env: {
        ASSISTANT_PROVIDER: 'openai',
        OPENAI_BASE_URL: model.url,
        OPENAI_API_KEY: 'sk-test-key',
        ASSISTANT_MODEL: 'test-model',
        ASSISTANT_DEBOUNCE_MS: String(DEBOUNCE_MS),
        ASSISTANT_ATTEMPTS: '2',
        ASSISTANT_BACKOFF_MS: '100',
      },
    });
    ({ workspaceId: wid, apiKey: key } = await t.bootstrap('Sunrise Clinic'));
    dataTypeId = (await createDataType(t, wid, key, { slug: 'patients', fields: CONTACT_FIELDS })).id;
    const rec = await t.request('POST', recordsPath(wid, dataTypeId), {
      token: key,
      body: { fieldValues: { name: 'Ada Lovelace', tier: 'gold' } },
    });
    expect(rec.status).toBe(201);

    const role = async (name: string, permissions: string[]) => {
      const res = await post('/member-roles', { name, permissions });
      expect(res.status).toBe(201);
      return res.body.id as number;
    };
    const readerRole = await role('Record reader', ['records:read']);
    const taskerRole = await role('Task writer', ['assignments:write']);
    for (const [k, roleId] of [
      ['reader', readerRole],
      ['plain', undefined],
      ['tasker', taskerRole],
    ] as const) {
      agents[k] = await agentMember(t, wid, key);
      if (roleId !== undefined)
        expect((await put(`/members/${agents[k]}`, { memberRoleId: roleId })).status).toBe(200);
      workflows[k] = (await createWorkflow(t, wid, key, { name: `Follow-up ${k}`, agentId: agents[k] })).id;
    }

    const b = await t.bootstrap('Other Clinic');
    const otherType = await createDataType(t, b.workspaceId, b.apiKey, {
      slug: 'patients',
      fields: CONTACT_FIELDS,
    });
    const otherRec = await t.request('POST', recordsPath(b.workspaceId, otherType.id), {
      token: b.apiKey,
      body: { fieldValues: { name: 'Grace Hopper', tier: 'gold' } },
    });
    expect(otherRec.status).toBe(201);
    other = { wid: b.workspaceId, key: b.apiKey, dataTypeId: otherType.id };
  });
  afterAll(async () => {
    await t.close();
    await model.close();
  });

  const post = (path: string, body: unknown) => t.request('POST', `/w/${wid}${path}`, { token: key, body });
  const get = (path: string) => t.request('GET', `/w/${wid}${path}`, { token: key });
  const put = (path: string, body: unknown) => t.request('PUT', `/w/${wid}${path}`, { token: key, body });

  let counter = 0;
  async function chatOf(workflowId: number | undefined): Promise<number> {
    const m = await signup(t, wid, key, { name: 'Ada Lovelace', email: `ada${++counter}@example.com` });
    const c = await post('/chats', {
      channel: 'web-chat',
      memberId: m.member.id,
      ...(workflowId ? { workflowId } : {}),
    });
    expect(c.status).toBe(201);
    return c.body.id as number;
  }
  const assistantEvents = (chatId: number): Promise<StoredEvent[]> =>
    t.store.readStream(`assistant-chat-${chatId}`);
  const outcome = (chatId: number) =>
    eventually(async () => {
      const events = await assistantEvents(chatId);
      return events.find((e) => e.type === 'AssistantReplied' || e.type === 'AssistantReplyFailed');
    }, `the assistant's outcome in chat ${chatId}`);
  const calls = async (chatId: number): Promise<ToolCalled[]> =>
    (await assistantEvents(chatId))
      .filter((e) => e.type === 'AssistantToolCalled')
      .map((e) => e.data as ToolCalled);
  const offered = (text: string): string[] =>
    (model.requests.find((r) => lastUserText(r) === text)?.tools ?? [])
      .map((x) => x.function.name)
      .filter((n) => n.startsWith('svc__'))
      .sort();
  /** Runs one reply whose first model answer calls `toolCalls`, then answers with the tool results. */
  async function converse(chatId: number, text: string, toolCalls: { name: string; arguments: string }[]) {
    scripts.set(text, (request) => {
      const results = toolResults(request);
      return results.length ? { content: `results: ${results.join(' | ')}` } : { toolCalls };
    });
    expect((await post(`/chats/${chatId}/messages`, { content: text })).status).toBe(201);
    return outcome(chatId);
  }

  it('offers an agent with records:read the record tools, runs a search as it and feeds the result back', async () => {
    const chatId = await chatOf(workflows.reader);
    const done = await converse(chatId, 'Find Ada please', [
      { name: 'svc__records_search', arguments: JSON.stringify({ dataTypeId, search: 'Ada' }) },
    ]);
    expect(done).toMatchObject({ type: 'AssistantReplied', data: { rounds: 1, toolCalls: 1 } });
    // Exactly the tools of the role's scope (records.search and records.get need records:read).
    expect(offered('Find Ada please')).toEqual(['svc__records_get', 'svc__records_search']);
    const [call] = await calls(chatId);
    expect(call).toMatchObject({
      name: 'svc__records_search',
      source: 'service',
      target: { tool: 'records.search', memberId: agents.reader },
      arguments: { dataTypeId, search: 'Ada' },
      outcome: 'ok',
    });
    const body = JSON.parse(call.result) as { total: number; items: { fieldValues: { name: string } }[] };
    expect(body.total).toBe(1);
    expect(body.items[0].fieldValues.name).toBe('Ada Lovelace');
    // The result went back to the model, and its answer to the member.
    const second = model.requests.find(
      (r) => lastUserText(r) === 'Find Ada please' && toolResults(r).length === 1,
    )!;
    expect(toolResults(second)[0]).toBe(call.result);
    const sent = (await t.store.readStream(`chat-${chatId}`)).filter(
      (e) => e.type === 'MessageSent' && (e.data as { role: string }).role === 'assistant',
    );
    expect((sent[0].data as { content: string }).content).toContain('Ada Lovelace');
  });

  it('offers an agent without the scopes none of them, and refuses its calls; nothing is written', async () => {
    const before = (await get('/tasks')).body.total as number;
    const chatId = await chatOf(workflows.plain);
    const done = await converse(chatId, 'Make me a task', [
      { name: 'svc__records_search', arguments: JSON.stringify({ dataTypeId, search: 'Ada' }) },
      { name: 'svc__tasks_create', arguments: JSON.stringify({ name: 'Call Ada back' }) },
    ]);
    expect(done).toMatchObject({ type: 'AssistantReplied' });
    expect(offered('Make me a task')).toEqual([]);
    const made = await calls(chatId);
    expect(made.map((c) => [c.name, c.source, c.outcome])).toEqual([
      ['svc__records_search', 'service', 'refused'],
      ['svc__tasks_create', 'service', 'refused'],
    ]);
    expect(made[0].result).toBe('error: 403: This credential lacks the scope records:read');
    expect(made[1].result).toBe('error: 403: This credential lacks the scope assignments:write');
    expect(made[0].result).not.toMatch(/Ada Lovelace/);
    expect((await get('/tasks')).body.total).toBe(before);
  });

  it('gives a chat without a workflow no service tools, and refuses a call of one', async () => {
    const chatId = await chatOf(undefined);
    await converse(chatId, 'No agent here', [
      { name: 'svc__records_search', arguments: JSON.stringify({ dataTypeId }) },
    ]);
    expect(offered('No agent here')).toEqual([]);
    expect((await calls(chatId)).map((c) => [c.source, c.outcome])).toEqual([[null, 'refused']]);
  });

  it('creates a task as the agent: its events name the agent member as actor', async () => {
    const chatId = await chatOf(workflows.tasker);
    const done = await converse(chatId, 'Remind the team', [
      { name: 'svc__tasks_create', arguments: JSON.stringify({ name: 'Call Ada back', priority: 'high' }) },
    ]);
    expect(done).toMatchObject({ type: 'AssistantReplied' });
    expect(offered('Remind the team')).toEqual(['svc__tasks_create', 'svc__tasks_list', 'svc__tasks_update']);
    const [call] = await calls(chatId);
    expect(call).toMatchObject({ source: 'service', target: { tool: 'tasks.create' }, outcome: 'ok' });
    const task = JSON.parse(call.result) as { id: number; name: string };
    expect(task.name).toBe('Call Ada back');
    expect((await get(`/tasks/${task.id}`)).body).toMatchObject({ id: task.id, name: 'Call Ada back' });
    const created = (await t.store.readStream(`task-${task.id}`)).find((e) => e.type === 'TaskCreated')!;
    expect(created.metadata.workspaceId).toBe(wid);
    expect(created.metadata.actor).toEqual({
      kind: 'assistant',
      id: String(agents.tasker),
      memberId: agents.tasker,
    });
    // The task is caused by the member's message the reply answers, in the reply's correlation.
    const received = (await t.store.readStream(`chat-${chatId}`)).find((e) => e.type === 'MessageReceived')!;
    expect(created.metadata.correlationId).toBe(received.metadata.correlationId);
  });

  it('creates the task once when the reply is retried after the call: the retry reuses the recorded result', async () => {
    const before = (await get('/tasks?search=Call%20Grace%20back')).body.total as number;
    const chatId = await chatOf(workflows.tasker);
    const args = JSON.stringify({ name: 'Call Grace back', priority: 'high' });
    let followUps = 0;
    scripts.set('Remind them about Grace', (request) => {
      if (!toolResults(request).length)
        return { toolCalls: [{ name: 'svc__tasks_create', arguments: args }] };
      return ++followUps === 1 ? { status: 500 } : { content: `created: ${toolResults(request)[0]}` };
    });
    expect((await post(`/chats/${chatId}/messages`, { content: 'Remind them about Grace' })).status).toBe(
      201,
    );
    expect(await outcome(chatId)).toMatchObject({ type: 'AssistantReplied' });
    const made = await calls(chatId);
    expect(made).toHaveLength(2);
    expect(made[1]).toMatchObject({ outcome: 'ok', result: made[0].result, reused: true });
    const tasks = await get('/tasks?search=Call%20Grace%20back');
    expect(tasks.body.total).toBe(before + 1);
    const sent = (await t.store.readStream(`chat-${chatId}`)).filter(
      (e) => e.type === 'MessageSent' && (e.data as { role: string }).role === 'assistant',
    );
    expect(sent).toHaveLength(1);
  });

  it('reuses no recorded result for a tool the agent lost between attempts: the call is refused instead', async () => {
    const role = await post('/member-roles', { name: 'Reader for a while', permissions: ['records:read'] });
    expect(role.status).toBe(201);
    const agent = await agentMember(t, wid, key);
    expect((await put(`/members/${agent}`, { memberRoleId: role.body.id })).status).toBe(200);
    const wf = await createWorkflow(t, wid, key, { name: 'Short-lived reader', agentId: agent });
    const chatId = await chatOf(wf.id);
    const plainRole = (await get('/member-roles')).body.items.find(
      (r: { name: string; isBuiltIn: boolean }) => r.isBuiltIn && r.name === 'Agent',
    ).id as number;
    const args = JSON.stringify({ dataTypeId, search: 'Ada' });
    let followUps = 0;
    scripts.set('Find Ada, then lose the scope', async (request) => {
      if (!toolResults(request).length)
        return { toolCalls: [{ name: 'svc__records_search', arguments: args }] };
      if (++followUps > 1) return { content: `results: ${toolResults(request).join(' | ')}` };
      // After the first attempt's search the agent is moved to the Agent role (no scopes); then the model fails.
      expect((await put(`/members/${agent}`, { memberRoleId: plainRole })).status).toBe(200);
      return { status: 500 };
    });
    expect(
      (await post(`/chats/${chatId}/messages`, { content: 'Find Ada, then lose the scope' })).status,
    ).toBe(201);
    expect(await outcome(chatId)).toMatchObject({ type: 'AssistantReplied' });
    const made = await calls(chatId);
    expect(made.map((c) => c.outcome)).toEqual(['ok', 'refused']);
    expect(made[0].result).toContain('Ada Lovelace');
    expect(made[1]).not.toHaveProperty('reused');
    expect(made[1].result).toBe('error: 403: This credential lacks the scope records:read');
  });

  it('keeps the agent in its own workspace', async () => {
    const chatId = await chatOf(workflows.reader);
    await converse(chatId, 'Look elsewhere', [
      { name: 'svc__records_search', arguments: JSON.stringify({ dataTypeId: other.dataTypeId }) },
      {
        name: 'svc__records_search',
        arguments: JSON.stringify({ dataTypeId: other.dataTypeId, workspaceId: other.wid }),
      },
      { name: 'svc__records_search', arguments: JSON.stringify({ dataTypeId, workspaceId: other.wid }) },
    ]);
    const made = await calls(chatId);
    expect(made.map((c) => c.outcome)).toEqual(['error', 'refused', 'refused']);
    expect(made[0].result).toBe('error: 404: Data type not found');
    expect(made[1].result).toMatch(/^error: 404: workspaceId: /);
    for (const c of made) expect(c.result).not.toMatch(/Grace|Ada/);
    // The other workspace still has its record, and nothing new.
    const theirs = await t.request('GET', recordsPath(other.wid, other.dataTypeId), { token: other.key });
    expect(theirs.body.total).toBe(1);
  });
});
