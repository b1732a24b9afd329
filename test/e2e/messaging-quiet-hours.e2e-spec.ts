import { getQueueToken } from '@nestjs/bullmq';
import type { Job, Queue } from 'bullmq';
import { startTestApp, TestApp } from '../support/app';
import { signup } from '../support/identity-fixtures';
import { eventually } from '../support/processes';
import { startTwilioPeer, TwilioPeer, twilioServiceEnv } from '../support/twilio-peer';

const PUBLIC_BASE_URL = 'https://quiet.example.test/api/v2';
const WORKSPACE_NUMBER = '+14155550400';

/** The wall-clock time `HH:MM:SS` of an instant in a zone. */
function localTime(ms: number, timeZone: string): string {
  return new Intl.DateTimeFormat('en-GB', {
    timeZone,
    hourCycle: 'h23',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).format(new Date(ms));
}

/**
 * Quiet hours (issue 11, item 14): `settings.smsQuietHours` holds assistant SMS inside the
 * window until its end, in the member's time zone or else the workspace's, as a delayed
 * job; the message shows `scheduledFor`, and goes out when due. A reply to the member's
 * own text of the last ten minutes is not held.
 */
describe('Messaging: SMS quiet hours (e2e)', () => {
  let peer: TwilioPeer;
  let t: TestApp;
  let wid: string;
  let key: string;
  let phoneId: number;
  let smsQueue: Queue;
  let phoneCounter = 0;

  beforeAll(async () => {
    peer = await startTwilioPeer();
    t = await startTestApp({
      env: {
        ...twilioServiceEnv(peer),
        PUBLIC_BASE_URL,
      },
    });
    ({ workspaceId: wid, apiKey: key } = await t.bootstrap('Night Owl Clinic'));
    phoneId = (
      await t.request('POST', `/w/${wid}/phone-numbers`, { token: key, body: { number: WORKSPACE_NUMBER } })
    ).body.id;
    smsQueue = t.app.get<Queue>(getQueueToken('sms'), { strict: false });
  });
  afterAll(async () => {
    await t.close();
    await peer.close();
  });

  const post = (path: string, body: unknown) => t.request('POST', `/w/${wid}${path}`, { token: key, body });
  const get = (path: string) => t.request('GET', `/w/${wid}${path}`, { token: key });
  const settings = (body: unknown) => t.request('PUT', `/w/${wid}`, { token: key, body: { settings: body } });
  const sentTo = (phone: string) => peer.messages.filter((m) => m.to === phone);

  async function smsChat(member: Record<string, unknown> = {}): Promise<{ phone: string; chatId: number }> {
    const phone = `+1415555${String(3000 + ++phoneCounter)}`;
    const signed = await signup(t, wid, key, { phone, ...member });
    const put = await t.request('PUT', `/w/${wid}/members/${signed.member.id}`, {
      token: key,
      body: { notifySms: true },
    });
    expect(put.status).toBe(200);
    const chat = await post('/chats', {
      channel: 'phone-sms',
      memberId: signed.member.id,
      phoneNumberId: phoneId,
    });
    expect(chat.status).toBe(201);
    return { phone, chatId: chat.body.id };
  }

  async function delayedJobOf(messageId: number): Promise<Job | undefined> {
    const jobs = await smsQueue.getJobs(['delayed']);
    return jobs.find((j) => (j.data as { messageId: number }).messageId === messageId);
  }

  it('refuses malformed quiet hours with a 400 naming the field, and changes nothing', async () => {
    const before = await get('');
    const cases: [unknown, RegExp][] = [
      [{ start: '25:00', end: '08:00' }, /^settings\.smsQuietHours\.start: must be a local time/],
      [{ start: '21:00', end: '8am' }, /^settings\.smsQuietHours\.end: must be a local time/],
      [{ start: '21:00' }, /^settings\.smsQuietHours\.end: /],
      [{ start: '21:00', end: '21:00' }, /^settings\.smsQuietHours\.end: must differ from start/],
      [{ start: '21:00', end: '08:00', zone: 'UTC' }, /smsQuietHours\.zone/],
      ['21:00-08:00', /^settings\.smsQuietHours/],
    ];
    for (const [value, detail] of cases) {
      const res = await settings({ smsQuietHours: value });
      expect({ value, status: res.status }).toEqual({ value, status: 400 });
      expect(res.body.detail).toMatch(detail);
    }
    const after = await get('');
    expect(after.body.settings).toEqual(before.body.settings);
    expect(after.headers.get('etag')).toBe(before.headers.get('etag'));
  });

  it('holds an assistant SMS inside the window until its end: a delayed job, scheduledFor, sent when due', async () => {
    const now = Date.now();
    // Far enough ahead that a slow machine still finds the job waiting, near enough to see it fire.
    const end = now + 12_000;
    const window = { start: localTime(now - 3_600_000, 'UTC'), end: localTime(end, 'UTC') };
    expect((await settings({ timezone: 'UTC', smsQuietHours: window })).status).toBe(200);
    expect((await get('')).body.settings.smsQuietHours).toEqual(window);
    const { phone, chatId } = await smsChat();

    const sent = await post(`/chats/${chatId}/send-assistant-message`, { message: 'Your results are ready' });
    expect(sent.status).toBe(201);
    const expectedAt = new Date(Math.floor(end / 1000) * 1000).toISOString();

    const message = (await get(`/chats/${chatId}/messages/${sent.body.id}`)).body;
    expect(message).toMatchObject({ status: 'sent', failureReason: null, scheduledFor: expectedAt });
    expect(message.deliveries).toEqual([
      expect.objectContaining({ status: 'sent', scheduledFor: expectedAt }),
    ]);
    // The send answers with the message as it wrote it, which is what the read model holds
    // while the delivery is held.
    expect(sent.body).toEqual(message);
    const listed = (await get(`/chats/${chatId}/messages`)).body.items;
    expect(listed.find((m: { id: number }) => m.id === sent.body.id).scheduledFor).toBe(expectedAt);

    const job = await eventually(() => delayedJobOf(sent.body.id), 'the delayed delivery job');
    expect(job.timestamp + (job.opts.delay ?? 0)).toBeGreaterThanOrEqual(Date.parse(expectedAt) - 50);
    expect(job.timestamp + (job.opts.delay ?? 0)).toBeLessThanOrEqual(Date.parse(expectedAt) + 50);
    expect(job.opts.delay).toBeGreaterThan(0);
    expect(sentTo(phone)).toEqual([]);

    const delivered = await eventually(async () => sentTo(phone)[0], 'the held SMS to go out', 30_000);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(expectedAt));
    expect(delivered.body).toBe('Your results are ready');
    const after = await eventually(async () => {
      const m = (await get(`/chats/${chatId}/messages/${sent.body.id}`)).body;
      return m.deliveries[0].providerMessageId ? m : undefined;
    }, 'the provider id');
    expect(after).toMatchObject({ status: 'sent', scheduledFor: expectedAt });
    expect(after.deliveries[0].providerMessageId).toBe(delivered.sid);
    expect(sentTo(phone)).toHaveLength(1);
  }, 60_000);

  it('answers a member who texted within ten minutes at once, even inside the window', async () => {
    const now = Date.now();
    const window = {
      start: localTime(now - 3_600_000, 'UTC'),
      end: localTime(now + 3_600_000, 'UTC'),
    };
    expect((await settings({ timezone: 'UTC', smsQuietHours: window })).status).toBe(200);
    const { phone, chatId } = await smsChat();
    const inbound = await peer.webhook(
      `${PUBLIC_BASE_URL}/providers/twilio/sms/inbound`,
      t.baseUrl,
      PUBLIC_BASE_URL,
      {
        AccountSid: peer.accountSid,
        MessageSid: `SMquiet${now}`,
        From: phone,
        To: WORKSPACE_NUMBER,
        Body: 'Is it ready?',
      },
    );
    expect(inbound.status).toBeLessThan(300);
    const reply = await post(`/chats/${chatId}/send-assistant-message`, { message: 'Yes, it is ready' });
    expect(reply.status).toBe(201);
    expect((await get(`/chats/${chatId}/messages/${reply.body.id}`)).body.scheduledFor).toBeNull();
    const out = await eventually(async () => sentTo(phone)[0], 'the reply to go out at once', 10_000);
    expect(out.body).toBe('Yes, it is ready');
    const events = await t.store.readStream(`chat-${chatId}`);
    const sentEvent = events.find((e) => e.type === 'MessageSent')!;
    expect(sentEvent.data).not.toHaveProperty('scheduledFor');

    // Another member of the same workspace, who wrote nothing, is held.
    const other = await smsChat();
    const held = await post(`/chats/${other.chatId}/send-assistant-message`, { message: 'Reminder' });
    expect((await get(`/chats/${other.chatId}/messages/${held.body.id}`)).body.scheduledFor).toEqual(
      expect.any(String),
    );
    expect(await eventually(() => delayedJobOf(held.body.id), 'its delayed job')).toBeTruthy();
  });

  it("reads the window in the workspace's time zone", async () => {
    const now = Date.now();
    // A window around now in Tokyo's local time (UTC+9, no DST): 9 hours from the same UTC clock time.
    const tokyo = {
      start: localTime(now - 1_800_000, 'Asia/Tokyo'),
      end: localTime(now + 1_800_000, 'Asia/Tokyo'),
    };
    expect((await settings({ timezone: 'Asia/Tokyo', smsQuietHours: tokyo })).status).toBe(200);
    const held = await smsChat();
    const m1 = await post(`/chats/${held.chatId}/send-assistant-message`, { message: 'Held in Tokyo' });
    expect((await get(`/chats/${held.chatId}/messages/${m1.body.id}`)).body.scheduledFor).toBe(
      new Date(Math.floor((now + 1_800_000) / 1000) * 1000).toISOString(),
    );

    // The same clock times read in UTC are nine hours away from now: not quiet.
    expect((await settings({ timezone: 'UTC' })).status).toBe(200);
    const free = await smsChat();
    const m2 = await post(`/chats/${free.chatId}/send-assistant-message`, { message: 'Sent in UTC' });
    expect((await get(`/chats/${free.chatId}/messages/${m2.body.id}`)).body.scheduledFor).toBeNull();
    await eventually(async () => sentTo(free.phone)[0], 'the SMS to go out at once', 10_000);
    expect(sentTo(held.phone)).toEqual([]);
  });

  it("reads the window in the member's own time zone before the workspace's", async () => {
    const now = Date.now();
    // Quiet around now in Tokyo; the workspace runs on UTC, where the same clock times are far from now.
    const tokyo = {
      start: localTime(now - 1_800_000, 'Asia/Tokyo'),
      end: localTime(now + 1_800_000, 'Asia/Tokyo'),
    };
    expect((await settings({ timezone: 'UTC', smsQuietHours: tokyo })).status).toBe(200);
    const inTokyo = await smsChat();
    const member = (await get(`/chats/${inTokyo.chatId}`)).body.memberId as number;
    const bad = await t.request('PUT', `/w/${wid}/members/${member}`, {
      token: key,
      body: { timezone: 'Mars/Olympus' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/^timezone: must be an IANA time zone/);
    const put = await t.request('PUT', `/w/${wid}/members/${member}`, {
      token: key,
      body: { timezone: 'Asia/Tokyo' },
    });
    expect(put.status).toBe(200);
    expect(put.body.timezone).toBe('Asia/Tokyo');
    const m1 = await post(`/chats/${inTokyo.chatId}/send-assistant-message`, { message: 'Held for Tokyo' });
    expect((await get(`/chats/${inTokyo.chatId}/messages/${m1.body.id}`)).body.scheduledFor).toBe(
      new Date(Math.floor((now + 1_800_000) / 1000) * 1000).toISOString(),
    );

    // A member without a zone of their own gets the workspace's (UTC): not quiet now.
    const inUtc = await smsChat();
    const m2 = await post(`/chats/${inUtc.chatId}/send-assistant-message`, { message: 'Sent in UTC' });
    expect((await get(`/chats/${inUtc.chatId}/messages/${m2.body.id}`)).body.scheduledFor).toBeNull();
    await eventually(async () => sentTo(inUtc.phone)[0], 'the SMS to go out at once', 10_000);

    // Clearing the member's zone (null) falls back to the workspace's.
    const cleared = await t.request('PUT', `/w/${wid}/members/${member}`, {
      token: key,
      body: { timezone: null },
    });
    expect(cleared.body.timezone).toBeNull();
    const m3 = await post(`/chats/${inTokyo.chatId}/send-assistant-message`, { message: 'Now in UTC' });
    expect((await get(`/chats/${inTokyo.chatId}/messages/${m3.body.id}`)).body.scheduledFor).toBeNull();
    await eventually(async () => sentTo(inTokyo.phone)[0], 'the SMS to go out', 10_000);
    expect(sentTo(inTokyo.phone).map((m) => m.body)).toEqual(['Now in UTC']);
  });

  it('sends at once when quiet hours are removed (null)', async () => {
    expect((await settings({ smsQuietHours: null })).status).toBe(200);
    expect((await get('')).body.settings.smsQuietHours).toBeNull();
    const { phone, chatId } = await smsChat();
    const m = await post(`/chats/${chatId}/send-assistant-message`, { message: 'Anytime' });
    expect((await get(`/chats/${chatId}/messages/${m.body.id}`)).body.scheduledFor).toBeNull();
    await eventually(async () => sentTo(phone)[0], 'the SMS to go out', 10_000);
  });
});
