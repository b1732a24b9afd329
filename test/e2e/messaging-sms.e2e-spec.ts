import { Client } from 'pg';
import type { StoredEvent } from '../../src/core/event-store/event-store.port';
import { startTestApp, TestApp } from '../support/app';
import { signup } from '../support/identity-fixtures';
import { eventually } from '../support/processes';
import { startTwilioPeer, TwilioPeer, twilioServiceEnv } from '../support/twilio-peer';

const PUBLIC_BASE_URL = 'https://messaging.example.test/api/v2';
const WORKSPACE_NUMBER = '+14155550300';

/**
 * SMS through the Twilio adapter against a local peer speaking Twilio's REST API and
 * sending signed webhooks: consent, delivery and its status callbacks (forward only),
 * keywords STOP / START / HELP end to end, forged signatures.
 */
describe('Messaging: SMS over the Twilio-compatible provider (e2e)', () => {
  let peer: TwilioPeer;
  let t: TestApp;
  let wid: string;
  let key: string;
  let phoneId: number;

  beforeAll(async () => {
    peer = await startTwilioPeer();
    t = await startTestApp({
      env: {
        ...twilioServiceEnv(peer),
        PUBLIC_BASE_URL,
        // Longer than the test below waits for the inbound webhook's answer.
        READ_YOUR_WRITES_TIMEOUT_MS: '30000',
        // While the tests below hold every projection back, each subscriber with work
        // waits on a connection of its own: the pool must outnumber them.
        DATABASE_POOL_SIZE: '20',
      },
    });
    ({ workspaceId: wid, apiKey: key } = await t.bootstrap('Sunrise Clinic'));
    phoneId = (
      await t.request('POST', `/w/${wid}/phone-numbers`, { token: key, body: { number: WORKSPACE_NUMBER } })
    ).body.id;
  });
  afterAll(async () => {
    await t.close();
    await peer.close();
  });

  const post = (path: string, body: unknown) => t.request('POST', `/w/${wid}${path}`, { token: key, body });
  const get = (path: string) => t.request('GET', `/w/${wid}${path}`, { token: key });
  const sentTo = (phone: string) => peer.messages.filter((m) => m.to === phone);
  const inbound = (from: string, body: string, sid: string, signature?: string) =>
    peer.webhook(
      `${PUBLIC_BASE_URL}/providers/twilio/sms/inbound`,
      t.baseUrl,
      PUBLIC_BASE_URL,
      { AccountSid: peer.accountSid, MessageSid: sid, From: from, To: WORKSPACE_NUMBER, Body: body },
      signature,
    );
  /**
   * What a webhook request appended itself (the delivery worker's events share its correlation
   * id), once `count` of them are readable: the inbound webhook answers without waiting for the
   * store's readers to pass its appends (it skips read-your-writes).
   */
  const appendedBy = (res: Response, count: number) =>
    eventually(async () => {
      const events = (await t.eventsOf({ requestId: res.headers.get('x-request-id')! } as never)).filter(
        (e) => !e.metadata.causationId,
      );
      return events.length >= count ? events : undefined;
    }, `${count} events appended by the webhook`);
  const delivery = async (chatId: number, messageId: number) =>
    (await get(`/chats/${chatId}/messages/${messageId}`)).body.deliveries[0] as {
      status: string;
      failureReason: string | null;
      providerMessageId: string | null;
    };

  async function smsChat(phone: string, notifySms: boolean): Promise<{ memberId: number; chatId: number }> {
    const member = await signup(t, wid, key, { phone });
    if (notifySms)
      await t.request('PUT', `/w/${wid}/members/${member.member.id}`, { token: key, body: { notifySms } });
    const chat = await post('/chats', {
      channel: 'phone-sms',
      memberId: member.member.id,
      phoneNumberId: phoneId,
    });
    return { memberId: member.member.id, chatId: chat.body.id };
  }

  it('sends nothing to a member without consent: the delivery fails with no_consent', async () => {
    const { chatId } = await smsChat('+14155552001', false);
    const sent = await post(`/chats/${chatId}/send-assistant-message`, { message: 'Hello' });
    expect(sent.status).toBe(201);
    const d = await eventually(async () => {
      const x = await delivery(chatId, sent.body.id);
      return x.status === 'failed' ? x : undefined;
    }, 'the delivery to fail');
    expect(d.failureReason).toBe('no_consent');
    const m = await get(`/chats/${chatId}/messages/${sent.body.id}`);
    expect(m.body).toMatchObject({ status: 'failed', failureReason: 'no_consent' });
    expect(sentTo('+14155552001')).toEqual([]);
  });

  it('sends through the REST API with status callbacks, and moves status forward only', async () => {
    const { chatId } = await smsChat('+14155552002', true);
    const sent = await post(`/chats/${chatId}/send-assistant-message`, {
      message: 'Your appointment is at 3pm',
    });
    const message = await eventually(async () => sentTo('+14155552002')[0], 'the peer to receive the SMS');
    expect(message).toMatchObject({
      from: WORKSPACE_NUMBER,
      body: 'Your appointment is at 3pm',
      username: peer.accountSid,
      password: peer.authToken,
    });
    expect(message.statusCallback).toMatch(
      new RegExp(`^${PUBLIC_BASE_URL.replace(/\./g, '\\.')}/providers/twilio/sms/status\\?chatId=${chatId}&`),
    );
    const dispatched = await eventually(async () => {
      const d = await delivery(chatId, sent.body.id);
      return d.providerMessageId ? d : undefined;
    }, 'the provider id to be recorded');
    expect(dispatched).toMatchObject({ status: 'sent', providerMessageId: message.sid });

    // Twilio's intermediate statuses change nothing; delivered ends it.
    expect((await peer.status(message, t.baseUrl, PUBLIC_BASE_URL, 'sent')).status).toBe(204);
    expect((await delivery(chatId, sent.body.id)).status).toBe('sent');
    const delivered = await peer.status(message, t.baseUrl, PUBLIC_BASE_URL, 'delivered');
    expect(delivered.status).toBe(204);
    const d = await delivery(chatId, sent.body.id);
    expect(d.status).toBe('delivered');
    const events = await t.store.readStream(`chat-${chatId}`);
    expect(events.map((e) => e.type)).toEqual([
      'ChatCreated',
      'MessageSent',
      'MessageDispatched',
      'MessageDelivered',
    ]);

    // Out of order: a late "sent" or "undelivered" never moves it back.
    await peer.status(message, t.baseUrl, PUBLIC_BASE_URL, 'sending');
    await peer.status(message, t.baseUrl, PUBLIC_BASE_URL, 'undelivered', '30005');
    expect(await delivery(chatId, sent.body.id)).toMatchObject({ status: 'delivered', failureReason: null });
    expect((await t.store.readStream(`chat-${chatId}`)).length).toBe(4);
    expect(sentTo('+14155552002')).toHaveLength(1);
  });

  it('fans out to every consenting participant, once even when the client retries its POST', async () => {
    const { memberId, chatId } = await smsChat('+14155552010', true);
    const supervisor = await signup(t, wid, key, { phone: '+14155552011' });
    await t.request('PUT', `/w/${wid}/members/${supervisor.member.id}`, {
      token: key,
      body: { notifySms: true },
    });
    const chat = await post('/chats', {
      channel: 'phone-sms',
      memberId,
      phoneNumberId: phoneId,
      participants: [{ memberId: supervisor.member.id, role: 'supervisor' }],
    });
    expect(chat.status).toBe(201);
    const send = () =>
      t.request('POST', `/w/${wid}/chats/${chat.body.id}/send-assistant-message`, {
        token: key,
        body: { message: 'Team update' },
        headers: { 'idempotency-key': `fan-out-${chatId}` },
      });
    const [first, second] = [await send(), await send()];
    expect(first.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body.id).toBe(first.body.id);
    await eventually(
      async () => sentTo('+14155552010').length === 1 && sentTo('+14155552011').length === 1,
      'one SMS to each participant',
    );
    await new Promise((r) => setTimeout(r, 500));
    expect(peer.messages.filter((m) => m.body === 'Team update')).toHaveLength(2);
  });

  it('records a failed status callback with the provider error', async () => {
    const { chatId } = await smsChat('+14155552003', true);
    const sent = await post(`/chats/${chatId}/send-assistant-message`, { message: 'Ping' });
    const message = await eventually(async () => sentTo('+14155552003')[0], 'the peer to receive the SMS');
    await eventually(async () => (await delivery(chatId, sent.body.id)).providerMessageId, 'the provider id');
    await peer.status(message, t.baseUrl, PUBLIC_BASE_URL, 'undelivered', '30003');
    await peer.status(message, t.baseUrl, PUBLIC_BASE_URL, 'delivered');
    expect(await delivery(chatId, sent.body.id)).toMatchObject({
      status: 'failed',
      failureReason: 'provider_error:30003',
    });
  });

  it('refuses webhooks with a forged or missing signature (403) and records nothing', async () => {
    const before = (await t.store.readAll({ maxCount: 100_000 })).length;
    const forged = await inbound('+14155552004', 'hello', 'SMforged1', 'bm90IGEgc2lnbmF0dXJl');
    expect(forged.status).toBe(403);
    expect(((await forged.json()) as { detail: string }).detail).toMatch(/X-Twilio-Signature/);
    // A signature over other fields (a tampered body) is as bad as none.
    const message = {
      AccountSid: peer.accountSid,
      MessageSid: 'SMforged2',
      From: '+14155552004',
      To: WORKSPACE_NUMBER,
      Body: 'hi',
    };
    const twilio = await import('twilio');
    const otherSig = twilio.default.getExpectedTwilioSignature(
      peer.authToken,
      `${PUBLIC_BASE_URL}/providers/twilio/sms/inbound`,
      {
        ...message,
        Body: 'something else',
      },
    );
    expect((await inbound('+14155552004', 'hi', 'SMforged2', otherSig)).status).toBe(403);
    const none = await fetch(`${t.baseUrl}/providers/twilio/sms/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(message).toString(),
    });
    expect(none.status).toBe(403);
    expect((await t.store.readAll({ maxCount: 100_000 })).length).toBe(before);
    // Form bodies open up on the provider routes only: every other route stays JSON-only.
    const form = await fetch(`${t.baseUrl}/w/${wid}/chats`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${key}` },
      body: 'channel=web-chat',
    });
    expect(form.status).toBe(415);
  });

  it('handles STOP, START and HELP end to end', async () => {
    const phone = '+14155552005';
    const { memberId, chatId } = await smsChat(phone, true);

    const stop = await inbound(phone, ' Stop ', 'SMinbound0001');
    expect(stop.status).toBe(200);
    expect(stop.headers.get('content-type')).toMatch(/text\/xml/);
    const stopEvents = await appendedBy(stop, 4);
    expect(stopEvents.map((e) => e.type)).toEqual([
      'MessageReceived',
      'MemberUpdated',
      'MemberOptedOutOfSms',
      'MessageSent',
    ]);
    expect(stopEvents[0]).toMatchObject({
      streamName: `chat-${chatId}`,
      data: { source: 'sms', content: ' Stop ' },
    });
    expect(stopEvents[1].data).toMatchObject({ memberId, changes: { notifySms: false } });
    expect(stopEvents[2].data).toMatchObject({ memberId, keyword: 'STOP' });
    expect(stopEvents[3].data).toMatchObject({
      role: 'system',
      recipientMemberIds: [memberId],
      keywordReply: true,
    });
    // The confirmation goes out once, even though the member just opted out.
    const confirmation = await eventually(async () => sentTo(phone)[0], 'the STOP confirmation');
    expect(confirmation.body).toMatch(/^Sunrise Clinic: you are unsubscribed/);
    // Twilio retrying the same webhook records nothing and replies nothing again.
    const retry = await inbound(phone, ' Stop ', 'SMinbound0001');
    expect(retry.status).toBe(200);

    // After STOP nothing reaches the member, even once an operator sets notifySms again.
    await t.request('PUT', `/w/${wid}/members/${memberId}`, { token: key, body: { notifySms: true } });
    // That PUT waited for the event log to pass its own event, so for every event before it.
    expect(await appendedBy(retry, 0)).toEqual([]);
    const blocked = await post(`/chats/${chatId}/send-assistant-message`, { message: 'Are you there?' });
    const failed = await eventually(async () => {
      const d = await delivery(chatId, blocked.body.id);
      return d.status === 'failed' ? d : undefined;
    }, 'the blocked delivery to fail');
    expect(failed.failureReason).toBe('opted_out');

    const help = await inbound(phone, 'help', 'SMinbound0002');
    expect(help.status).toBe(200);
    const helpEvents = await appendedBy(help, 2);
    expect(helpEvents.map((e) => e.type)).toEqual(['MessageReceived', 'MessageSent']);
    await eventually(async () => sentTo(phone).length === 2, 'the HELP reply');
    expect(sentTo(phone)[1].body).toMatch(/^Sunrise Clinic: reply STOP to unsubscribe/);

    const start = await inbound(phone, 'START', 'SMinbound0003');
    const startEvents = await appendedBy(start, 3);
    // notifySms was set back by the operator: only the opt-in is recorded.
    expect(startEvents.map((e) => e.type)).toEqual(['MessageReceived', 'MemberOptedInToSms', 'MessageSent']);
    await eventually(async () => sentTo(phone).length === 3, 'the START confirmation');
    const again = await post(`/chats/${chatId}/send-assistant-message`, { message: 'Welcome back' });
    await eventually(async () => sentTo(phone).length === 4, 'the message after START');
    expect(sentTo(phone)[3].body).toBe('Welcome back');
    expect(sentTo(phone).map((m) => m.body)).not.toContain('Are you there?');
    await eventually(
      async () => (await delivery(chatId, again.body.id)).providerMessageId,
      'the provider id',
    );
  });

  /**
   * Holds every projection back before its batch begins: a batch opens by writing its
   * checkpoint row, which waits for this lock. The lock takes no transaction id, so the
   * event store's horizon stays open and the reactors keep reading: MessageSent still
   * becomes a delivery job (its reactor's own checkpoint write then waits too), while
   * identity's `members` and this room's `sms_opt_outs` stay as they were. (A lock on a
   * read-model table would hold a projection mid-batch with a transaction id, stalling
   * every reader of the store, the delivery reactor included.)
   */
  async function holdProjections(): Promise<{ holder: Client; release: () => Promise<void> }> {
    const holder = new Client({ connectionString: t.database.url });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE subscriber_checkpoints IN SHARE MODE');
    return {
      holder,
      release: async () => {
        await holder.query('ROLLBACK');
        await holder.end();
      },
    };
  }

  /** Events of `stream` once one of them satisfies `found`. */
  const streamOnce = (stream: string, found: (e: StoredEvent) => boolean, what: string, timeoutMs?: number) =>
    eventually(
      async () => {
        const events = await t.store.readStream(stream);
        return events.some(found) ? events : undefined;
      },
      what,
      timeoutMs,
    );

  /** The first outcome the delivery worker recorded for the message `content` in the chat's stream. */
  const outcomeOf = (chatId: number, content: string) =>
    eventually(async () => {
      const events = await t.store.readStream(`chat-${chatId}`);
      const sent = events.find(
        (e) => e.type === 'MessageSent' && (e.data as { content: string }).content === content,
      );
      if (!sent) return undefined;
      const { messageId } = sent.data as { messageId: number };
      const outcome = events.find(
        (e) =>
          ['MessageDispatched', 'MessageFailed'].includes(e.type) &&
          (e.data as { messageId: number }).messageId === messageId,
      );
      return outcome && { sent, outcome };
    }, `the delivery of "${content}" to be decided`);

  it('sends nothing after a STOP the read models have not seen yet: failed, opted_out', async () => {
    const phone = '+14155552009';
    const { memberId, chatId } = await smsChat(phone, true);
    const { holder, release } = await holdProjections();
    let pending: ReturnType<typeof post> | undefined;
    let stop: ReturnType<typeof inbound> | undefined;
    try {
      // Not awaited: the webhook records the text, waits for the read models to pass it
      // before recording the opt-out (read-your-writes, given up after this file's 30 s
      // READ_YOUR_WRITES_TIMEOUT_MS), then waits again before its confirmation.
      stop = inbound(phone, 'STOP', 'SMstoprace0001');
      const memberEvents = await streamOnce(
        `member-${memberId}`,
        (e) => e.type === 'MemberOptedOutOfSms',
        'the STOP to be recorded',
        45_000,
      );
      const optOut = memberEvents[memberEvents.length - 1];
      expect(memberEvents.slice(-2).map((e) => [e.type, e.data])).toEqual([
        ['MemberUpdated', expect.objectContaining({ memberId, changes: { notifySms: false } })],
        ['MemberOptedOutOfSms', expect.objectContaining({ memberId, keyword: 'STOP' })],
      ]);
      // The send's answer waits for the read models (read-your-writes): not awaited here.
      pending = post(`/chats/${chatId}/send-assistant-message`, { message: 'Still there?' });
      const { sent, outcome } = await outcomeOf(chatId, 'Still there?');
      expect(sent.position.commit).toBeGreaterThan(optOut.position.commit);
      expect(outcome).toMatchObject({
        type: 'MessageFailed',
        metadata: { correlationId: sent.metadata.correlationId, causationId: sent.id },
        data: { chatId, recipientMemberId: memberId, providerMessageId: null, reason: 'opted_out' },
      });
      // Decided while neither read model had seen the STOP.
      const seen = await holder.query(
        `SELECT (SELECT notify_sms FROM members WHERE id = $1) AS notify_sms,
                EXISTS (SELECT 1 FROM sms_opt_outs WHERE member_id = $1) AS opted_out`,
        [memberId],
      );
      expect(seen.rows[0]).toEqual({ notify_sms: true, opted_out: false });
    } finally {
      await release();
    }
    expect((await stop!).status).toBe(200);
    const answer = await pending!;
    expect(answer.status).toBe(201);
    const d = await eventually(async () => {
      const x = await delivery(chatId, answer.body.id);
      return x.status === 'failed' ? x : undefined;
    }, 'the delivery to fail');
    expect(d).toMatchObject({ failureReason: 'opted_out', providerMessageId: null });
    // Only the STOP confirmation reached the member.
    await eventually(async () => sentTo(phone).length >= 1, 'the STOP confirmation');
    expect(sentTo(phone).map((m) => m.body)).toEqual([expect.stringMatching(/you are unsubscribed/)]);
  }, 120_000);

  it('sends nothing after notifySms was turned off by a PUT the read model has not seen yet: no_consent', async () => {
    const phone = '+14155552012';
    const { memberId, chatId } = await smsChat(phone, true);
    const { holder, release } = await holdProjections();
    let put: ReturnType<typeof post> | undefined;
    let pending: ReturnType<typeof post> | undefined;
    try {
      // Both answers wait for the read models (read-your-writes): not awaited here.
      put = t.request('PUT', `/w/${wid}/members/${memberId}`, { token: key, body: { notifySms: false } });
      await streamOnce(
        `member-${memberId}`,
        (e) =>
          e.type === 'MemberUpdated' &&
          (e.data as { changes: { notifySms?: boolean } }).changes.notifySms === false,
        'the PUT to append MemberUpdated',
      );
      pending = post(`/chats/${chatId}/send-assistant-message`, { message: 'Any news?' });
      const { sent, outcome } = await outcomeOf(chatId, 'Any news?');
      expect(outcome).toMatchObject({
        type: 'MessageFailed',
        metadata: { causationId: sent.id },
        data: { recipientMemberId: memberId, providerMessageId: null, reason: 'no_consent' },
      });
      const seen = await holder.query(`SELECT notify_sms FROM members WHERE id = $1`, [memberId]);
      expect(seen.rows[0]).toEqual({ notify_sms: true });
    } finally {
      await release();
    }
    expect((await put!).status).toBe(200);
    const answer = await pending!;
    expect(answer.status).toBe(201);
    const d = await eventually(async () => {
      const x = await delivery(chatId, answer.body.id);
      return x.status === 'failed' ? x : undefined;
    }, 'the delivery to fail');
    expect(d.failureReason).toBe('no_consent');
    expect(sentTo(phone)).toEqual([]);
  });

  it('records a text from an unknown number as a new External member in a new SMS chat', async () => {
    const res = await inbound('+14155552006', 'Hi, is this the clinic?', 'SMinbound0100');
    expect(res.status).toBe(200);
    const events = await appendedBy(res, 3);
    expect(events.map((e) => e.type)).toEqual(['MemberCreated', 'ChatCreated', 'MessageReceived']);
    // The new chat and its first message are one append: one statement, one commit.
    expect(events[2].position.commit).toBe(events[1].position.commit);
    expect(events[2].streamName).toBe(events[1].streamName);
    const memberId = (events[0].data as { memberId: number }).memberId;
    const chats = await eventually(async () => {
      const res = await get(`/chats?memberId=${memberId}`);
      return res.body.items?.length ? res : undefined;
    }, 'the new chat');
    expect(chats.body.items).toHaveLength(1);
    expect(chats.body.items[0]).toMatchObject({
      channel: 'phone-sms',
      phoneNumberId: phoneId,
      needsResponse: true,
    });
    const messages = await eventually(async () => {
      const res = await get(`/chats/${chats.body.items[0].id}/messages`);
      return res.body.items?.length ? res : undefined;
    }, 'the first message');
    expect(messages.body.items).toMatchObject([
      { direction: 'inbound', role: 'user', content: 'Hi, is this the clinic?', status: 'delivered' },
    ]);
    // A second text lands in the same chat.
    const second = await inbound('+14155552006', 'Hello?', 'SMinbound0101');
    expect((await appendedBy(second, 1)).map((e) => [e.type, e.streamName])).toEqual([
      ['MessageReceived', events[1].streamName],
    ]);
    expect((await get(`/chats?memberId=${memberId}`)).body.items).toHaveLength(1);
    await eventually(
      async () => (await get(`/chats/${chats.body.items[0].id}/messages`)).body.total === 2,
      'the second message',
    );
  });

  it("finds the member's chat and takes the ids in one round trip, the workspace number from the cache", async () => {
    // The statements of this process that look a chat up or take a chat or message id.
    const seen: string[] = [];
    // And those reading the workspace number a text was sent to (kept in the AuthCache).
    const numbers: string[] = [];
    const original = Client.prototype.query as (...args: unknown[]) => unknown;
    (Client.prototype as unknown as { query: (...args: unknown[]) => unknown }).query = function (
      this: Client,
      ...args: unknown[]
    ) {
      const first = args[0] as string | { text?: string } | undefined;
      const text = typeof first === 'string' ? first : (first?.text ?? '');
      if (
        /^\s*SELECT\b/i.test(text) &&
        /\bFROM\s+"?chats"?[\s"]|nextval\('chat_(message_)?id_seq'\)/i.test(text)
      )
        seen.push(text);
      if (/^\s*SELECT\b/i.test(text) && /\bFROM\s+"?phone_numbers"?[\s"]/i.test(text)) numbers.push(text);
      return original.apply(this, args);
    };
    try {
      // The webhook answers once its statements are done.
      const first = await inbound('+14155552031', 'First', 'SMroundtrip0001');
      expect(first.status).toBe(200);
      expect(seen).toHaveLength(1);
      const second = await inbound('+14155552031', 'Second', 'SMroundtrip0002');
      expect(second.status).toBe(200);
      expect(seen).toHaveLength(2);
      // The number read for the first text at most, not again for the second.
      expect(numbers.length).toBeLessThanOrEqual(1);
      const [, created] = await appendedBy(first, 3);
      expect((await appendedBy(second, 1)).map((e) => [e.type, e.streamName])).toEqual([
        ['MessageReceived', created.streamName],
      ]);
    } finally {
      (Client.prototype as unknown as { query: (...args: unknown[]) => unknown }).query = original;
    }
  });

  it('answers an inbound text without waiting for the read models (Twilio reads nothing back)', async () => {
    const phone = '+14155552008';
    const { chatId } = await smsChat(phone, true);
    // Hold the chats projection: its writes to chat_messages wait for this lock.
    const holder = new Client({ connectionString: t.database.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE chat_messages IN SHARE MODE');
      const answer = await Promise.race([
        inbound(phone, 'Are you open today?', 'SMnowait0001'),
        new Promise<'held'>((resolve) => setTimeout(() => resolve('held'), 10_000)),
      ]);
      expect(answer).not.toBe('held');
      expect((answer as Response).status).toBe(200);
      // Answered while the read model has not seen the text.
      expect((await get(`/chats/${chatId}/messages`)).body.total).toBe(0);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    const messages = await eventually(async () => {
      const res = await get(`/chats/${chatId}/messages`);
      return res.body.total === 1 ? res : undefined;
    }, 'the text in the read model');
    expect(messages.body.items[0]).toMatchObject({ direction: 'inbound', content: 'Are you open today?' });
  });

  it('opens one chat for a new member whose texts arrive at once (core claim), with every text in it', async () => {
    const from = '+14155552077';
    const texts = await Promise.all(
      Array.from({ length: 6 }, (_, i) => inbound(from, `Text ${i}`, `SMrace${String(i).padStart(4, '0')}`)),
    );
    expect(texts.map((r) => r.status)).toEqual(Array(6).fill(200));
    // Six texts, one member and one chat: eight events once all are readable.
    const created = await eventually(async () => {
      const all = (await Promise.all(texts.map((r) => appendedBy(r, 0)))).flat();
      return all.length >= 8 ? all : undefined;
    }, 'the texts, the member and the chat');
    expect(created).toHaveLength(8);
    expect(created.filter((e) => e.type === 'ChatCreated')).toHaveLength(1);
    expect(created.filter((e) => e.type === 'MemberCreated')).toHaveLength(1);
    const memberId = (created.find((e) => e.type === 'MemberCreated')!.data as { memberId: number }).memberId;
    const chats = await eventually(async () => {
      const res = await get(`/chats?memberId=${memberId}`);
      return res.body.items?.length ? res : undefined;
    }, 'the chat');
    expect(chats.body.items).toHaveLength(1);
    const messages = await eventually(async () => {
      const res = await get(`/chats/${chats.body.items[0].id}/messages`);
      return res.body.items?.length >= 6 ? res : undefined;
    }, 'every text');
    expect(messages.body.items.map((m: { content: string }) => m.content).sort()).toEqual(
      Array.from({ length: 6 }, (_, i) => `Text ${i}`),
    );
  });
});
