import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import type { StoredEvent } from '../../src/core/event-store/event-store.port';
import { ASSISTANT_QUEUE } from '../../src/modules/assistant/workers/reply-job';
import { startTestApp, TestApp } from '../support/app';
import { signup } from '../support/identity-fixtures';
import { startStreamableMcp, Peer } from '../support/mcp-peers';
import {
  lastUserText,
  OpenAiPeer,
  PeerAnswer,
  PeerChatRequest,
  startOpenAiPeer,
  toolResults,
} from '../support/openai-peer';
import { eventually } from '../support/processes';
import { agentMember, createWorkflow } from '../support/work-fixtures';
import { startTwilioPeer, TwilioPeer, twilioServiceEnv } from '../support/twilio-peer';

const PUBLIC_BASE_URL = 'https://assistant.example.test/api/v2';
const WORKSPACE_NUMBER = '+14155550700';
const DEBOUNCE_MS = 400;

/**
 * The assistant of `ai` chats against a local OpenAI-compatible server (scripted answers,
 * tool calls, malformed arguments, 429 and 500), a local MCP server from the SDK and the
 * Twilio-compatible SMS peer: one reply per burst, tool calls recorded, STOP respected,
 * paused and human chats untouched, failures recorded with needsResponse kept.
 */
describe('Assistant: replies in ai chats (e2e)', () => {
  let model: OpenAiPeer;
  let twilio: TwilioPeer;
  let mcp: Peer;
  let t: TestApp;
  let wid: string;
  let key: string;
  let phoneId: number;
  let ownerId: number;
  /** Scripts by the text of the member's message that starts the reply. */
  const scripts = new Map<string, (request: PeerChatRequest) => PeerAnswer | Promise<PeerAnswer>>();
  const mcpCalls: { name: string; args: Record<string, unknown> }[] = [];

  beforeAll(async () => {
    model = await startOpenAiPeer();
    model.script = (request) => {
      // A custom tool's own model call: its prompt is the system message.
      const system = request.messages[0]?.content ?? '';
      if (system.startsWith('Look up the patient record'))
        return { content: `record ${JSON.parse(lastUserText(request)).recordRef}: blood type O-` };
      const script = scripts.get(lastUserText(request));
      return script ? script(request) : { content: `echo: ${lastUserText(request)}` };
    };
    twilio = await startTwilioPeer();
    mcp = await startStreamableMcp(
      () => [
        {
          name: 'forecast',
          description: 'Weather',
          inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
        },
        { name: 'explode', description: 'Always fails', inputSchema: { type: 'object' } },
        { name: 'grumpy', description: 'Refuses', inputSchema: { type: 'object' } },
      ],
      {
        requiredBearer: 'mcp-secret-token',
        call: (name, args) => {
          mcpCalls.push({ name, args });
          if (name === 'explode') throw new Error('the tool server broke');
          if (name === 'grumpy') return { isError: true, content: [{ type: 'text', text: 'not today' }] };
          return { content: [{ type: 'text', text: `sunny in ${String(args.city)}` }] };
        },
      },
    );
    t = await startTestApp({
      env: {
        ASSISTANT_PROVIDER: 'openai',
        OPENAI_BASE_URL: model.url,
        OPENAI_API_KEY: 'sk-test-key',
        ASSISTANT_MODEL: 'test-model',
        ASSISTANT_DEBOUNCE_MS: String(DEBOUNCE_MS),
        ASSISTANT_ATTEMPTS: '3',
        ASSISTANT_BACKOFF_MS: '100',
        ASSISTANT_MAX_TOOL_ROUNDS: '3',
        ...twilioServiceEnv(twilio),
        PUBLIC_BASE_URL,
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      },
    });
    ({ workspaceId: wid, apiKey: key, memberId: ownerId } = await t.bootstrap('Sunrise Clinic'));
    phoneId = (await post('/phone-numbers', { number: WORKSPACE_NUMBER })).body.id;

    const kit = await post('/custom-toolkits', { name: 'CRM', slug: 'crm' });
    expect(kit.status).toBe(201);
    const tool = await post(`/custom-toolkits/${kit.body.id}/tools`, {
      name: 'lookup_record',
      displayName: 'Look up a record',
      description: 'Finds a patient record by its reference',
      prompt: 'Look up the patient record named in the arguments.',
      chatModel: 'tool-model',
      inputSchema: {
        type: 'object',
        properties: { recordRef: { type: 'string', pattern: '^R-[0-9]+$' } },
        required: ['recordRef'],
        additionalProperties: false,
      },
    });
    expect(tool.status).toBe(201);
    const server = await post('/mcp-servers', {
      name: 'Weather',
      slug: 'weather',
      mcpUrl: mcp.url,
      supportsDirectAuth: true,
      directAuthToken: 'mcp-secret-token',
    });
    expect(server.status).toBe(201);
    const refreshed = await post(`/mcp-servers/${server.body.id}/refresh-tools`, undefined);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.tools).toHaveLength(3);
  });
  afterAll(async () => {
    await t.close();
    await Promise.all([model.close(), twilio.close(), mcp.close()]);
  });

  const post = (path: string, body: unknown) => t.request('POST', `/w/${wid}${path}`, { token: key, body });
  const get = (path: string) => t.request('GET', `/w/${wid}${path}`, { token: key });
  const put = (path: string, body: unknown) => t.request('PUT', `/w/${wid}${path}`, { token: key, body });

  let phoneCounter = 100;
  async function chat(
    body: Record<string, unknown> = {},
    member: Record<string, unknown> = {},
  ): Promise<{ chatId: number; memberId: number; phone: string }> {
    const phone = `+1415555${String(++phoneCounter).padStart(4, '0')}`;
    const m = await signup(t, wid, key, { name: 'Ada Lovelace', phone, ...member });
    const c = await post('/chats', { channel: 'web-chat', memberId: m.member.id, ...body });
    expect(c.status).toBe(201);
    return { chatId: c.body.id, memberId: m.member.id, phone };
  }
  const say = (chatId: number, content: string) => post(`/chats/${chatId}/messages`, { content });
  const assistantEvents = (chatId: number): Promise<StoredEvent[]> =>
    t.store.readStream(`assistant-chat-${chatId}`);
  const sentByAssistant = async (chatId: number) =>
    (await t.store.readStream(`chat-${chatId}`)).filter(
      (e) => e.type === 'MessageSent' && (e.data as { role: string }).role === 'assistant',
    );
  const requestsFor = (text: string) => model.requests.filter((r) => lastUserText(r) === text);
  /** Waits for the assistant's outcome of a chat: replied or failed. */
  const outcome = (chatId: number) =>
    eventually(async () => {
      const events = await assistantEvents(chatId);
      return events.find((e) => e.type === 'AssistantReplied' || e.type === 'AssistantReplyFailed');
    }, `the assistant's outcome in chat ${chatId}`);
  const settle = () => new Promise((r) => setTimeout(r, DEBOUNCE_MS + 1500));

  it('answers a message with the member name and history, and needsResponse clears', async () => {
    const { chatId } = await chat();
    scripts.set('When is my appointment?', () => ({ content: 'Tomorrow at 3pm, Ada.' }));
    expect((await say(chatId, 'When is my appointment?')).status).toBe(201);
    expect((await get(`/chats/${chatId}`)).body.needsResponse).toBe(true);
    const done = await outcome(chatId);
    expect(done).toMatchObject({
      type: 'AssistantReplied',
      data: { chatId, model: 'test-model', rounds: 0 },
    });
    const sent = await sentByAssistant(chatId);
    expect(sent).toHaveLength(1);
    expect(sent[0].data).toMatchObject({ role: 'assistant', content: 'Tomorrow at 3pm, Ada.' });
    const request = requestsFor('When is my appointment?')[0];
    expect(request.model).toBe('test-model');
    expect(request.authorization).toBe('Bearer sk-test-key');
    expect(request.messages[0].role).toBe('system');
    expect(request.messages[0].content).toContain('Ada Lovelace');
    // Every tool on offer, under names OpenAI accepts.
    expect(request.tools!.map((x) => x.function.name).sort()).toEqual([
      'crm__lookup_record',
      'mcp_weather__explode',
      'mcp_weather__forecast',
      'mcp_weather__grumpy',
    ]);
    await eventually(
      async () => (await get(`/chats/${chatId}`)).body.needsResponse === false,
      'needsResponse to clear',
    );
  });

  it("speaks as the workflow's agent in a chat that runs a workflow", async () => {
    const agentId = await agentMember(t, wid, key);
    const agentName = (await get(`/members/${agentId}`)).body.name as string;
    const wf = await createWorkflow(t, wid, key, { name: 'Post-op follow-up', agentId });
    const { chatId } = await chat({ workflowId: wf.id });
    scripts.set('My wound itches', () => ({ content: 'That is normal in the first week.' }));
    await say(chatId, 'My wound itches');
    expect(await outcome(chatId)).toMatchObject({ type: 'AssistantReplied' });
    const request = requestsFor('My wound itches')[0];
    const system = request.messages[0].content!;
    expect(system).toContain(`You are ${agentName}`);
    expect(system).toContain('"Post-op follow-up"');
    expect(system).toContain('Ada Lovelace');
    // An agent naming no model of its own, nor instructions: ASSISTANT_MODEL and the plain prompt.
    expect(request.model).toBe('test-model');
    expect(system).not.toContain('Your instructions');
  });

  it("uses the workflow agent's own model and instructions, and ASSISTANT_MODEL once its model is cleared", async () => {
    const imported = await post('/members/import', {
      members: [
        {
          name: 'Nurse Joy',
          kind: 'agent',
          agentModel: 'agent-model-7b',
          agentInstructions: 'Sign every answer as Nurse Joy.\nNever give dosage advice.',
        },
      ],
    });
    expect(imported.body.errors).toBeNull();
    const agentId = imported.body.results[0].memberId as number;
    const wf = await createWorkflow(t, wid, key, { name: 'Joy follow-up', agentId });
    const { chatId } = await chat({ workflowId: wf.id });
    scripts.set('Can I take more pills?', () => ({ content: 'Please ask your doctor. - Nurse Joy' }));
    await say(chatId, 'Can I take more pills?');
    expect(await outcome(chatId)).toMatchObject({
      type: 'AssistantReplied',
      data: { model: 'agent-model-7b' },
    });
    const request = requestsFor('Can I take more pills?')[0];
    expect(request.model).toBe('agent-model-7b');
    const system = request.messages[0].content!;
    expect(system).toContain('You are Nurse Joy');
    expect(system).toContain('Sign every answer as Nurse Joy.\nNever give dosage advice.');

    // Cleared on the member: the next reply falls back to ASSISTANT_MODEL, instructions kept.
    expect((await put(`/members/${agentId}`, { agentModel: null })).status).toBe(200);
    scripts.set('And tomorrow?', () => ({ content: 'Same answer. - Nurse Joy' }));
    await say(chatId, 'And tomorrow?');
    await eventually(
      async () => (await assistantEvents(chatId)).filter((e) => e.type === 'AssistantReplied').length === 2,
      'the second reply',
    );
    const second = requestsFor('And tomorrow?')[0];
    expect(second.model).toBe('test-model');
    expect(second.messages[0].content).toContain('Never give dosage advice.');
  });

  it('gives a burst of messages one reply, built from all of them', async () => {
    const { chatId } = await chat();
    for (const text of ['hi', 'I have a question', 'about my bill'])
      expect((await say(chatId, text)).status).toBe(201);
    await outcome(chatId);
    await settle();
    expect(await sentByAssistant(chatId)).toHaveLength(1);
    const asked = model.requests.filter((r) => r.messages.some((m) => m.content === 'I have a question'));
    expect(asked).toHaveLength(1);
    expect(asked[0].messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'hi',
      'I have a question',
      'about my bill',
    ]);
    const events = await assistantEvents(chatId);
    expect(events.map((e) => e.type)).toEqual(['AssistantReplied']);
  });

  it('runs a custom tool (validated arguments, its prompt through the model with its chatModel) and an MCP tool, recording each call', async () => {
    const { chatId } = await chat();
    scripts.set('What is my blood type, and the weather?', (request) => {
      const results = toolResults(request);
      if (!results.length)
        return {
          toolCalls: [
            { name: 'crm__lookup_record', arguments: '{"recordRef":"R-42"}' },
            { name: 'mcp_weather__forecast', arguments: '{"city":"Lisbon"}' },
          ],
        };
      return { content: `You are ${results[0].split(': ')[1]}; ${results[1]}.` };
    });
    await say(chatId, 'What is my blood type, and the weather?');
    expect(await outcome(chatId)).toMatchObject({
      type: 'AssistantReplied',
      data: { rounds: 1, toolCalls: 2 },
    });
    expect((await sentByAssistant(chatId))[0].data).toMatchObject({
      content: 'You are blood type O-; sunny in Lisbon.',
    });
    const toolModelCall = model.requests.find((r) => r.model === 'tool-model')!;
    expect(JSON.parse(lastUserText(toolModelCall))).toEqual({ recordRef: 'R-42' });
    expect(mcpCalls).toContainEqual({ name: 'forecast', args: { city: 'Lisbon' } });
    const calls = (await assistantEvents(chatId)).filter((e) => e.type === 'AssistantToolCalled');
    expect(calls.map((e) => e.data)).toEqual([
      expect.objectContaining({
        name: 'crm__lookup_record',
        source: 'toolkit',
        target: expect.objectContaining({ tool: 'lookup_record' }),
        arguments: { recordRef: 'R-42' },
        outcome: 'ok',
        result: 'record R-42: blood type O-',
        round: 1,
      }),
      expect.objectContaining({
        name: 'mcp_weather__forecast',
        source: 'mcp-server',
        target: expect.objectContaining({ tool: 'forecast' }),
        arguments: { city: 'Lisbon' },
        outcome: 'ok',
        result: 'sunny in Lisbon',
      }),
    ]);
    // Auditors read the calls in the workspace's event history.
    const audit = await eventually(async () => {
      const res = await get(`/events?stream=assistant-chat-${chatId}`);
      return res.body.items?.length >= 3 ? res : undefined;
    }, 'the audit log to show the calls');
    expect(audit.body.items.map((e: { type: string }) => e.type)).toEqual(
      expect.arrayContaining(['AssistantToolCalled', 'AssistantReplied']),
    );
  });

  it('feeds back malformed and invalid arguments, unknown tools and a tool error, and the model recovers', async () => {
    const { chatId } = await chat();
    scripts.set('Check R-7 please', (request) => {
      const round = toolResults(request).length;
      if (round === 0)
        return {
          toolCalls: [
            { name: 'crm__lookup_record', arguments: '{"recordRef": ' },
            { name: 'crm__lookup_record', arguments: '{"recordRef":"seven"}' },
            { name: 'members_delete', arguments: '{"memberId":1}' },
            { name: 'mcp_weather__grumpy', arguments: '{}' },
          ],
        };
      return { content: 'Sorry, I could not look that up.' };
    });
    await say(chatId, 'Check R-7 please');
    expect(await outcome(chatId)).toMatchObject({ type: 'AssistantReplied' });
    const calls = (await assistantEvents(chatId)).filter((e) => e.type === 'AssistantToolCalled');
    expect(
      calls.map((e) => [(e.data as { name: string }).name, (e.data as { outcome: string }).outcome]),
    ).toEqual([
      ['crm__lookup_record', 'invalid_arguments'],
      ['crm__lookup_record', 'invalid_arguments'],
      ['members_delete', 'refused'],
      ['mcp_weather__grumpy', 'error'],
    ]);
    expect(calls[0].data).toMatchObject({ arguments: '{"recordRef": ' });
    expect((calls[1].data as { result: string }).result).toMatch(/recordRef/);
    const second = requestsFor('Check R-7 please').find((r) => toolResults(r).length === 4)!;
    expect(toolResults(second)[3]).toBe('error: not today');
    expect(model.requests.some((r) => r.model === 'tool-model' && lastUserText(r).includes('seven'))).toBe(
      false,
    );
  });

  it('records a failing tool as AssistantReplyFailed after its retries, sends nothing and keeps needsResponse', async () => {
    const { chatId } = await chat();
    scripts.set('Break something', () => ({
      toolCalls: [{ name: 'mcp_weather__explode', arguments: '{}' }],
    }));
    await say(chatId, 'Break something');
    const failed = await outcome(chatId);
    expect(failed).toMatchObject({
      type: 'AssistantReplyFailed',
      data: { chatId, reason: 'tool_failed', attempts: 3 },
    });
    const calls = (await assistantEvents(chatId)).filter((e) => e.type === 'AssistantToolCalled');
    expect(calls.map((e) => (e.data as { outcome: string }).outcome)).toEqual(['failed', 'failed', 'failed']);
    expect(await sentByAssistant(chatId)).toHaveLength(0);
    expect((await get(`/chats/${chatId}`)).body.needsResponse).toBe(true);
  });

  it('runs a tool once across attempts: a retry reuses the recorded result of the same call, and records the reuse', async () => {
    const { chatId } = await chat();
    const first = { city: 'Oslo', unit: 'C' };
    let attempts = 0;
    let followUps = 0;
    scripts.set('Book Oslo', (request) => {
      if (!toolResults(request).length) {
        attempts++;
        // The same call both times (its keys in another order), and a new one on the retry.
        return attempts === 1
          ? { toolCalls: [{ name: 'mcp_weather__forecast', arguments: JSON.stringify(first) }] }
          : {
              toolCalls: [
                { name: 'mcp_weather__forecast', arguments: '{ "unit": "C", "city": "Oslo" }' },
                { name: 'mcp_weather__forecast', arguments: '{"city":"Bergen"}' },
              ],
            };
      }
      // The model fails after the first attempt's tool call: the job is retried.
      return ++followUps === 1 ? { status: 500 } : { content: `Done: ${toolResults(request).join(', ')}` };
    });
    await say(chatId, 'Book Oslo');
    expect(await outcome(chatId)).toMatchObject({
      type: 'AssistantReplied',
      data: { rounds: 1, toolCalls: 2 },
    });
    expect(attempts).toBe(2);
    // The MCP server saw the Oslo call once, and the retry's new call once.
    expect(mcpCalls.filter((c) => c.args.city === 'Oslo')).toEqual([{ name: 'forecast', args: first }]);
    expect(mcpCalls.filter((c) => c.args.city === 'Bergen')).toHaveLength(1);
    const calls = (await assistantEvents(chatId))
      .filter((e) => e.type === 'AssistantToolCalled')
      .map((e) => e.data as Record<string, unknown>);
    expect(calls).toEqual([
      expect.objectContaining({ attempt: 1, arguments: first, outcome: 'ok', result: 'sunny in Oslo' }),
      expect.objectContaining({
        attempt: 2,
        arguments: first,
        outcome: 'ok',
        result: 'sunny in Oslo',
        reused: true,
        reusedFrom: { attempt: 1, callId: calls[0].callId },
      }),
      expect.objectContaining({ attempt: 2, arguments: { city: 'Bergen' }, outcome: 'ok' }),
    ]);
    expect(calls[0]).not.toHaveProperty('reused');
    expect(calls[2]).not.toHaveProperty('reused');
    // The model got the recorded result back, and the reply went out once.
    const last = requestsFor('Book Oslo').at(-1)!;
    expect(toolResults(last)).toEqual(['sunny in Oslo', 'sunny in Bergen']);
    expect((await sentByAssistant(chatId)).map((e) => (e.data as { content: string }).content)).toEqual([
      'Done: sunny in Oslo, sunny in Bergen',
    ]);
  });

  it('retries a 429 from the model with backoff, then answers', async () => {
    const { chatId } = await chat();
    let calls = 0;
    scripts.set('Are you there?', () =>
      ++calls === 1 ? { status: 429, headers: { 'retry-after': '0' } } : { content: 'Yes.' },
    );
    await say(chatId, 'Are you there?');
    expect(await outcome(chatId)).toMatchObject({ type: 'AssistantReplied' });
    expect(calls).toBe(2);
    expect((await sentByAssistant(chatId)).map((e) => (e.data as { content: string }).content)).toEqual([
      'Yes.',
    ]);
  });

  it('records a model that keeps failing (500) after the attempts, and a 400 at once; nothing is sent', async () => {
    const a = await chat();
    scripts.set('Model down', () => ({ status: 500 }));
    await say(a.chatId, 'Model down');
    expect(await outcome(a.chatId)).toMatchObject({
      type: 'AssistantReplyFailed',
      data: { reason: 'model_error', attempts: 3, detail: expect.stringMatching(/500/) },
    });
    expect(requestsFor('Model down')).toHaveLength(3);

    const b = await chat();
    scripts.set('Bad request', () => ({ status: 400 }));
    await say(b.chatId, 'Bad request');
    expect(await outcome(b.chatId)).toMatchObject({
      type: 'AssistantReplyFailed',
      data: { reason: 'model_error', attempts: 1 },
    });
    expect(requestsFor('Bad request')).toHaveLength(1);
    for (const { chatId } of [a, b]) {
      expect(await sentByAssistant(chatId)).toHaveLength(0);
      expect((await get(`/chats/${chatId}`)).body.needsResponse).toBe(true);
    }
  });

  it('records an answer over the message limit as answer_too_long at once: nothing sent, not cut, needsResponse kept', async () => {
    const { chatId } = await chat();
    scripts.set('Tell me everything', () => ({ content: 'All of it. '.repeat(1_000) }));
    await say(chatId, 'Tell me everything');
    expect(await outcome(chatId)).toMatchObject({
      type: 'AssistantReplyFailed',
      data: {
        chatId,
        reason: 'answer_too_long',
        attempts: 1,
        detail:
          'the model answered 10999 characters; message: must be shorter than or equal to 10000 characters',
      },
    });
    expect(requestsFor('Tell me everything')).toHaveLength(1);
    expect(await sentByAssistant(chatId)).toHaveLength(0);
    expect((await get(`/chats/${chatId}`)).body.needsResponse).toBe(true);
  });

  it('leaves paused and human chats untouched', async () => {
    const paused = await chat();
    expect((await put(`/chats/${paused.chatId}`, { paused: true })).status).toBe(200);
    const human = await chat({ assistantKind: 'human', assistantMemberId: ownerId });
    await say(paused.chatId, 'Hello paused');
    await say(human.chatId, 'Hello human');
    await settle();
    expect(requestsFor('Hello paused')).toHaveLength(0);
    expect(requestsFor('Hello human')).toHaveLength(0);
    for (const { chatId } of [paused, human]) {
      expect(await assistantEvents(chatId)).toEqual([]);
      expect(await sentByAssistant(chatId)).toHaveLength(0);
    }
    expect((await get(`/chats/${paused.chatId}`)).body.needsResponse).toBe(true);
  });

  it('sends nothing when the chat is paused while the model is thinking', async () => {
    const { chatId } = await chat();
    let release!: () => void;
    const thinking = new Promise<void>((r) => (release = r));
    let asked = false;
    scripts.set('Take your time', async () => {
      asked = true;
      await thinking;
      return { content: 'Here is my late answer.' };
    });
    await say(chatId, 'Take your time');
    await eventually(async () => asked, 'the model to be asked');
    expect((await put(`/chats/${chatId}`, { paused: true })).status).toBe(200);
    release();
    await settle();
    expect(await sentByAssistant(chatId)).toHaveLength(0);
    expect(await assistantEvents(chatId)).toEqual([]);
    expect((await get(`/chats/${chatId}`)).body.needsResponse).toBe(true);
  });

  it("names the chat's own member whatever member a job names, and answers a job that names none", async () => {
    const queue = t.app.get<Queue>(getQueueToken(ASSISTANT_QUEUE), { strict: false });
    const other = await signup(t, wid, key, { name: 'Mallory Other', phone: '+14155559876' });
    for (const [label, memberId] of [
      ['named wrongly', other.member.id],
      ['named by none', undefined],
    ] as const) {
      const { chatId } = await chat();
      // Written while paused (no reply), then resumed: only the job below answers it.
      expect((await put(`/chats/${chatId}`, { paused: true })).status).toBe(200);
      const said = await say(chatId, `Hello, ${label}`);
      expect(said.status).toBe(201);
      await settle();
      expect((await put(`/chats/${chatId}`, { paused: false })).status).toBe(200);
      await queue.add('reply', {
        workspaceId: wid,
        chatId,
        replyTo: said.body.id as number,
        ...(memberId === undefined ? {} : { memberId }),
        correlationId: `test-${label}`,
        causationId: `test-${label}`,
      });
      expect(await outcome(chatId)).toMatchObject({ type: 'AssistantReplied' });
      const [request] = requestsFor(`Hello, ${label}`);
      expect(request.messages[0].content).toContain('"Ada Lovelace"');
      expect(request.messages[0].content).not.toContain('Mallory');
    }
  });

  describe('over SMS', () => {
    const inbound = (from: string, body: string, sid: string) =>
      twilio.webhook(`${PUBLIC_BASE_URL}/providers/twilio/sms/inbound`, t.baseUrl, PUBLIC_BASE_URL, {
        AccountSid: twilio.accountSid,
        MessageSid: sid,
        From: from,
        To: WORKSPACE_NUMBER,
        Body: body,
      });

    it('answers an inbound text through the SMS provider; STOP gets only the keyword reply, and an opted-out member gets nothing', async () => {
      const { chatId, memberId, phone } = await chat({ channel: 'phone-sms', phoneNumberId: phoneId });
      expect((await put(`/members/${memberId}`, { notifySms: true })).status).toBe(200);
      scripts.set('Do you open on Saturday?', () => ({ content: 'Yes, 9 to 12.' }));
      expect((await inbound(phone, 'Do you open on Saturday?', 'SM-a-1')).status).toBeLessThan(300);
      const reply = await eventually(
        async () => twilio.messages.find((m) => m.to === phone && m.body === 'Yes, 9 to 12.'),
        'the reply at the SMS peer',
      );
      expect(reply.from).toBe(WORKSPACE_NUMBER);

      await inbound(phone, 'STOP', 'SM-a-2');
      await eventually(
        async () => twilio.messages.find((m) => m.to === phone && /unsubscribed/.test(m.body)),
        'the STOP confirmation',
      );
      scripts.set('Still there?', () => ({ content: 'Always.' }));
      await settle();
      expect(requestsFor('STOP')).toHaveLength(0);
      await inbound(phone, 'Still there?', 'SM-a-3');
      await eventually(
        async () => (await assistantEvents(chatId)).filter((e) => e.type === 'AssistantReplied').length === 2,
        'the second reply',
      );
      const lastReply = (await sentByAssistant(chatId)).at(-1)!;
      await eventually(async () => {
        const m = await get(
          `/chats/${chatId}/messages/${(lastReply.data as { messageId: number }).messageId}`,
        );
        return m.body.status === 'failed' ? m : undefined;
      }, 'the reply to an opted-out member to fail');
      expect(twilio.messages.filter((m) => m.to === phone && m.body === 'Always.')).toEqual([]);
    });
  });
});

