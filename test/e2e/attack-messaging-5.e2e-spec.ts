import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { startTestApp, TestApp } from '../support/app';
import { signup } from '../support/identity-fixtures';
import { eventually } from '../support/processes';
import { openSse, SseStream } from '../support/sse';
import { startTwilioPeer, TwilioPeer, twilioServiceEnv } from '../support/twilio-peer';

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

/** An SSE stream, optionally resuming with Last-Event-ID. */
const openStream = (url: string, token: string, lastEventId?: string) =>
  openSse(url, token, lastEventId !== undefined ? { 'last-event-id': lastEventId } : {});

/** The messages a stream got: its events with an id. */
const messagesOf = (stream: SseStream) =>
  stream.events.filter((e) => e.id !== undefined).map(({ id, data }) => ({ id, data }));

/**
 * Attack, fifth round: the provider's credentials sent only to its own API host when fetching
 * a recording, a recording host that never answers, and a chat's supervisors and contributors
 * putting words in its member's mouth; phone numbers, quiet hours, streams resumed, inboxes.
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
  /** The message once its status left `sent`. */
  const settled = (chatId: number, messageId: number) =>
    eventually(async () => {
      const m = await get(`/chats/${chatId}/messages/${messageId}`);
      return m.body.status !== 'sent' ? m.body : undefined;
    }, `message ${messageId} settled`);

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
        // Meanwhile the voice queue still works: another chat's recording is fetched and stored.
        const audio = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(40, 3)]);
        const elsewhere = await startElsewhere(audio);
        try {
          const other = await signup(t, wid, key, {
            email: 'other-call@fifth.example',
            phone: '+14155550905',
          });
          const otherChat = await post('/chats', {
            channel: 'phone-voice',
            memberId: other.member.id,
            phoneNumberId: phoneId,
          });
          const stored = await peer.webhook(
            `${PUBLIC_BASE_URL}/providers/twilio/voice/recording?chatId=${otherChat.body.id}`,
            t.baseUrl,
            PUBLIC_BASE_URL,
            {
              AccountSid: peer.accountSid,
              CallSid: 'CA7',
              RecordingSid: 'RE7',
              RecordingUrl: `${elsewhere.url}/media/RE7`,
              RecordingStatus: 'completed',
            },
          );
          expect(stored.status).toBe(204);
          await eventually(
            async () =>
              (await t.request('GET', `/recordings/chat/${otherChat.body.id}/audio.wav`, { token: key }))
                .status === 200,
            'the other recording stored while the first download hangs',
          );
          expect(hung).toHaveLength(1);
        } finally {
          await elsewhere.close();
        }
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
        await eventually(async () => messagesOf(first).length === 2, 'both on the first stream');
      } finally {
        first.close();
      }
      // The client got only the first (the second was written to a connection that died).
      const resumed = await openStream(url, member.token, String(ids[0]));
      try {
        await eventually(async () => messagesOf(resumed).length === 1, 'the missed message again');
        expect(messagesOf(resumed)).toEqual([
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
        expect({ last, status: fresh.status, got: messagesOf(fresh) }).toEqual({
          last,
          status: 200,
          got: [],
        });
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
