import { startTestApp, TestApp } from '../support/app';
import { signup } from '../support/identity-fixtures';
import { eventually } from '../support/processes';
import { openSse } from '../support/sse';
import { startTwilioPeer, TwilioPeer, twilioServiceEnv } from '../support/twilio-peer';

const PUBLIC_BASE_URL = 'https://messaging-attack.example.test/api/v2';
const WORKSPACE_NUMBER = '+14155550700';
const MAIL_SECRET = 'attack-3-inbound-mail-secret';
const INBOX = 'desk@harbor-clinic.example';

/**
 * Attack, third round: a member without chats:write adding people or an operator to a chat
 * of its own (and texting them from the workspace's number), contradictory assistant
 * fields, a signed status callback about another provider message, a transcript cut inside
 * an emoji, web chat streams outliving their credential, inbound mail and texts without a
 * usable sender, opt-out words texted with punctuation or spaced.
 */
describe('Attack: messaging, third round (e2e)', () => {
  let peer: TwilioPeer;
  let t: TestApp;
  let wid: string;
  let key: string;
  let phoneId: number;

  beforeAll(async () => {
    peer = await startTwilioPeer();
    t = await startTestApp({
      env: { ...twilioServiceEnv(peer), PUBLIC_BASE_URL, INBOUND_EMAIL_SECRET: MAIL_SECRET },
    });
    ({ workspaceId: wid, apiKey: key } = await t.bootstrap('Harbor Clinic'));
    expect(
      (await t.request('POST', `/w/${wid}/inboxes`, { token: key, body: { email: INBOX } })).status,
    ).toBe(201);
    phoneId = (
      await t.request('POST', `/w/${wid}/phone-numbers`, { token: key, body: { number: WORKSPACE_NUMBER } })
    ).body.id;
  });
  afterAll(async () => {
    await t.close();
    await peer.close();
  });

  const post = (path: string, body: unknown, token = key) =>
    t.request('POST', `/w/${wid}${path}`, { token, body });
  const get = (path: string, token = key) => t.request('GET', `/w/${wid}${path}`, { token });
  const sentTo = (phone: string) => peer.messages.filter((m) => m.to === phone);

  /** A member who agreed to SMS. */
  async function consenting(phone: string, name: string): Promise<{ id: number; token: string }> {
    const m = await signup(t, wid, key, { phone, name });
    const put = await t.request('PUT', `/w/${wid}/members/${m.member.id}`, {
      token: key,
      body: { notifySms: true },
    });
    expect(put.status).toBe(200);
    return { id: m.member.id, token: m.token };
  }

  describe('a chat of ones own', () => {
    it('cannot take in other members without chats:write: 403 naming participants, nothing written or sent', async () => {
      const victim = await consenting('+14155557001', 'Val');
      const self = await signup(t, wid, key, { phone: '+14155557002', name: 'Sam' });
      // A plain member (User role): no chats:write.
      const asMember = { token: self.token };
      for (const body of [
        // Its own operator: it would send as the chat's assistant to everyone else in it.
        {
          channel: 'phone-sms',
          phoneNumberId: phoneId,
          assistantKind: 'human',
          assistantMemberId: self.member.id,
          participants: [{ memberId: victim.id, role: 'contributor' }],
        },
        // An AI chat: the assistant's replies would go to them too.
        {
          channel: 'phone-sms',
          phoneNumberId: phoneId,
          participants: [{ memberId: victim.id, role: 'supervisor' }],
        },
        { channel: 'web-chat', participants: [{ memberId: victim.id, role: 'supervisor' }] },
      ]) {
        const res = await post('/chats', body, asMember.token);
        expect(res.status).toBe(403);
        expect(res.body.detail).toMatch(/^participants: .*chats:write/);
        expect(await t.eventsOf(res)).toEqual([]);
      }
      // The victim is in no chat of it, and heard nothing.
      expect((await get(`/chats?memberId=${self.member.id}`)).body.total).toBe(0);
      expect(sentTo('+14155557001')).toEqual([]);

      // A chat of its own with the AI assistant still needs no scope; with chats:write
      // participants and operators are taken as before.
      const own = await post('/chats', { channel: 'phone-sms', phoneNumberId: phoneId }, asMember.token);
      expect(own.status).toBe(201);
      expect(own.body.participants).toEqual([{ memberId: self.member.id, role: 'user', name: 'Sam' }]);
      const byManager = await post('/chats', {
        channel: 'phone-sms',
        memberId: self.member.id,
        phoneNumberId: phoneId,
        assistantKind: 'human',
        assistantMemberId: victim.id,
        participants: [{ memberId: victim.id, role: 'supervisor' }],
      });
      expect(byManager.status).toBe(201);
    });

    it('cannot name a human operator without chats:write: 403 naming assistantMemberId, the accomplice sends nothing', async () => {
      const self = await signup(t, wid, key, { phone: '+14155557003', name: 'Ash' });
      await t.request('PUT', `/w/${wid}/members/${self.member.id}`, {
        token: key,
        body: { notifySms: true },
      });
      const accomplice = await signup(t, wid, key, { email: 'accomplice@example.com', name: 'Ace' });
      // The accomplice, made the operator, would text from the workspace's number: a right
      // neither of them holds.
      for (const body of [
        {
          channel: 'phone-sms',
          phoneNumberId: phoneId,
          assistantKind: 'human',
          assistantMemberId: accomplice.member.id,
        },
        {
          channel: 'phone-sms',
          phoneNumberId: phoneId,
          assistantEnabled: false,
          assistantMemberId: self.member.id,
        },
      ]) {
        const res = await post('/chats', body, self.token);
        expect(res.status).toBe(403);
        expect(res.body.detail).toMatch(/^assistantMemberId: .*chats:write/);
        expect(await t.eventsOf(res)).toEqual([]);
      }
      const mine = await get('/chats', accomplice.token);
      expect(mine.body.total).toBe(0);
      expect(sentTo('+14155557003')).toEqual([]);
    });
  });

  it('refuses assistantEnabled: true beside assistantKind human (400 naming it), as false beside ai is', async () => {
    for (const body of [
      { channel: 'web-chat', assistantEnabled: true, assistantKind: 'human', assistantMemberId: 1 },
      {
        channel: 'phone-voice',
        phoneNumberId: phoneId,
        assistantEnabled: true,
        assistantKind: 'human',
        assistantMemberId: 1,
      },
    ]) {
      const res = await post('/chats', body);
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/^assistantEnabled: /);
      expect(await t.eventsOf(res)).toEqual([]);
    }
  });

  describe('status callbacks', () => {
    it('lets a callback about another provider message change nothing; the recorded one still decides', async () => {
      const member = await consenting('+14155557010', 'Cal');
      const chat = await post('/chats', {
        channel: 'phone-sms',
        memberId: member.id,
        phoneNumberId: phoneId,
      });
      const sent = await post(`/chats/${chat.body.id}/send-assistant-message`, {
        message: 'Your results are in',
      });
      expect(sent.status).toBe(201);
      const message = await eventually(async () => sentTo('+14155557010')[0], 'the peer to receive the SMS');
      await eventually(
        async () =>
          (await get(`/chats/${chat.body.id}/messages/${sent.body.id}`)).body.deliveries[0].providerMessageId,
        'the provider id to be recorded',
      );
      const before = (await t.store.readStream(`chat-${chat.body.id}`)).length;

      // Signed by the provider for this delivery's address, but about another message (an
      // earlier attempt whose id was never recorded): neither failed nor delivered by it.
      const stray = { ...message, sid: `SM${'f'.repeat(32)}` };
      expect((await peer.status(stray, t.baseUrl, PUBLIC_BASE_URL, 'undelivered', '30005')).status).toBe(204);
      expect((await peer.status(stray, t.baseUrl, PUBLIC_BASE_URL, 'delivered')).status).toBe(204);
      const after = await get(`/chats/${chat.body.id}/messages/${sent.body.id}`);
      expect(after.body).toMatchObject({ status: 'sent', failureReason: null });
      expect(after.body.deliveries[0]).toMatchObject({ status: 'sent', providerMessageId: message.sid });
      expect((await t.store.readStream(`chat-${chat.body.id}`)).length).toBe(before);

      // The recorded message's own callback moves it on.
      expect((await peer.status(message, t.baseUrl, PUBLIC_BASE_URL, 'delivered')).status).toBe(204);
      const delivered = await get(`/chats/${chat.body.id}/messages/${sent.body.id}`);
      expect(delivered.body.deliveries[0]).toMatchObject({
        status: 'delivered',
        providerMessageId: message.sid,
      });
      const last = (await t.store.readStream(`chat-${chat.body.id}`)).at(-1)!;
      expect(last).toMatchObject({ type: 'MessageDelivered', data: { providerMessageId: message.sid } });
    });
  });

  describe('voice transcripts', () => {
    it('keeps a transcript cut at 10,000 units without half an emoji (no 500, recorded once)', async () => {
      const callee = await signup(t, wid, key, { phone: '+14155557040', name: 'Vic' });
      const chat = await post('/chats', {
        channel: 'phone-voice',
        memberId: callee.member.id,
        phoneNumberId: phoneId,
      });
      expect(chat.status).toBe(201);
      // The cut falls between the two halves of the emoji.
      const text = 'a'.repeat(9_999) + '😀 and the rest';
      const params = {
        AccountSid: peer.accountSid,
        CallSid: 'CAlong1',
        RecordingSid: 'RElong1',
        TranscriptionSid: 'TRlong1',
        TranscriptionStatus: 'completed',
        TranscriptionText: text,
      };
      const send = () =>
        peer.webhook(
          `${PUBLIC_BASE_URL}/providers/twilio/voice/recording?chatId=${chat.body.id}`,
          t.baseUrl,
          PUBLIC_BASE_URL,
          params,
        );
      expect((await send()).status).toBe(204);
      expect((await send()).status).toBe(204);
      const list = await get(`/chats/${chat.body.id}/messages`);
      const transcripts = list.body.items.filter((m: { content: string }) => m.content.startsWith('aaa'));
      expect(transcripts).toHaveLength(1);
      expect(transcripts[0].content).toBe('a'.repeat(9_999));
    });
  });

  describe('web chat streams', () => {
    /** An SSE stream: its raw text as it arrives, and whether the server ended it. */
    const openStream = (chatId: number, token: string) =>
      openSse(`${t.baseUrl}/w/${wid}/chats/${chatId}/stream`, token);

    it.each(['signed out', 'archived', 'key revoked'])(
      'ends an open stream once its credential no longer works (%s): later messages stay sent, unwritten',
      async (how) => {
        let token: string;
        let chatId: number;
        let revoke: () => Promise<number>;
        if (how === 'key revoked') {
          // The bootstrap account's own key, in a chat of its member.
          const created = await t.request('POST', '/me/api-keys', {
            token: key,
            body: { name: 'stream key', scopes: ['chats:read', 'chats:write'] },
          });
          token = created.body.secret;
          chatId = (await post('/chats', { channel: 'web-chat' }, token)).body.id;
          revoke = async () =>
            (await t.request('DELETE', `/me/api-keys/${created.body.id}`, { token: key })).status;
        } else {
          const m = await signup(t, wid, key, { email: `stream-${how.replace(' ', '-')}@example.com` });
          token = m.token;
          chatId = (await post('/chats', { channel: 'web-chat', memberId: m.member.id })).body.id;
          revoke =
            how === 'archived'
              ? async () =>
                  (await t.request('DELETE', `/w/${wid}/members/${m.member.id}`, { token: key })).status
              : async () => (await t.request('DELETE', '/me/token', { token: m.token })).status;
        }
        const stream = await openStream(chatId, token);
        expect(stream.status).toBe(200);
        try {
          const before = await post(`/chats/${chatId}/send-assistant-message`, { message: `hello ${how}` });
          await eventually(
            async () => stream.text.includes(`hello ${how}`),
            'the first message on the stream',
          );
          expect([200, 204]).toContain(await revoke());
          expect((await get(`/chats/${chatId}`, token)).status).toBe(401);

          const after = await post(`/chats/${chatId}/send-assistant-message`, { message: `private ${how}` });
          expect(after.status).toBe(201);
          await eventually(async () => stream.ended, 'the server to end the stream');
          expect(stream.text).not.toContain(`private ${how}`);
          const m = await get(`/chats/${chatId}/messages/${after.body.id}`);
          expect(m.body).toMatchObject({ status: 'sent' });
          expect((await get(`/chats/${chatId}/messages/${before.body.id}`)).body.status).toBe('delivered');
        } finally {
          stream.close();
        }
      },
    );
  });

  describe('inbound without a usable sender', () => {
    const mail = (raw: string) =>
      fetch(`${t.baseUrl}/providers/email/inbound`, {
        method: 'POST',
        headers: { 'content-type': 'message/rfc822', 'x-inbound-email-secret': MAIL_SECRET },
        body: raw,
      });

    it('refuses mail for an inbox with no sender address, or a broken one (400 naming From), recording nothing', async () => {
      const before = (await t.store.readAll({ maxCount: 100_000 })).length;
      for (const from of ['From: nobody\r\n', 'From: "a@" <@@@>\r\n', '']) {
        const res = await mail(`${from}To: ${INBOX.toUpperCase()}\r\nSubject: hi\r\n\r\nhello`);
        expect(res.status).toBe(400);
        expect(((await res.json()) as { detail: string }).detail).toMatch(/^From: /);
      }
      expect((await t.store.readAll({ maxCount: 100_000 })).length).toBe(before);
      // Mail for no inbox of the service is still answered as not recorded.
      const nowhere = await mail('garbage');
      expect(nowhere.status).toBe(200);
      expect(await nowhere.json()).toEqual({ recorded: false });
      // And a good one is recorded.
      const ok = await mail(`From: sender@example.com\r\nTo: ${INBOX}\r\nSubject: hi\r\n\r\nhello`);
      expect(await ok.json()).toEqual({ recorded: true });
    });

    it('refuses a text from a sender that is no phone number with a 400 naming From, recording nothing', async () => {
      const before = (await t.store.readAll({ maxCount: 100_000 })).length;
      const res = await peer.webhook(
        `${PUBLIC_BASE_URL}/providers/twilio/sms/inbound`,
        t.baseUrl,
        PUBLIC_BASE_URL,
        {
          AccountSid: peer.accountSid,
          MessageSid: 'SMalpha1',
          From: 'HARBORINFO',
          To: WORKSPACE_NUMBER,
          Body: 'hi',
        },
      );
      expect(res.status).toBe(400);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/^From: /);
      expect((await t.store.readAll({ maxCount: 100_000 })).length).toBe(before);
    });
  });

  describe('opt-out words', () => {
    const inbound = (from: string, body: string, sid: string) =>
      peer.webhook(`${PUBLIC_BASE_URL}/providers/twilio/sms/inbound`, t.baseUrl, PUBLIC_BASE_URL, {
        AccountSid: peer.accountSid,
        MessageSid: sid,
        From: from,
        To: WORKSPACE_NUMBER,
        Body: body,
      });

    it.each([
      ['STOP.', 'STOP', '+14155557021'],
      ['Stop!', 'STOP', '+14155557022'],
      ['"stop"', 'STOP', '+14155557023'],
      ['stop all', 'STOPALL', '+14155557024'],
      ['Opt-out', 'OPTOUT', '+14155557025'],
      ['ＳＴＯＰ', 'STOP', '+14155557026'],
    ])('takes %p as an opt-out: confirmed once, and nothing sent after it', async (text, keyword, phone) => {
      const member = await consenting(phone, 'Opal');
      const chat = await post('/chats', {
        channel: 'phone-sms',
        memberId: member.id,
        phoneNumberId: phoneId,
      });
      const res = await inbound(phone, text, `SMstop${phone.slice(-2)}`);
      expect(res.status).toBe(200);
      const events = await eventually(async () => {
        const found = (await t.eventsOf({ requestId: res.headers.get('x-request-id')! } as never)).filter(
          (e) => !e.metadata.causationId,
        );
        return found.length >= 4 ? found : undefined;
      }, 'the opt-out to be recorded');
      expect(events.map((e) => e.type)).toEqual([
        'MessageReceived',
        'MemberUpdated',
        'MemberOptedOutOfSms',
        'MessageSent',
      ]);
      expect(events[0].data).toMatchObject({ content: text });
      expect(events[2].data).toMatchObject({ memberId: member.id, keyword });
      const confirmation = await eventually(async () => sentTo(phone)[0], 'the confirmation');
      expect(confirmation.body).toMatch(/^Harbor Clinic: you are unsubscribed/);

      // The assistant's next message reaches nobody.
      const blocked = await post(`/chats/${chat.body.id}/send-assistant-message`, {
        message: 'Still there?',
      });
      const failed = await eventually(async () => {
        const m = await get(`/chats/${chat.body.id}/messages/${blocked.body.id}`);
        return m.body.status === 'failed' ? m.body : undefined;
      }, 'the blocked delivery to fail');
      expect(failed.failureReason).toBe('opted_out');
      expect(sentTo(phone).map((m) => m.body)).toEqual([confirmation.body]);
    });

    it('takes neither a sentence nor a punctuated "Yes." as a keyword: no opt-in, no reply', async () => {
      const phone = '+14155557030';
      const member = await consenting(phone, 'Quinn');
      await post('/chats', { channel: 'phone-sms', memberId: member.id, phoneNumberId: phoneId });
      for (const [i, text] of ['Stop please', 'S T O P', 'Yes.'].entries()) {
        const res = await inbound(phone, text, `SMtext${i}`);
        expect(res.status).toBe(200);
        const events = await eventually(async () => {
          const found = await t.eventsOf({ requestId: res.headers.get('x-request-id')! } as never);
          return found.length ? found : undefined;
        }, 'the text to be recorded');
        expect(events.map((e) => e.type)).toEqual(['MessageReceived']);
      }
      const stream = await t.store.readStream(`member-${member.id}`);
      expect(stream.map((e) => e.type)).not.toContain('MemberOptedOutOfSms');
      expect(stream.map((e) => e.type)).not.toContain('MemberOptedInToSms');
      expect(sentTo(phone)).toEqual([]);
    });
  });
});