describe('Assistant: ASSISTANT_PROVIDER=none (e2e)', () => {
  it('runs nothing: the chat keeps needsResponse for a human', async () => {
    const t = await startTestApp({ env: { ASSISTANT_DEBOUNCE_MS: '50' } });
    try {
      const { workspaceId: wid, apiKey: key } = await t.bootstrap();
      const m = await signup(t, wid, key, { name: 'Bo', email: 'bo@example.com' });
      const c = await t.request('POST', `/w/${wid}/chats`, {
        token: key,
        body: { channel: 'web-chat', memberId: m.member.id },
      });
      await t.request('POST', `/w/${wid}/chats/${c.body.id}/messages`, {
        token: key,
        body: { content: 'Hello?' },
      });
      await new Promise((r) => setTimeout(r, 1500));
      expect(await t.store.readStream(`assistant-chat-${c.body.id}`)).toEqual([]);
      const chat = await t.request('GET', `/w/${wid}/chats/${c.body.id}`, { token: key });
      expect(chat.body).toMatchObject({ assistantKind: 'ai', needsResponse: true });
      const types = (await t.store.readStream(`chat-${c.body.id}`)).map((e) => e.type);
      expect(types).toEqual(['ChatCreated', 'MessageReceived']);
    } finally {
      await t.close();
    }
  });
});
