import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ModelError } from './language-model.port';
import { OpenAiLanguageModel } from './openai.model';

/** The adapter over its own fetch (http-fetch.ts) against a local server answering as told. */
describe('OpenAiLanguageModel over http-fetch', () => {
  let server: Server;
  let base: string;
  let handle: (req: IncomingMessage, body: string, res: ServerResponse) => void;
  const seen: { method?: string; url?: string; authorization?: string; body: string }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        seen.push({ method: req.method, url: req.url, authorization: req.headers.authorization, body });
        handle(req, body, res);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  beforeEach(() => (seen.length = 0));

  const model = (timeoutMs = 5_000, baseUrl = base) =>
    new OpenAiLanguageModel({ baseUrl, apiKey: 'sk-test', defaultModel: 'test-model', timeoutMs });
  const ask = (m: OpenAiLanguageModel, signal?: AbortSignal) =>
    m.complete({ messages: [{ role: 'user', content: 'Hé, call me back' }], signal });
  const failure = async (p: Promise<unknown>): Promise<ModelError> => {
    const error = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ModelError);
    return error as ModelError;
  };

  it('sends the request as the package builds it and reads the answer, tool calls included', async () => {
    handle = (_req, _body, res) =>
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req-1' }).end(
        JSON.stringify({
          id: 'c1',
          object: 'chat.completion',
          created: 1,
          model: 'served-model',
          choices: [
            {
              index: 0,
              finish_reason: 'tool_calls',
              message: {
                role: 'assistant',
                content: 'Réponse ✓',
                tool_calls: [
                  { id: 't1', type: 'function', function: { name: 'lookup', arguments: '{"a":1}' } },
                ],
              },
            },
          ],
          usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
        }),
      );
    const m = model();
    for (let i = 0; i < 3; i++) {
      const answer = await ask(m);
      expect(answer).toEqual({
        content: 'Réponse ✓',
        toolCalls: [{ id: 't1', name: 'lookup', arguments: '{"a":1}' }],
        finishReason: 'tool_calls',
        model: 'served-model',
        usage: { promptTokens: 3, completionTokens: 4 },
      });
    }
    expect(seen).toHaveLength(3);
    expect(seen[0]).toMatchObject({
      method: 'POST',
      url: '/v1/chat/completions',
      authorization: 'Bearer sk-test',
    });
    expect(JSON.parse(seen[0].body)).toEqual({
      model: 'test-model',
      messages: [{ role: 'user', content: 'Hé, call me back' }],
    });
  });

  it('maps an error status: 429 and 500 may pass, 400 will not', async () => {
    for (const [status, retryable] of [
      [429, true],
      [500, true],
      [400, false],
    ] as const) {
      handle = (_req, _body, res) =>
        res
          .writeHead(status, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'scripted', type: 'x' } }));
      const error = await failure(ask(model()));
      expect(error).toMatchObject({ retryable, status, message: `the model server answered ${status}` });
    }
  });

  it('gives up on a server that does not answer in time, and on one that cannot be reached', async () => {
    handle = () => undefined; // never answers
    expect(await failure(ask(model(200)))).toMatchObject({
      message: 'the model did not answer in time',
      retryable: true,
    });
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    expect(await failure(ask(model(5_000, `http://127.0.0.1:${port}/v1`)))).toMatchObject({
      message: 'the model server could not be reached',
      retryable: true,
    });
  });

  it("stops waiting when the caller's signal aborts", async () => {
    handle = () => undefined;
    const controller = new AbortController();
    const started = Date.now();
    const pending = ask(model(), controller.signal);
    setTimeout(() => controller.abort(), 50);
    await failure(pending);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('reports an answer cut off by the server as a connection failure', async () => {
    handle = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
      res.write('{"choices": [');
      setTimeout(() => res.destroy(), 20);
    };
    expect(await failure(ask(model()))).toMatchObject({
      message: 'the model server could not be reached',
      retryable: true,
    });
  });

  it('reports an answer that is not JSON as a failed call, which may pass', async () => {
    handle = (_req, _body, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"choices": [');
    expect(await failure(ask(model()))).toMatchObject({ message: 'the model call failed', retryable: true });
  });
});
