import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { DataSource } from 'typeorm';
import type { StoredEvent } from '../../src/core/event-store/event-store.port';
import { startTestApp, TestApp } from '../support/app';
import { keyWithScopes, signup } from '../support/identity-fixtures';
import { eventually } from '../support/processes';
import { startTwilioPeer, TwilioPeer, twilioServiceEnv } from '../support/twilio-peer';
import { startReceiver, WebhookReceiver } from '../support/webhook-receiver';
import { agentMember, createWorkflow, person } from '../support/work-fixtures';

const PUBLIC_BASE_URL = 'https://voice.example.test/api/v2';
/** 3 s of quiet makes a chat idle: room for the 400 ms pauses and the requests between messages on a loaded machine (1.8 s was not). */
const IDLE_MINUTES = '0.05';
const IDLE_MS = 3000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Chat and call summaries under ASSISTANT_PROVIDER=none (the plain digest): written when
 * a chat goes quiet (one per quiet period, however many messages), is paused, or its
 * assignment completes, and after a call ends (signed Twilio status callbacks from the
 * local peer); delivered to webhook receivers by chat:summary / call:summary rules with
 * their channel and workflowUuid filters; read back with GET /chats/{id}/summary under
 * the chat's own read rules.
 */
describe('Summaries: digests, triggers, webhooks and GET summary (e2e)', () => {
  let peer: TwilioPeer;
  let t: TestApp;
  let rx: WebhookReceiver;
  let wid: string;
  let key: string;
  let ada: { memberId: number; token: string };

  beforeAll(async () => {
    peer = await startTwilioPeer();
    rx = await startReceiver();
    t = await startTestApp({
      env: {
        CHAT_SUMMARY_IDLE_MINUTES: IDLE_MINUTES,
        ...twilioServiceEnv(peer),
        PUBLIC_BASE_URL,
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_RETRY_DELAYS_MS: '100,200',
      },
    });
    ({ workspaceId: wid, apiKey: key } = await t.bootstrap('Summary Clinic'));
    const s = await signup(t, wid, key, { email: `ada-${process.pid}@example.com`, name: 'Ada Lovelace' });
    ada = { memberId: s.member.id, token: s.token };
  });
  afterAll(async () => {
    await t.close();
    await rx.close();
    await peer.close();
  });

  const post = (path: string, body: unknown, token = key) =>
    t.request('POST', `/w/${wid}${path}`, { token, body });
  const summary = (chatId: number, token = key) =>
    t.request('GET', `/w/${wid}/chats/${chatId}/summary`, { token });
  const summaries = async (chatId: number): Promise<StoredEvent[]> =>
    t.store.readStream(`summary-chat-${chatId}`);

  async function webChat(body: Record<string, unknown> = {}): Promise<number> {
    const res = await post('/chats', { channel: 'web-chat', memberId: ada.memberId, ...body });
    expect(res.status).toBe(201);
    return res.body.id as number;
  }
  async function say(chatId: number, content: string) {
    const res = await post(`/chats/${chatId}/messages`, { content });
    expect(res.status).toBe(201);
    return res.body as { id: number; createdAt: string };
  }
  async function answer(chatId: number, message: string) {
    const res = await post(`/chats/${chatId}/send-assistant-message`, { message });
    expect(res.status).toBe(201);
    return res.body as { id: number; createdAt: string };
  }

  it('is 404 until the chat went quiet, then the digest of the whole quiet period, once', async () => {
    const chatId = await webChat();
    expect((await summary(chatId)).status).toBe(404);
    const first = await say(chatId, 'Hello, I need to move my appointment');
    await sleep(400);
    await answer(chatId, 'Of course. Which day suits you?');
    await sleep(400);
    const last = await say(chatId, 'Thursday   afternoon,\nplease');
    // Still inside the quiet period that the last message restarted: nothing yet.
    const early = await summary(chatId);
    expect(early.status).toBe(404);
    expect(early.body).toEqual({ detail: expect.stringMatching(/no summary/i) });

    const got = await eventually(async () => {
      const res = await summary(chatId);
      return res.status === 200 ? res : undefined;
    }, 'the idle summary');
    expect(got.body).toEqual({
      chatId,
      kind: 'chat',
      trigger: 'idle',
      source: 'digest',
      model: null,
      fallbackReason: null,
      channel: 'web-chat',
      workflowId: null,
      workflowUuid: null,
      participants: [{ memberId: ada.memberId, role: 'user', name: 'Ada Lovelace' }],
      messageCount: 3,
      inboundCount: 2,
      outboundCount: 1,
      firstMessageAt: first.createdAt,
      lastMessageAt: last.createdAt,
      call: null,
      summarizedAt: expect.any(String),
      text: [
        `Web chat conversation with Ada Lovelace (member ${ada.memberId}).`,
        '3 messages: 2 from the member, 1 to the member.',
        `First message ${first.createdAt}, last message ${last.createdAt}.`,
        'Last message, from the member: "Thursday afternoon, please"',
      ].join('\n'),
    });
    // Written a quiet period after the last message, not after the first.
    expect(Date.parse(got.body.summarizedAt) - Date.parse(last.createdAt)).toBeGreaterThanOrEqual(
      IDLE_MS - 50,
    );

    // One summary for the three messages, and no other after another quiet period.
    await sleep(IDLE_MS + 800);
    const events = await summaries(chatId);
    expect(events.map((e) => [e.type, (e.data as { trigger: string }).trigger])).toEqual([
      ['ChatSummarized', 'idle'],
    ]);
    expect(events[0].data).toMatchObject({ chatId, lastMessageId: last.id, key: `idle:${last.id}` });
    expect(events[0].metadata.actor).toEqual({ kind: 'system', id: 'system' });

    // A new message starts a new quiet period: a second summary, of four messages.
    await say(chatId, 'Actually Friday');
    const again = await eventually(async () => {
      const res = await summary(chatId);
      return res.body.messageCount === 4 ? res : undefined;
    }, 'the second idle summary');
    expect(again.body).toMatchObject({ trigger: 'idle', messageCount: 4, inboundCount: 3 });
    expect(await summaries(chatId)).toHaveLength(2);
    expect(again.body.text).toContain('Last message, from the member: "Actually Friday"');
  });

  it('finds a quiet chat by its last message; an idle job made stale by a newer one writes nothing', async () => {
    const queue = t.app.get<Queue>(getQueueToken('summaries'), { strict: false });
    const db = t.app.get(DataSource);
    const chatId = await webChat();
    const m1 = await say(chatId, 'first');
    const m2 = await say(chatId, 'second');
    // No job waits out a chat's quiet period: the sweep finds the chat once it is quiet.
    expect((await queue.getDelayed()).filter((j) => j.data.chatId === chatId)).toEqual([]);
    await eventually(async () => {
      const [row] = (await db.query(`SELECT last_message_id FROM summary_chats WHERE chat_id = $1`, [
        chatId,
      ])) as { last_message_id: number }[];
      return row?.last_message_id === m2.id || undefined;
    }, 'the second message in summary_chats');
    // As if a sweep had found the chat quiet after its first message and the job ran late.
    const first = (await t.store.readStream(`chat-${chatId}`)).find(
      (e) => e.type === 'MessageReceived' && (e.data as { messageId: number }).messageId === m1.id,
    )!;
    await queue.add(
      'idle',
      {
        workspaceId: wid,
        trigger: 'idle',
        chatId,
        messageId: m1.id,
        triggerEvent: {
          id: first.id,
          type: first.type,
          commit: first.position.commit.toString(),
          prepare: first.position.prepare.toString(),
        },
        correlationId: first.metadata.correlationId,
      },
      { jobId: `test-stale-${chatId}`, attempts: 1 },
    );
    const stale = await eventually(async () => {
      const job = await queue.getJob(`test-stale-${chatId}`);
      return (await job?.isCompleted()) ? job : undefined;
    }, 'the stale job');
    expect((await queue.getJob(stale!.id!))?.returnvalue).toEqual(['stale']);
    // (Nothing of the first message: the newest one's summary may already be there on a slow machine.)
    expect((await summaries(chatId)).map((e) => (e.data as { key: string }).key)).not.toContain(
      `idle:${m1.id}`,
    );

    await eventually(async () => (await summaries(chatId)).length === 1, 'the idle summary');
    const [event] = await summaries(chatId);
    expect(event.data).toMatchObject({
      trigger: 'idle',
      key: `idle:${m2.id}`,
      lastMessageId: m2.id,
      messageCount: 2,
    });
    // Caused by the newest message's event and in its request's correlation.
    const newest = (await t.store.readStream(`chat-${chatId}`)).find(
      (e) => e.type === 'MessageReceived' && (e.data as { messageId: number }).messageId === m2.id,
    )!;
    expect(event.metadata).toMatchObject({
      causationId: newest.id,
      correlationId: newest.metadata.correlationId,
    });
    // Written a quiet period after the newest message, not at once.
    expect(
      Date.parse((event.data as { summarizedAt: string }).summarizedAt) - Date.parse(m2.createdAt),
    ).toBeGreaterThanOrEqual(IDLE_MS - 50);
    // Later sweeps find the chat covered: one idle job for the newest message, however many sweeps ran.
    await sleep(1000);
    const idleJobs = (await queue.getJobs(['completed', 'waiting', 'delayed', 'active'])).filter(
      (j) => j.data.chatId === chatId && j.data.trigger === 'idle' && j.data.messageId === m2.id,
    );
    expect(idleJobs.map((j) => j.id)).toEqual([`idle-chat-${chatId}-message-${m2.id}`]);
    expect(await summaries(chatId)).toHaveLength(1);
  });

  it('summarises a chat when it is paused, and the quiet period after it adds nothing', async () => {
    const chatId = await webChat();
    await say(chatId, 'Can someone call me back?');
    const paused = await t.request('PUT', `/w/${wid}/chats/${chatId}`, {
      token: key,
      body: { paused: true },
    });
    expect(paused.status).toBe(200);
    const triggers = async () =>
      (await summaries(chatId)).map((e) => (e.data as { trigger: string }).trigger);
    await eventually(async () => (await triggers()).includes('paused'), 'the pause summary');
    const event = (await summaries(chatId)).find(
      (e) => (e.data as { trigger: string }).trigger === 'paused',
    )!;
    expect(event.type).toBe('ChatSummarized');
    expect(event.data).toMatchObject({ source: 'digest', messageCount: 1 });
    // Correlated with the request that paused the chat.
    expect(event.metadata.correlationId).toBe(paused.requestId);
    // The quiet period after the pause finds its last message covered: nothing after it.
    // (On a loaded machine the quiet period may end before the pause job runs: an idle one first is fine.)
    await sleep(IDLE_MS + 800);
    const after = await triggers();
    expect(after.slice(after.indexOf('paused'))).toEqual(['paused']);
    expect(after.length).toBeLessThanOrEqual(2);
    // Unpausing is no trigger.
    await t.request('PUT', `/w/${wid}/chats/${chatId}`, { token: key, body: { paused: false } });
    await sleep(500);
    expect(await triggers()).toEqual(after);
  });

  it('summarises a workflow chat when its assignment completes, and the rule with matching filters delivers it', async () => {
    const agentId = await agentMember(t, wid, key);
    const wf = await createWorkflow(t, wid, key, { name: 'Intake', agentId });
    const other = await createWorkflow(t, wid, key, { name: 'Other', agentId });
    const rule = async (name: string, filters: Record<string, string>) => {
      const res = await post('/event-rules', {
        name,
        eventType: 'chat:summary',
        ...filters,
        actionParams: { webhookUrl: `${rx.url}?rule=${encodeURIComponent(name)}` },
      });
      expect(res.status).toBe(201);
      return res.body as { id: number };
    };
    const matching = await rule('intake web chats', { channel: 'web-chat', workflowUuid: wf.uuid });
    await rule('sms only', { channel: 'phone-sms' });
    await rule('other workflow', { workflowUuid: other.uuid });
    await rule('any summary', {});

    const res = await post('/chats', { channel: 'web-chat', workflowId: wf.id, memberId: ada.memberId });
    expect(res.status).toBe(201);
    const chatId = res.body.id as number;
    const assignmentId = res.body.assignmentId as number;
    await say(chatId, 'My intake form is done');
    const done = await t.request('PUT', `/w/${wid}/assignments/${assignmentId}`, {
      token: key,
      body: { status: 'completed' },
    });
    expect(done.status).toBe(200);

    const completion = (r: { body?: any }) =>
      r.body?.chat?.id === chatId && r.body.summary.trigger === 'assignment_completed';
    const delivered = await rx.waitFor(2, 20_000, completion);
    await sleep(IDLE_MS + 800);
    const forChat = rx.received.filter(completion);
    // The matching rule and the unfiltered one; the other two filtered it out.
    expect(forChat.map((r) => decodeURIComponent(r.path.split('rule=')[1])).sort()).toEqual([
      'any summary',
      'intake web chats',
    ]);
    const body = delivered.find((r) => r.path.includes('intake'))!.body;
    expect(body).toMatchObject({
      event: 'chat:summary',
      eventRule: { id: matching.id },
      workspace: { uuid: wid },
      chat: { id: chatId, channel: 'web-chat', memberId: ada.memberId, workflowId: wf.id },
      workflow: { id: wf.id, uuid: wf.uuid },
      summary: {
        trigger: 'assignment_completed',
        source: 'digest',
        messageCount: 1,
        inboundCount: 1,
        outboundCount: 0,
        participants: [{ memberId: ada.memberId, role: 'user', name: 'Ada Lovelace' }],
      },
    });
    expect(body.summary.text).toContain('Last message, from the member: "My intake form is done"');
    // The quiet period after the completion found its last message covered: nothing after it.
    const written = (await summaries(chatId)).map((e) => e.data as { trigger: string });
    expect(written[written.length - 1]).toMatchObject({
      trigger: 'assignment_completed',
      workflowUuid: wf.uuid,
      assignmentId,
    });
    expect((await summary(chatId)).body).toMatchObject({ workflowId: wf.id, workflowUuid: wf.uuid });
  });

  it('summarises a call after call:completed, and delivers call:summary with its duration', async () => {
    const phone = await post('/phone-numbers', { number: '+14155550900' });
    expect(phone.status).toBe(201);
    const res = await post('/chats', {
      channel: 'phone-voice',
      memberId: ada.memberId,
      phoneNumberId: phone.body.id,
    });
    expect(res.status).toBe(201);
    const chatId = res.body.id as number;
    const calls = await post('/event-rules', {
      name: 'calls',
      eventType: 'call:summary',
      actionParams: { webhookUrl: `${rx.url}?rule=calls` },
    });
    expect(calls.status).toBe(201);
    const callback = (params: Record<string, string>) =>
      peer.webhook(
        `${PUBLIC_BASE_URL}/providers/twilio/voice/status?chatId=${chatId}`,
        t.baseUrl,
        PUBLIC_BASE_URL,
        { AccountSid: peer.accountSid, CallSid: 'CA-SUM-1', ...params },
      );
    expect((await callback({ CallStatus: 'in-progress' })).status).toBe(204);
    expect((await callback({ CallStatus: 'completed', CallDuration: '42' })).status).toBe(204);
    // The provider repeats its final callback: still one summary.
    expect((await callback({ CallStatus: 'completed', CallDuration: '42' })).status).toBe(204);

    const [req] = await rx.waitFor(
      1,
      20_000,
      (r) => r.body?.event === 'call:summary' && r.body.chat.id === chatId,
    );
    expect(req.body).toMatchObject({
      event: 'call:summary',
      chat: { id: chatId, channel: 'phone-voice' },
      workflow: null,
      call: { chatId, callSid: 'CA-SUM-1', durationSeconds: 42, outcome: 'completed' },
      summary: { trigger: 'call_completed', source: 'digest', messageCount: 0 },
    });
    expect(req.body.summary.text).toBe(
      `Phone call with Ada Lovelace (member ${ada.memberId}): completed, 42 seconds.\nNo messages.`,
    );
    const got = await summary(chatId);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      kind: 'call',
      trigger: 'call_completed',
      call: { callSid: 'CA-SUM-1', durationSeconds: 42, outcome: 'completed' },
    });
    await sleep(500);
    expect((await summaries(chatId)).map((e) => e.type)).toEqual(['CallSummarized']);
    // call:summary is no chat:summary: the unfiltered chat:summary rule got nothing of this chat.
    expect(rx.received.filter((r) => r.body?.chat?.id === chatId && r.body.event === 'chat:summary')).toEqual(
      [],
    );
  });

  it('answers the summary to whoever may read the chat, and 404 to anyone else', async () => {
    const chatId = await webChat();
    await t.request('PUT', `/w/${wid}/chats/${chatId}`, { token: key, body: { paused: true } });
    await eventually(async () => (await summary(chatId)).status === 200, 'the pause summary');

    // The chat's member (a member token, no chats:read) reads its own chat's summary.
    expect((await summary(chatId, ada.token)).status).toBe(200);
    // A key with chats:read reads it.
    expect((await summary(chatId, await keyWithScopes(t, key, ['chats:read']))).status).toBe(200);
    // A narrow key (no chats:read, and an API key reaches no "own chat"): as if absent.
    const narrow = await summary(chatId, await keyWithScopes(t, key, ['members:read']));
    expect(narrow.status).toBe(404);
    expect(narrow.body.detail).toBe('Chat not found');
    // Another member of the workspace who takes no part in it.
    const outsider = await person(t, wid, key);
    expect((await summary(chatId, outsider.token)).status).toBe(404);
    // Another tenant, with its own workspace id or with this one.
    const other = await t.bootstrap('Elsewhere');
    expect(
      (await t.request('GET', `/w/${other.workspaceId}/chats/${chatId}/summary`, { token: other.apiKey }))
        .status,
    ).toBe(404);
    expect((await summary(chatId, other.apiKey)).status).toBe(404);
    // No credential, and ids that name nothing.
    expect((await t.request('GET', `/w/${wid}/chats/${chatId}/summary`)).status).toBe(401);
    expect((await t.request('GET', `/w/${wid}/chats/abc/summary`, { token: key })).status).toBe(404);
    expect((await summary(2_147_483_647)).status).toBe(404);
  });

  it('lists the route in the OpenAPI document with its scope and answers', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body;
    const op = doc.paths['/api/v2/w/{wid}/chats/{chatId}/summary']?.get;
    expect(op).toBeDefined();
    // The chat's own access: the same as GET /chats/{chatId}.
    expect(op['x-required-scope']).toBe(doc.paths['/api/v2/w/{wid}/chats/{chatId}'].get['x-required-scope']);
    expect(op['x-required-scope']).toMatch(/chats:read/);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '401', '403', '404']));
    expect(op.responses['200'].content['application/json'].schema.$ref).toMatch(/ChatSummaryResponse$/);
  });
});
