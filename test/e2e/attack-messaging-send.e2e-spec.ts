import { startTestApp, TestApp } from '../support/app';
import { keyWithScopes, signup } from '../support/identity-fixtures';
import { eventually } from '../support/processes';
import { startTwilioPeer, TwilioPeer, twilioServiceEnv } from '../support/twilio-peer';

const PUBLIC_BASE_URL = 'https://attack-send.example.test/api/v2';
const WORKSPACE_NUMBER = '+14155550400';

/**
 * Attack on send-assistant-message answering with the message built from its MessageSent
 * (not read back), and on the twilio package sending through the undici client: the
 * answer must be what a later GET shows, rights are checked as before, an Idempotency-Key
 * replay sends no second SMS, and the provider's permanent and transient errors fail or
 * retry as before (counted at the tests' Twilio peer).
 */
describe('Attack: send-assistant-message answered from its MessageSent, over the undici Twilio client (e2e)', () => {
  let peer: TwilioPeer;
  let t: TestApp;
  let wid: string;
  let key: string;
  let phoneId: number;
  let phones = 0;

  beforeAll(async () => {
    peer = await startTwilioPeer();
    t = await startTestApp({ env: { ...twilioServiceEnv(peer), PUBLIC_BASE_URL } });
    ({ workspaceId: wid, apiKey: key } = await t.bootstrap('Send Clinic'));
    phoneId = (
      await t.request('POST', `/w/${wid}/phone-numbers`, { token: key, body: { number: WORKSPACE_NUMBER } })
    ).body.id;
  });
  afterAll(async () => {
    peer.holdAnswers = undefined;
    await t.close();
    await peer.close();
  });

  const post = (path: string, body: unknown, token = key, headers?: Record<string, string>) =>
    t.request('POST', `/w/${wid}${path}`, { token, body, headers });
  const get = (path: string, token = key) => t.request('GET', `/w/${wid}${path}`, { token });
  const sentTo = (phone: string) => peer.messages.filter((m) => m.to === phone);
  const messagesSent = async (chatId: number) =>
    (await t.store.readStream(`chat-${chatId}`)).filter((e) => e.type === 'MessageSent');

  async function smsChat(consent = true): Promise<{ phone: string; chatId: number; memberId: number }> {
    const phone = `+1415555${String(4000 + ++phones)}`;
    const m = await signup(t, wid, key, { phone });
    if (consent)
      expect(
        (
          await t.request('PUT', `/w/${wid}/members/${m.member.id}`, {
            token: key,
            body: { notifySms: true },
          })
        ).status,
      ).toBe(200);
    const chat = await post('/chats', {
      channel: 'phone-sms',
      memberId: m.member.id,
      phoneNumberId: phoneId,
    });
    expect(chat.status).toBe(201);
    return { phone, chatId: chat.body.id, memberId: m.member.id };
  }

  it('answers with what a GET of the message then shows: web chat, human chat with several recipients, SMS held by the provider and by quiet hours', async () => {
    const patient = await signup(t, wid, key, { email: `patient-${Date.now()}@example.com` });
    const nurse = await signup(t, wid, key, { email: `nurse-${Date.now()}@example.com` });
    const aide = await signup(t, wid, key, { email: `aide-${Date.now()}@example.com` });

    // A web chat (no stream open: its delivery stays sent).
    const web = await post('/chats', { channel: 'web-chat', memberId: patient.member.id });
    const a = await post(`/chats/${web.body.id}/send-assistant-message`, { message: 'Hello there 👋' });
    expect(a.status).toBe(201);
    expect(a.headers.get('location')).toMatch(new RegExp(`/chats/${web.body.id}/messages/${a.body.id}$`));
    expect((await get(`/chats/${web.body.id}/messages/${a.body.id}`)).body).toEqual(a.body);

    // A human chat: its operator sends to the member and a participant, two deliveries.
    const human = await post('/chats', {
      channel: 'web-chat',
      memberId: patient.member.id,
      assistantKind: 'human',
      assistantMemberId: nurse.member.id,
      participants: [{ memberId: aide.member.id, role: 'contributor' }],
    });
    expect(human.status).toBe(201);
    const b = await post(
      `/chats/${human.body.id}/send-assistant-message`,
      { message: 'From the nurse' },
      nurse.token,
    );
    expect(b.status).toBe(201);
    expect(b.body.role).toBe('operator');
    expect(b.body.deliveries.map((d: { memberId: number }) => d.memberId)).toEqual(
      [patient.member.id, aide.member.id].sort((x, y) => x - y),
    );
    expect((await get(`/chats/${human.body.id}/messages/${b.body.id}`, nurse.token)).body).toEqual(b.body);
    expect((await get(`/chats/${human.body.id}/messages/${b.body.id}`)).body).toEqual(b.body);

    // An SMS whose provider answer is held: the GET sees it as the send wrote it.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    peer.holdAnswers = () => held;
    try {
      const sms = await smsChat();
      const c = await post(`/chats/${sms.chatId}/send-assistant-message`, {
        message: 'Ünïcode text, 2 segments? '.repeat(3),
      });
      expect(c.status).toBe(201);
      expect(c.body).toMatchObject({ status: 'sent', encoding: 'UCS-2', scheduledFor: null });
      await eventually(async () => sentTo(sms.phone).length === 1, 'the peer to get the SMS');
      expect((await get(`/chats/${sms.chatId}/messages/${c.body.id}`)).body).toEqual(c.body);
      release();
      const dispatched = await eventually(async () => {
        const m = await get(`/chats/${sms.chatId}/messages/${c.body.id}`);
        return m.body.deliveries[0].providerMessageId ? m.body : undefined;
      }, 'the dispatch');
      expect(dispatched.deliveries[0].providerMessageId).toBe(sentTo(sms.phone)[0].sid);
    } finally {
      peer.holdAnswers = undefined;
      release();
    }

    // Quiet hours now (UTC): the SMS is held, the answer shows when, as the GET does.
    const hhmm = (d: Date) => d.toISOString().slice(11, 16);
    const now = Date.now();
    const quiet = await t.request('PUT', `/w/${wid}`, {
      token: key,
      body: {
        settings: {
          timezone: 'UTC',
          smsQuietHours: { start: hhmm(new Date(now - 3600_000)), end: hhmm(new Date(now + 3600_000)) },
        },
      },
    });
    expect(quiet.status).toBe(200);
    try {
      const sms = await smsChat();
      const d = await post(`/chats/${sms.chatId}/send-assistant-message`, { message: 'Tomorrow at 9' });
      expect(d.status).toBe(201);
      expect(d.body.scheduledFor).not.toBeNull();
      expect(d.body.deliveries[0].scheduledFor).toBe(d.body.scheduledFor);
      expect((await get(`/chats/${sms.chatId}/messages/${d.body.id}`)).body).toEqual(d.body);
      expect(sentTo(sms.phone)).toEqual([]);
    } finally {
      await t.request('PUT', `/w/${wid}`, { token: key, body: { settings: { smsQuietHours: null } } });
    }
  });

  it('refuses those without the right as before (404 for a chat they may not see, 403 for one they may only read), writing and sending nothing', async () => {
    const sms = await smsChat();
    const owner = (await signup(t, wid, key, { phone: sms.phone })) as { token: string };
    const stranger = await signup(t, wid, key, { email: `stranger-${Date.now()}@example.com` });
    const reader = await keyWithScopes(t, key, ['chats:read']);
    const other = await t.bootstrap('Other Clinic');
    const path = `/chats/${sms.chatId}/send-assistant-message`;
    const before = peer.messageRequests;
    // The chat's own member takes part, but sends no assistant message.
    expect((await post(path, { message: 'x' }, owner.token)).status).toBe(403);
    expect((await post(path, { message: 'x' }, stranger.token)).status).toBe(404);
    expect((await post(path, { message: 'x' }, reader)).status).toBe(403);
    expect(
      (
        await t.request('POST', `/w/${other.workspaceId}${path}`, {
          token: other.apiKey,
          body: { message: 'x' },
        })
      ).status,
    ).toBe(404);
    expect(
      (await t.request('POST', `/w/${wid}${path}`, { token: other.apiKey, body: { message: 'x' } })).status,
    ).toBe(404);
    expect((await post(`/chats/2147483000/send-assistant-message`, { message: 'x' })).status).toBe(404);
    // Bad input: nothing written.
    expect((await post(path, { message: '   ' })).status).toBe(400);
    expect((await post(path, { message: 'a\u0000b' })).status).toBe(400);
    expect((await post(path, { message: 'x'.repeat(10_001) })).status).toBe(400);
    expect(await messagesSent(sms.chatId)).toEqual([]);
    await new Promise((r) => setTimeout(r, 300));
    expect(peer.messageRequests).toBe(before);
  });

  it('an Idempotency-Key replay answers the same message and sends no second SMS; ten at once send one', async () => {
    const sms = await smsChat();
    const path = `/chats/${sms.chatId}/send-assistant-message`;
    const first = await post(path, { message: 'Only once' }, key, { 'idempotency-key': 'send-once-1' });
    expect(first.status).toBe(201);
    await eventually(async () => sentTo(sms.phone).length === 1, 'the SMS');
    const replay = await post(path, { message: 'Only once' }, key, { 'idempotency-key': 'send-once-1' });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(replay.headers.get('location')).toBe(first.headers.get('location'));
    const burst = await Promise.all(
      Array.from({ length: 10 }, () =>
        post(path, { message: 'Burst' }, key, { 'idempotency-key': 'send-once-2' }),
      ),
    );
    const ok = burst.filter((r) => r.status === 201);
    for (const r of burst) expect([201, 409]).toContain(r.status);
    expect(new Set(ok.map((r) => r.body.id)).size).toBe(1);
    await eventually(async () => sentTo(sms.phone).length === 2, 'the burst SMS');
    await new Promise((r) => setTimeout(r, 1000));
    expect(sentTo(sms.phone).map((m) => m.body)).toEqual(['Only once', 'Burst']);
    expect((await messagesSent(sms.chatId)).map((e) => (e.data as { content: string }).content)).toEqual([
      'Only once',
      'Burst',
    ]);
  });

  it("a provider's permanent error fails the delivery at once; a transient one (5xx, 429) is retried and sent once", async () => {
    const permanent = await smsChat();
    let before = peer.messageRequests;
    peer.failNext.push({ status: 400, code: 21211 });
    const p = await post(`/chats/${permanent.chatId}/send-assistant-message`, { message: 'Bad number' });
    expect(p.status).toBe(201);
    const failed = await eventually(async () => {
      const m = await get(`/chats/${permanent.chatId}/messages/${p.body.id}`);
      return m.body.status === 'failed' ? m.body : undefined;
    }, 'the permanent failure');
    expect(failed).toMatchObject({ failureReason: 'provider_error:21211' });
    expect(failed.deliveries[0]).toMatchObject({ status: 'failed', failureReason: 'provider_error:21211' });
    await new Promise((r) => setTimeout(r, 2500));
    expect(peer.messageRequests - before).toBe(1);
    expect(sentTo(permanent.phone)).toEqual([]);

    const transient = await smsChat();
    before = peer.messageRequests;
    peer.failNext.push({ status: 503, code: 20503 }, { status: 429, code: 20429 });
    const s = await post(`/chats/${transient.chatId}/send-assistant-message`, { message: 'Try again' });
    expect(s.status).toBe(201);
    const sent = await eventually(
      async () => {
        const m = await get(`/chats/${transient.chatId}/messages/${s.body.id}`);
        return m.body.deliveries[0].providerMessageId ? m.body : undefined;
      },
      'the retried send',
      30_000,
    );
    expect(sent.deliveries[0]).toMatchObject({ status: 'sent', failureReason: null });
    expect(peer.messageRequests - before).toBe(3);
    expect(sentTo(transient.phone).map((m) => m.sid)).toEqual([sent.deliveries[0].providerMessageId]);
    const events = (await t.store.readStream(`chat-${transient.chatId}`)).map((e) => e.type);
    expect(events.filter((e) => e === 'MessageDispatched')).toHaveLength(1);
    expect(events).not.toContain('MessageFailed');
  });
});
