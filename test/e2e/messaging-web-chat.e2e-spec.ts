import { startTestApp, TestApp } from '../support/app';
import { signup } from '../support/identity-fixtures';
import { eventually } from '../support/processes';
import { openSse as openStream } from '../support/sse';

describe('Messaging: web chat over Server-Sent Events (e2e)', () => {
  let t: TestApp;
  let wid: string;
  let key: string;

  beforeAll(async () => {
    t = await startTestApp();
    ({ workspaceId: wid, apiKey: key } = await t.bootstrap('Web clinic'));
  });
  afterAll(() => t.close());

  it('writes assistant messages to the member’s stream and records them delivered once written', async () => {
    const member = await signup(t, wid, key, { email: 'web@example.com' });
    const chat = await t.request('POST', `/w/${wid}/chats`, {
      token: key,
      body: { channel: 'web-chat', memberId: member.member.id },
    });
    // Sent before the member connects: written (and delivered) as soon as it does.
    const early = await t.request('POST', `/w/${wid}/chats/${chat.body.id}/send-assistant-message`, {
      token: key,
      body: { message: 'Welcome!' },
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(
      (await t.request('GET', `/w/${wid}/chats/${chat.body.id}/messages/${early.body.id}`, { token: key }))
        .body.status,
    ).toBe('sent');

    const stream = await openStream(`${t.baseUrl}/w/${wid}/chats/${chat.body.id}/stream`, member.token);
    expect(stream.status).toBe(200);
    expect(stream.contentType).toMatch(/^text\/event-stream/);
    try {
      await eventually(async () => stream.events.length === 1, 'the pending message on the stream');
      expect(stream.events[0]).toMatchObject({
        event: 'message',
        data: { id: early.body.id, content: 'Welcome!' },
      });

      const live = await t.request('POST', `/w/${wid}/chats/${chat.body.id}/send-assistant-message`, {
        token: key,
        body: { message: 'How are you today?' },
      });
      await eventually(async () => stream.events.length === 2, 'the live message on the stream');
      expect(stream.events[1].data).toMatchObject({
        id: live.body.id,
        role: 'assistant',
        content: 'How are you today?',
      });
      for (const id of [early.body.id, live.body.id]) {
        const m = await eventually(async () => {
          const r = await t.request('GET', `/w/${wid}/chats/${chat.body.id}/messages/${id}`, { token: key });
          return r.body.status === 'delivered' ? r.body : undefined;
        }, `message ${id} delivered`);
        expect(m.deliveries).toMatchObject([{ memberId: member.member.id, status: 'delivered' }]);
      }
    } finally {
      stream.close();
    }
  });

  it('refuses the stream of a chat the caller does not take part in (404)', async () => {
    const stranger = await signup(t, wid, key, { email: 'stranger@example.com' });
    const chat = await t.request('POST', `/w/${wid}/chats`, { token: key, body: { channel: 'web-chat' } });
    const res = await fetch(`${t.baseUrl}/w/${wid}/chats/${chat.body.id}/stream`, {
      headers: { authorization: `Bearer ${stranger.token}` },
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { detail: string }).detail).toBe('Chat not found');
  });

  it('ends open streams when the service shuts down, rather than waiting on them', async () => {
    const other = await startTestApp();
    const b = await other.bootstrap('Closing clinic');
    const chat = await other.request('POST', `/w/${b.workspaceId}/chats`, {
      token: b.apiKey,
      body: { channel: 'web-chat' },
    });
    const stream = await openStream(
      `${other.baseUrl}/w/${b.workspaceId}/chats/${chat.body.id}/stream`,
      b.apiKey,
    );
    expect(stream.status).toBe(200);
    const started = Date.now();
    await other.close();
    expect(Date.now() - started).toBeLessThan(5000);
    stream.close();
  });
});
