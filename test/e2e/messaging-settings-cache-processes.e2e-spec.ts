import { createTestDatabase, TestDatabase } from '../support/database';
import {
  bootstrapWithCli,
  eventually,
  reportErrorsAndKillAll,
  serviceEnv,
  ServiceProcess,
  startAllAndApi,
} from '../support/processes';
import { clearRedisPrefix, testRedisPrefix } from '../support/redis';
import { startTwilioPeer, TwilioPeer, twilioServiceEnv } from '../support/twilio-peer';

/** The wall-clock time `HH:MM:SS` of an instant in UTC. */
function utcTime(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19);
}

/**
 * Messaging keeps three facts per process in core's AuthCache: a send's workspace quiet hours
 * (WorkspaceSendSettings, read where the send is taken), an SMS delivery's sender number
 * (DeliveryService, read where the worker runs) and the workspace number an inbound text was
 * sent to (InboundMessages, read where the webhook is answered). Two processes on one database: A
 * (ROLE=all) runs the projections and the workers, B (ROLE=api) only serves requests.
 * Entries live 60 s here, so a change honoured within a second comes from the
 * invalidation its event causes (the checkpoint notice of the projection that applied it),
 * not from entries ageing out.
 */
describe('Messaging: quiet hours and sender numbers cached per process, invalidated across processes (e2e)', () => {
  let db: TestDatabase;
  const prefix = testRedisPrefix();
  let urlA: string;
  let urlB: string;
  let apiKey: string;
  let wid: string;
  let processes: ServiceProcess[] = [];
  let peer: TwilioPeer;

  beforeAll(async () => {
    db = await createTestDatabase();
    peer = await startTwilioPeer();
    const env = serviceEnv(db.url, prefix, {
      AUTH_CACHE_TTL_MS: '60000',
      ...twilioServiceEnv(peer),
      PUBLIC_BASE_URL: 'https://cache.example.test/api/v2',
    });
    const { all: a, api: b } = await startAllAndApi(env, ['msg-all-a', 'msg-api-b']);
    urlA = a.url;
    urlB = b.url;
    processes = [a.proc, b.proc];
    ({ apiKey, workspaceId: wid } = await bootstrapWithCli(env, 'Quiet Cache', 'quiet-cache@example.com'));
  }, 180_000);

  afterAll(async () => {
    await reportErrorsAndKillAll(processes);
    await peer?.close();
    await clearRedisPrefix(prefix);
    await db?.drop();
  });

  async function call(
    base: string,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${base}/w/${wid}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }

  /** A member with SMS consent and a phone-sms chat from `phoneNumberId`, made through A. */
  async function smsChat(phone: string, phoneNumberId: number): Promise<number> {
    const member = await call(urlA, 'POST', '/create-signup', { member: { phone } });
    expect([200, 201]).toContain(member.status);
    const memberId = (member.body.member as { id: number }).id;
    expect((await call(urlA, 'PUT', `/members/${memberId}`, { notifySms: true })).status).toBe(200);
    const chat = await call(urlA, 'POST', '/chats', { channel: 'phone-sms', memberId, phoneNumberId });
    expect(chat.status).toBe(201);
    return chat.body.id as number;
  }

  it('a quiet window set and lifted through A holds and frees the next send through B', async () => {
    const phone = await call(urlA, 'POST', '/phone-numbers', { number: '+14155550777' });
    expect(phone.status).toBe(201);
    const chat = { body: { id: await smsChat('+14155553777', phone.body.id as number) } };
    const send = () =>
      call(urlB, 'POST', `/chats/${chat.body.id as number}/send-assistant-message`, { message: 'Hello' });

    // B reads the settings (no quiet hours) and keeps them.
    for (let i = 0; i < 2; i++) {
      const sent = await send();
      expect(sent.status).toBe(201);
      expect(sent.body.scheduledFor ?? null).toBeNull();
    }

    const now = Date.now();
    const window = { start: utcTime(now - 3_600_000), end: utcTime(now + 3_600_000) };
    expect(
      (await call(urlA, 'PUT', '', { settings: { timezone: 'UTC', smsQuietHours: window } })).status,
    ).toBe(200);
    const held = await eventually(
      async () => {
        const sent = await send();
        expect(sent.status).toBe(201);
        return sent.body.scheduledFor ?? undefined;
      },
      'process B to hold a send inside the new quiet window',
      1000,
      20,
    );
    expect(Date.parse(held as string)).toBeGreaterThan(now);
    const again = await send();
    expect(again.body.scheduledFor).toBe(held);

    expect((await call(urlA, 'PUT', '', { settings: { smsQuietHours: null } })).status).toBe(200);
    await eventually(
      async () => {
        const sent = await send();
        expect(sent.status).toBe(201);
        return (sent.body.scheduledFor ?? null) === null;
      },
      'process B to send at once after the window was lifted',
      1000,
      20,
    );
  });

  it("a sender number changed or deleted through B is what A's worker sends from next, or fails on", async () => {
    const phone = await call(urlB, 'POST', '/phone-numbers', { number: '+14155550778' });
    expect(phone.status).toBe(201);
    const phoneId = phone.body.id as number;
    const chatId = await smsChat('+14155553778', phoneId);
    const sendAndDeliver = async (message: string) => {
      const sent = await call(urlB, 'POST', `/chats/${chatId}/send-assistant-message`, { message });
      expect(sent.status).toBe(201);
      return eventually(async () => {
        const got = await call(urlB, 'GET', `/chats/${chatId}/messages/${sent.body.id as number}`);
        return got.body.status === 'sent' && !peer.messages.some((m) => m.body === message)
          ? undefined
          : got.body;
      }, `"${message}" to be sent or to fail`);
    };
    // A's worker reads the number and keeps it.
    await sendAndDeliver('first');
    await sendAndDeliver('second');
    expect(peer.messages.filter((m) => m.to === '+14155553778').map((m) => m.from)).toEqual([
      '+14155550778',
      '+14155550778',
    ]);

    expect((await call(urlB, 'PUT', `/phone-numbers/${phoneId}`, { number: '+14155550779' })).status).toBe(
      200,
    );
    await sendAndDeliver('after the change');
    expect(peer.messages.find((m) => m.body === 'after the change')?.from).toBe('+14155550779');

    expect((await call(urlB, 'DELETE', `/phone-numbers/${phoneId}`)).status).toBe(204);
    const failed = await eventually(async () => {
      const m = await sendAndDeliver('after the deletion');
      return m.status === 'failed' ? m : undefined;
    }, 'the send after the deletion to fail');
    expect(failed.failureReason).toBe('no_sender');
    expect(peer.messages.some((m) => m.body === 'after the deletion')).toBe(false);
  });

  it('a workspace number changed or deleted through A takes no more texts in B', async () => {
    const publicBase = 'https://cache.example.test/api/v2';
    const text = (to: string, body: string, sid: string) =>
      peer.webhook(`${publicBase}/providers/twilio/sms/inbound`, urlB, publicBase, {
        AccountSid: peer.accountSid,
        MessageSid: sid,
        From: '+14155553781',
        To: to,
        Body: body,
      });
    const phone = await call(urlA, 'POST', '/phone-numbers', { number: '+14155550781' });
    expect(phone.status).toBe(201);
    const phoneId = phone.body.id as number;
    const chatId = await smsChat('+14155553781', phoneId);
    const memberId = ((await call(urlA, 'GET', `/chats/${chatId}`)).body.memberId as number) ?? 0;
    // A second number with its own chat of the same member: what B records there shows
    // that B has answered the texts sent before.
    const witness = await call(urlA, 'POST', '/phone-numbers', { number: '+14155550783' });
    expect(witness.status).toBe(201);
    const witnessChat = await call(urlA, 'POST', '/chats', {
      channel: 'phone-sms',
      memberId,
      phoneNumberId: witness.body.id as number,
    });
    expect(witnessChat.status).toBe(201);
    const contents = async (id: number) =>
      ((await call(urlB, 'GET', `/chats/${id}/messages`)).body.items as { content: string }[]).map(
        (m) => m.content,
      );
    const recorded = (id: number, body: string) =>
      eventually(async () => (await contents(id)).includes(body) || undefined, `"${body}" in chat ${id}`);

    // B reads the number and keeps it.
    expect((await text('+14155550781', 'one', 'SMcache0001')).status).toBe(200);
    expect((await text('+14155550781', 'two', 'SMcache0002')).status).toBe(200);
    await recorded(chatId, 'two');

    expect((await call(urlA, 'PUT', `/phone-numbers/${phoneId}`, { number: '+14155550782' })).status).toBe(
      200,
    );
    await new Promise((r) => setTimeout(r, 500));
    expect((await text('+14155550781', 'to the old number', 'SMcache0003')).status).toBe(200);
    expect((await text('+14155550782', 'to the new number', 'SMcache0004')).status).toBe(200);
    await recorded(chatId, 'to the new number');
    expect(await contents(chatId)).not.toContain('to the old number');

    expect((await call(urlA, 'DELETE', `/phone-numbers/${phoneId}`)).status).toBe(204);
    await new Promise((r) => setTimeout(r, 500));
    expect((await text('+14155550782', 'after the deletion', 'SMcache0005')).status).toBe(200);
    expect((await text('+14155550783', 'witness', 'SMcache0006')).status).toBe(200);
    await recorded(witnessChat.body.id as number, 'witness');
    expect(await contents(chatId)).not.toContain('after the deletion');
    expect(await contents(witnessChat.body.id as number)).toEqual(['witness']);
  });
});
