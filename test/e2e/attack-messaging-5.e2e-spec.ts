import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { startTestApp, TestApp } from '../support/app';
import { signup } from '../support/identity-fixtures';
import { eventually } from '../support/processes';
import { startTwilioPeer, TwilioPeer, twilioServiceEnv } from '../support/twilio-peer';
import { agentMember, createWorkflow } from '../support/work-fixtures';

const PUBLIC_BASE_URL = 'https://messaging-attack-5.example.test/api/v2';
const WORKSPACE_NUMBER = '+14155550900';

/** A local HTTP server standing for a host that is not the provider's: it keeps what it was sent. */
interface Elsewhere {
  url: string;
  requests: { url: string; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

async function startElsewhere(body: Buffer): Promise<Elsewhere> {
  const requests: Elsewhere['requests'] = [];
  const server: Server = createServer((req, res) => {
    requests.push({ url: req.url ?? '', headers: req.headers });
    res.writeHead(200, { 'content-type': 'audio/x-wav', 'content-length': body.length }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface Stream {
  status: number;
  messages: { id: string; data: { id: number; content: string } }[];
  close(): void;
}

/** An SSE stream and the messages it got (id and data), optionally resuming with Last-Event-ID. */
async function openStream(url: string, token: string, lastEventId?: string): Promise<Stream> {
  const controller = new AbortController();
  const res = await fetch(url, {
    headers: {
      authorization: `Bearer ${token}`,
      ...(lastEventId !== undefined ? { 'last-event-id': lastEventId } : {}),
    },
    signal: controller.signal,
  });
  const stream: Stream = { status: res.status, messages: [], close: () => controller.abort() };
  if (res.status !== 200 || !res.body) return stream;
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const id = /^id: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (id && data)
            stream.messages.push({ id, data: JSON.parse(data) as Stream['messages'][number]['data'] });
        }
      }
    } catch {
      // aborted
    }
  })();
  return stream;
}

/**
 * Attack, fifth round: consent to mail and calls (notifyEmail, notifyVoice) as SMS honours
 * notifySms, the provider's credentials sent only to its own API host when fetching a
 * recording, and a chat's supervisors and contributors putting words in its member's mouth.
 */
describe('Attack: messaging, fifth round (e2e)', () => {
  let peer: TwilioPeer;
  let smtp: SMTPServer;
  const mails: { to: string[]; text: string }[] = [];
  let dir: string;
  let t: TestApp;
  let wid: string;
  let key: string;
  let phoneId: number;

  beforeAll(async () => {
    peer = await startTwilioPeer();
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, callback) {
        simpleParser(stream)
          .then((mail) => {
            mails.push({ to: session.envelope.rcptTo.map((r) => r.address), text: (mail.text ?? '').trim() });
            callback();
          })
          .catch(callback);
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const { port } = smtp.server.address() as { port: number };
    dir = await mkdtemp(join(tmpdir(), 'attack-messaging-5-'));
    t = await startTestApp({
      env: {
        ...twilioServiceEnv(peer),
        PUBLIC_BASE_URL,
        SMTP_URL: `smtp://127.0.0.1:${port}`,
        FILE_STORAGE_DIR: dir,
        RECORDING_FETCH_TIMEOUT_MS: '1000',
      },
    });
    ({ workspaceId: wid, apiKey: key } = await t.bootstrap('Fifth Clinic'));
    phoneId = (
      await t.request('POST', `/w/${wid}/phone-numbers`, { token: key, body: { number: WORKSPACE_NUMBER } })
    ).body.id;
    expect(
      (await t.request('POST', `/w/${wid}/inboxes`, { token: key, body: { email: 'desk@fifth.example' } }))
        .status,
    ).toBe(201);
  });
  afterAll(async () => {
    await t.close();
    await peer.close();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  const post = (path: string, body: unknown, token = key) =>
    t.request('POST', `/w/${wid}${path}`, { token, body });
  const get = (path: string, token = key) => t.request('GET', `/w/${wid}${path}`, { token });
  const consent = async (memberId: number, flags: Record<string, boolean>) =>
    expect(
      (await t.request('PUT', `/w/${wid}/members/${memberId}`, { token: key, body: flags })).status,
    ).toBe(200);
  /** The message once its status left `sent`. */
  const settled = (chatId: number, messageId: number) =>
    eventually(async () => {
      const m = await get(`/chats/${chatId}/messages/${messageId}`);
      return m.body.status !== 'sent' ? m.body : undefined;
    }, `message ${messageId} settled`);

  describe('consent to mail (notifyEmail)', () => {
    it('sends no mail to a member without notifyEmail: the delivery fails no_consent, the SMTP server sees nothing', async () => {
      const member = await signup(t, wid, key, { email: 'no-mail@fifth.example' });
      const chat = await post('/chats', { channel: 'email', memberId: member.member.id });
      expect(chat.status).toBe(201);
      const sent = await post(`/chats/${chat.body.id}/send-assistant-message`, { message: 'Lab results' });
      expect(sent.status).toBe(201);
      const message = await settled(chat.body.id, sent.body.id);
      expect(message).toMatchObject({ status: 'failed', failureReason: 'no_consent' });
      expect(message.deliveries).toMatchObject([
        {
          memberId: member.member.id,
          status: 'failed',
          failureReason: 'no_consent',
          providerMessageId: null,
        },
      ]);
      const events = (await t.store.readStream(`chat-${chat.body.id}`)).map((e) => e.type);
      expect(events).toEqual(['ChatCreated', 'MessageSent', 'MessageFailed']);

      // Consent given: the next one goes out; turned off again: the one after does not.
      await consent(member.member.id, { notifyEmail: true });
      const second = await post(`/chats/${chat.body.id}/send-assistant-message`, { message: 'Second' });
      expect(await settled(chat.body.id, second.body.id)).toMatchObject({ status: 'delivered' });
      await consent(member.member.id, { notifyEmail: false });
      const third = await post(`/chats/${chat.body.id}/send-assistant-message`, { message: 'Third' });
      expect(await settled(chat.body.id, third.body.id)).toMatchObject({
        status: 'failed',
        failureReason: 'no_consent',
      });
      expect(mails.filter((m) => m.to.includes('no-mail@fifth.example')).map((m) => m.text)).toEqual([
        'Second',
      ]);
    });
  });

  describe('consent to calls (notifyVoice)', () => {
    it('places no call to a member without notifyVoice, and fails its spoken messages no_consent', async () => {
      const wf = await createWorkflow(t, wid, key, {
        name: 'Call back',
        agentId: await agentMember(t, wid, key),
        defaultPhoneNumberId: phoneId,
      });
      const silent = await signup(t, wid, key, { email: 'no-calls@fifth.example', phone: '+14155550901' });
      const chat = await post('/chats', {
        channel: 'phone-voice',
        workflowId: wf.id,
        memberId: silent.member.id,
        assistantEnabled: true,
      });
      expect(chat.status).toBe(201);
      const said = await post(`/chats/${chat.body.id}/send-assistant-message`, { message: 'Call us' });
      expect(said.status).toBe(201);
      expect(await settled(chat.body.id, said.body.id)).toMatchObject({
        status: 'failed',
        failureReason: 'no_consent',
        deliveries: [{ memberId: silent.member.id, status: 'failed', failureReason: 'no_consent' }],
      });

      // A consenting member of the same workflow is called: the place-call job ran its course.
      const willing = await signup(t, wid, key, { email: 'calls@fifth.example', phone: '+14155550902' });
      await consent(willing.member.id, { notifyVoice: true });
      const called = await post('/chats', {
        channel: 'phone-voice',
        workflowId: wf.id,
        memberId: willing.member.id,
        assistantEnabled: true,
      });
      expect(called.status).toBe(201);
      await eventually(
        async () => (await t.store.readStream(`chat-${called.body.id}`)).some((e) => e.type === 'CallPlaced'),
        'the consenting member called',
      );
      const spoken = await post(`/chats/${called.body.id}/send-assistant-message`, { message: 'Hello' });
      await new Promise((r) => setTimeout(r, 300));
      // Still waiting for its call's end, as a voice chat's messages do.
      expect((await get(`/chats/${called.body.id}/messages/${spoken.body.id}`)).body.status).toBe('sent');

      expect(peer.calls.map((c) => c.form.To)).toEqual(['+14155550902']);
      const events = (await t.store.readStream(`chat-${chat.body.id}`)).map((e) => e.type);
      expect(events).toEqual(['ChatCreated', 'MessageSent', 'MessageFailed']);
    });
  });

  describe('recordings named on another host', () => {
    it('fetches a recording outside the provider API origin without the account credentials', async () => {
      const audio = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(60, 7)]);
      const elsewhere = await startElsewhere(audio);
      try {
        const member = await signup(t, wid, key, { email: 'recorded@fifth.example', phone: '+14155550903' });
        const chat = await post('/chats', {
          channel: 'phone-voice',
          memberId: member.member.id,
          phoneNumberId: phoneId,
        });
        expect(chat.status).toBe(201);
        const callback = await peer.webhook(
          `${PUBLIC_BASE_URL}/providers/twilio/voice/recording?chatId=${chat.body.id}`,
          t.baseUrl,
          PUBLIC_BASE_URL,
          {
            AccountSid: peer.accountSid,
            CallSid: 'CA5',
            RecordingSid: 'RE5',
            RecordingUrl: `${elsewhere.url}/media/RE5`,
            RecordingStatus: 'completed',
          },
        );
        expect(callback.status).toBe(204);
        await eventually(
          async () =>
            (await t.request('GET', `/recordings/chat/${chat.body.id}/audio.wav`, { token: key })).status ===
            200,
          'the recording stored',
        );
        expect(elsewhere.requests).toHaveLength(1);
        expect(elsewhere.requests[0].url).toBe('/media/RE5.wav');
        expect(elsewhere.requests[0].headers.authorization).toBeUndefined();
        const got = await fetch(`${t.baseUrl}/recordings/chat/${chat.body.id}/audio.wav`, {
          headers: { authorization: `Bearer ${key}` },
        });
        expect(Buffer.from(await got.arrayBuffer()).equals(audio)).toBe(true);
      } finally {
        await elsewhere.close();
      }
    });

    it('gives up on a recording host that never answers, and retries, without holding the voice queue', async () => {
      const hung: string[] = [];
      const server: Server = createServer((req) => {
        hung.push(req.url ?? ''); // never answered
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as { port: number };
      try {
        const member = await signup(t, wid, key, { email: 'hung@fifth.example', phone: '+14155550904' });
        const chat = await post('/chats', {
          channel: 'phone-voice',
          memberId: member.member.id,
          phoneNumberId: phoneId,
        });
        const callback = await peer.webhook(
          `${PUBLIC_BASE_URL}/providers/twilio/voice/recording?chatId=${chat.body.id}`,
          t.baseUrl,
          PUBLIC_BASE_URL,
          {
            AccountSid: peer.accountSid,
            CallSid: 'CA6',
            RecordingSid: 'RE6',
            RecordingUrl: `http://127.0.0.1:${port}/media/RE6`,
            RecordingStatus: 'completed',
          },
        );
        expect(callback.status).toBe(204);
        await eventually(async () => hung.length === 1, 'the first download asked');
        // Meanwhile the voice queue still works: a spoken message to a member without consent fails at once.
        const said = await post(`/chats/${chat.body.id}/send-assistant-message`, { message: 'Still there?' });
        expect(await settled(chat.body.id, said.body.id)).toMatchObject({ failureReason: 'no_consent' });
        // The stalled download timed out and was tried again.
        await eventually(async () => hung.length >= 2, 'the download retried after its timeout');
      } finally {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });
  });

  describe('phone numbers', () => {
    it('refuses words around a number or an extension (400 naming number), storing nothing; formatting is fine', async () => {
      for (const number of [
        'call me +14155550910 now',
        '+14155550911abc',
        '+14155550912 ext. 12',
        'tel:+14155550913',
      ]) {
        const res = await post('/phone-numbers', { number });
        expect({ number, status: res.status }).toEqual({ number, status: 400 });
        expect(res.body.detail).toMatch(/^number: /);
        expect(await t.eventsOf(res)).toEqual([]);
      }
      const list = await get('/phone-numbers?pageSize=1000');
      expect(list.body.items.map((p: { number: string }) => p.number)).toEqual([WORKSPACE_NUMBER]);
      const created = await post('/phone-numbers', { number: '+1 (415) 555-0914' });
      expect(created.status).toBe(201);
      expect(created.body.number).toBe('+14155550914');
      const put = await t.request('PUT', `/w/${wid}/phone-numbers/${created.body.id}`, {
        token: key,
        body: { number: '+14155550915 x7' },
      });
      expect(put.status).toBe(400);
      expect(put.body.detail).toMatch(/^number: /);
      expect((await get(`/phone-numbers/${created.body.id}`)).body.number).toBe('+14155550914');
      expect(
        (await t.request('DELETE', `/w/${wid}/phone-numbers/${created.body.id}`, { token: key })).status,
      ).toBe(204);
    });
  });

  describe('inboxes', () => {
    it('names a missing grantee by its place in the request, a repeated id before it notwithstanding', async () => {
      const grantee = await signup(t, wid, key, { email: 'grantee@fifth.example' });
      const res = await post('/inboxes', {
        email: 'granted@fifth.example',
        memberIds: [grantee.member.id, grantee.member.id, 2_000_000],
      });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/^memberIds\.2: /);
      expect(await t.eventsOf(res)).toEqual([]);
    });
  });

  describe('web chat streams', () => {
    it('writes again, on a stream resumed with Last-Event-ID, the messages delivered after that id', async () => {
      const member = await signup(t, wid, key, { email: 'web@fifth.example' });
      const chat = await post('/chats', { channel: 'web-chat', memberId: member.member.id });
      const url = `${t.baseUrl}/w/${wid}/chats/${chat.body.id}/stream`;
      const first = await openStream(url, member.token);
      expect(first.status).toBe(200);
      const ids: number[] = [];
      try {
        for (const message of ['One', 'Two']) {
          const sent = await post(`/chats/${chat.body.id}/send-assistant-message`, { message });
          ids.push(sent.body.id);
          await settled(chat.body.id, sent.body.id);
        }
        await eventually(async () => first.messages.length === 2, 'both on the first stream');
      } finally {
        first.close();
      }
      // The client got only the first (the second was written to a connection that died).
      const resumed = await openStream(url, member.token, String(ids[0]));
      try {
        await eventually(async () => resumed.messages.length === 1, 'the missed message again');
        expect(resumed.messages).toEqual([
          { id: String(ids[1]), data: expect.objectContaining({ content: 'Two' }) },
        ]);
      } finally {
        resumed.close();
      }
      // No Last-Event-ID, or one that is no id: a fresh stream, nothing written again.
      for (const last of [undefined, 'abc', '-1', '99999999999']) {
        const fresh = await openStream(url, member.token, last);
        await new Promise((r) => setTimeout(r, 200));
        fresh.close();
        expect({ last, status: fresh.status, got: fresh.messages }).toEqual({ last, status: 200, got: [] });
      }
      // Another workspace's key reaches no stream of this chat, whatever it resumes from.
      const other = await t.bootstrap('Other Fifth');
      const foreign = await openStream(
        `${t.baseUrl}/w/${other.workspaceId}/chats/${chat.body.id}/stream`,
        other.apiKey,
        '0',
      );
      expect(foreign.status).toBe(404);
      const across = await openStream(url, other.apiKey, '0');
      expect(across.status).toBe(404);
      // Replays record nothing: the deliveries were delivered once.
      const delivered = (await t.store.readStream(`chat-${chat.body.id}`)).filter(
        (e) => e.type === 'MessageDelivered',
      );
      expect(delivered).toHaveLength(2);
    });
  });

  describe('user messages as the chat member', () => {
    it('refuses a supervisor or contributor without chats:write posting as the member (403), writing nothing', async () => {
      const patient = await signup(t, wid, key, { email: 'patient@fifth.example' });
      const supervisor = await signup(t, wid, key, { email: 'supervisor@fifth.example' });
      const contributor = await signup(t, wid, key, { email: 'contributor@fifth.example' });
      const chat = await post('/chats', {
        channel: 'web-chat',
        memberId: patient.member.id,
        participants: [
          { memberId: supervisor.member.id, role: 'supervisor' },
          { memberId: contributor.member.id, role: 'contributor' },
        ],
      });
      expect(chat.status).toBe(201);
      const path = `/chats/${chat.body.id}/messages`;
      for (const who of [supervisor, contributor]) {
        // They take part: they read the chat...
        expect((await get(`/chats/${chat.body.id}`, who.token)).status).toBe(200);
        // ...but a user message is the member's own words.
        const res = await post(path, { content: 'I want to stop my treatment' }, who.token);
        expect(res.status).toBe(403);
        expect(res.body.detail).toMatch(/chats:write/);
      }
      expect((await t.store.readStream(`chat-${chat.body.id}`)).map((e) => e.type)).toEqual(['ChatCreated']);
      // The member itself, and an operator holding chats:write on its behalf, still may.
      const own = await post(path, { content: 'My own words' }, patient.token);
      expect(own.status).toBe(201);
      await t.expectEvents(own, [{ type: 'MessageReceived', data: { memberId: patient.member.id } }]);
      expect((await post(path, { content: 'Noted by phone' })).status).toBe(201);
    });

    it("refuses the chat's member as its own human operator (400 naming assistantMemberId), writing nothing", async () => {
      const patient = await signup(t, wid, key, { email: 'self-operated@fifth.example' });
      const res = await post('/chats', {
        channel: 'web-chat',
        memberId: patient.member.id,
        assistantKind: 'human',
        assistantMemberId: patient.member.id,
      });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/^assistantMemberId: /);
      expect(await t.eventsOf(res)).toEqual([]);
    });

    it("lets a human chat's operator post on the member's behalf", async () => {
      const patient = await signup(t, wid, key, { email: 'patient2@fifth.example' });
      const operator = await signup(t, wid, key, { email: 'operator@fifth.example' });
      const chat = await post('/chats', {
        channel: 'web-chat',
        memberId: patient.member.id,
        assistantKind: 'human',
        assistantMemberId: operator.member.id,
      });
      expect(chat.status).toBe(201);
      const res = await post(`/chats/${chat.body.id}/messages`, { content: 'Called in' }, operator.token);
      expect(res.status).toBe(201);
    });
  });
});
