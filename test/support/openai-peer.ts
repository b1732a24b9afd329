import { createServer, IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A chat-completions request as the peer received it. */
export interface PeerChatRequest {
  model: string;
  messages: {
    role: string;
    content: string | null;
    tool_calls?: { id: string; function: { name: string; arguments: string } }[];
    tool_call_id?: string;
  }[];
  tools?: { type: string; function: { name: string; description?: string; parameters: unknown } }[];
  authorization: string | undefined;
}

/** What the peer answers: text, tool calls, or an HTTP error. */
export type PeerAnswer =
  | { content: string }
  | { toolCalls: { name: string; arguments: string }[] }
  | { status: number; message?: string; headers?: Record<string, string> };

export interface OpenAiPeer {
  /** Give the service this as OPENAI_BASE_URL. */
  url: string;
  requests: PeerChatRequest[];
  /** Decides each answer; replace it per test. */
  script: (request: PeerChatRequest) => PeerAnswer | Promise<PeerAnswer>;
  /** Fixed wait before every answer, in milliseconds. */
  delayMs: number;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

let callCounter = 0;

/**
 * A local OpenAI-compatible server (POST /v1/chat/completions, the wire format the
 * official `openai` package speaks): every answer comes from `script`, after `delayMs`.
 */
export async function startOpenAiPeer(delayMs = 0): Promise<OpenAiPeer> {
  const peer: OpenAiPeer = {
    url: '',
    requests: [],
    script: () => ({ content: 'ok' }),
    delayMs,
    close: () => Promise.resolve(),
  };
  const server: Server = createServer((req, res) => {
    void (async () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
        return;
      }
      const body = JSON.parse(await readBody(req)) as Omit<PeerChatRequest, 'authorization'>;
      const request: PeerChatRequest = { ...body, authorization: req.headers.authorization };
      peer.requests.push(request);
      const answer = await peer.script(request);
      if (peer.delayMs) await new Promise((r) => setTimeout(r, peer.delayMs));
      if ('status' in answer) {
        res.writeHead(answer.status, { 'content-type': 'application/json', ...(answer.headers ?? {}) }).end(
          JSON.stringify({
            error: { message: answer.message ?? 'scripted failure', type: 'server_error' },
          }),
        );
        return;
      }
      const toolCalls =
        'toolCalls' in answer
          ? answer.toolCalls.map((c) => ({
              id: `call_${++callCounter}`,
              type: 'function',
              function: { name: c.name, arguments: c.arguments },
            }))
          : undefined;
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: `chatcmpl-${++callCounter}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: body.model,
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: 'content' in answer ? answer.content : null,
                ...(toolCalls ? { tool_calls: toolCalls } : {}),
              },
              finish_reason: toolCalls ? 'tool_calls' : 'stop',
            },
          ],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }),
      );
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  peer.url = `http://127.0.0.1:${port}/v1`;
  peer.close = () =>
    new Promise<void>((done) => {
      server.closeAllConnections();
      server.close(() => done());
    });
  return peer;
}

/** The text of the last user message of a request. */
export const lastUserText = (request: PeerChatRequest): string =>
  [...request.messages].reverse().find((m) => m.role === 'user')?.content ?? '';

/** The tool results the request carries (a later round of a reply). */
export const toolResults = (request: PeerChatRequest): string[] =>
  request.messages.filter((m) => m.role === 'tool').map((m) => m.content ?? '');
