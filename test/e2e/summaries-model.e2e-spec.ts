import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { StoredEvent } from '../../src/core/event-store/event-store.port';
import { startTestApp, TestApp } from '../support/app';
import { signup } from '../support/identity-fixtures';
import { eventually } from '../support/processes';

interface CompletionRequest {
  model: string;
  messages: { role: string; content: string }[];
  max_tokens?: number;
}

/**
 * A local OpenAI-compatible server (POST /v1/chat/completions), scripted by what the
 * transcript holds: `FAIL500` always answers 500, `FAIL400` 400, `RATE429` answers 429
 * the first time and then the summary; anything else the summary at once.
 */
async function startModelServer(): Promise<{
  url: string;
  requests: CompletionRequest[];
  close(): Promise<void>;
}> {
  const requests: CompletionRequest[] = [];
  const seen = new Map<string, number>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions')
        return send(404, { error: { message: 'not found' } });
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as CompletionRequest;
      requests.push(body);
      const prompt = body.messages.map((m) => m.content).join('\n');
      const marker = /FAIL500|FAIL400|RATE429/.exec(prompt)?.[0];
      const count = (seen.get(marker ?? '') ?? 0) + 1;
      seen.set(marker ?? '', count);
      if (marker === 'FAIL500')
        return send(500, { error: { message: 'model crashed', type: 'server_error' } });
      if (marker === 'FAIL400')
        return send(400, { error: { message: 'bad request', type: 'invalid_request_error' } });
      if (marker === 'RATE429' && count === 1)
        return send(429, { error: { message: 'slow down', type: 'rate_limit_exceeded' } });
      const lines = prompt.split('\n').filter((l) => l.includes('] member:')).length;
      send(200, {
        id: `chatcmpl-${requests.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: `  The member wrote ${lines} message(s) and asked to reschedule to Thursday.  `,
            },
            finish_reason: 'stop',
          },
        ],
        usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * Summaries under ASSISTANT_PROVIDER=openai against a local OpenAI-compatible server: the
 * model writes the text from a short prompt holding the conversation within its budget; a
 * model that keeps failing (500) is retried with backoff and then replaced by the digest,
 * which says it is one and why; a 429 is retried; a 400 (no retry can pass) falls back at once.
 */
describe('Summaries written by the language model (e2e)', () => {
  let model: Awaited<ReturnType<typeof startModelServer>>;
  let t: TestApp;
  let wid: string;
  let key: string;
  let memberId: number;

  beforeAll(async () => {
    model = await startModelServer();
    t = await startTestApp({
      env: {
        ASSISTANT_PROVIDER: 'openai',
        OPENAI_BASE_URL: model.url,
        OPENAI_API_KEY: 'sk-local-test',
        ASSISTANT_MODEL: 'summary-test-model',
        // Only pauses trigger here.
        CHAT_SUMMARY_IDLE_MINUTES: '600',
      },
    });
    ({ workspaceId: wid, apiKey: key } = await t.bootstrap('Model Clinic'));
    memberId = (
      await signup(t, wid, key, { email: `grace-${process.pid}@example.com`, name: 'Grace Hopper' })
    ).member.id;
  });
  afterAll(async () => {
    await t.close();
    await model.close();
  });

  const post = (path: string, body: unknown) => t.request('POST', `/w/${wid}${path}`, { token: key, body });
  const summaries = (chatId: number): Promise<StoredEvent[]> => t.store.readStream(`summary-chat-${chatId}`);
  const requestsFor = (marker: string) =>
    model.requests.filter((r) => r.messages.some((m) => m.content.includes(marker)));

  async function pausedChatSaying(...contents: string[]): Promise<number> {
    const chat = await post('/chats', { channel: 'web-chat', memberId });
    expect(chat.status).toBe(201);
    for (const content of contents)
      expect((await post(`/chats/${chat.body.id}/messages`, { content })).status).toBe(201);
    const paused = await t.request('PUT', `/w/${wid}/chats/${chat.body.id}`, {
      token: key,
      body: { paused: true },
    });
    expect(paused.status).toBe(200);
    return chat.body.id as number;
  }

  async function summaryOf(chatId: number) {
    return eventually(async () => {
      const res = await t.request('GET', `/w/${wid}/chats/${chatId}/summary`, { token: key });
      return res.status === 200 ? res.body : undefined;
    }, 'the summary');
  }

  it("writes the model's text from a short prompt holding the conversation", async () => {
    const chatId = await pausedChatSaying('MARK-A Could we move my visit?', 'MARK-A Thursday works');
    const got = await summaryOf(chatId);
    expect(got).toMatchObject({
      trigger: 'paused',
      source: 'model',
      model: 'summary-test-model',
      fallbackReason: null,
      text: 'The member wrote 2 message(s) and asked to reschedule to Thursday.',
      messageCount: 2,
      inboundCount: 2,
    });
    const [request] = requestsFor('MARK-A');
    expect(requestsFor('MARK-A')).toHaveLength(1);
    expect(request.model).toBe('summary-test-model');
    expect(request.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(request.messages[0].content).toMatch(/summarise a web chat conversation/i);
    expect(request.messages[1].content).toContain(`People: Grace Hopper (member ${memberId}).`);
    expect(request.messages[1].content).toMatch(
      /\] member: MARK-A Could we move my visit\?\n.*\] member: MARK-A Thursday works$/,
    );
    const [event] = await summaries(chatId);
    expect(event.data).toMatchObject({ source: 'model', model: 'summary-test-model' });
  });

  it('bounds the conversation in the prompt by its budget, newest messages kept', async () => {
    const long = (i: number) => `MARK-B ${i} ${'x'.repeat(1500)}`;
    const chatId = await pausedChatSaying(...Array.from({ length: 12 }, (_, i) => long(i)));
    const got = await summaryOf(chatId);
    expect(got.source).toBe('model');
    const [request] = requestsFor('MARK-B');
    const user = request.messages[1].content;
    // 12,000 characters of transcript at most (plus the short header).
    expect(user.length).toBeLessThan(12_500);
    expect(user).toContain('MARK-B 11 ');
    expect(user).not.toContain('MARK-B 0 ');
    expect(user).toMatch(/\(\d+ earlier messages not shown\)/);
    expect(got.messageCount).toBe(12);
  });

  it('retries a 429 and then writes the model text', async () => {
    const chatId = await pausedChatSaying('RATE429 please summarise me');
    const got = await summaryOf(chatId);
    expect(got).toMatchObject({ source: 'model', fallbackReason: null });
    expect(requestsFor('RATE429')).toHaveLength(2);
  });

  it('falls back to the digest after the retries when the model keeps failing, and says so', async () => {
    const chatId = await pausedChatSaying('FAIL500 hello');
    const got = await summaryOf(chatId);
    expect(got).toMatchObject({
      source: 'digest',
      model: null,
      fallbackReason: 'the model server answered 500',
      messageCount: 1,
    });
    expect(got.text).toContain('Last message, from the member: "FAIL500 hello"');
    // Three attempts (the job's), then the digest; nothing more.
    expect(requestsFor('FAIL500')).toHaveLength(3);
    const events = await summaries(chatId);
    expect(events.map((e) => e.type)).toEqual(['ChatSummarized']);
    expect(events[0].data).toMatchObject({
      source: 'digest',
      fallbackReason: 'the model server answered 500',
    });
  });

  it('falls back at once when no retry can pass (400)', async () => {
    const chatId = await pausedChatSaying('FAIL400 hello');
    const got = await summaryOf(chatId);
    expect(got).toMatchObject({ source: 'digest', fallbackReason: 'the model server answered 400' });
    expect(requestsFor('FAIL400')).toHaveLength(1);
  });
});
