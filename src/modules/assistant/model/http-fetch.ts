import { Agent as HttpAgent, IncomingMessage, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** The largest answer body read from the model server (a chat completion is a few kB). */
export const MAX_MODEL_RESPONSE_BYTES = 16 * 1024 * 1024;

/** What the `openai` package reads of a fetch Response (client.js, internal/parse.js). */
export interface BufferedResponse {
  ok: boolean;
  status: number;
  statusText: string;
  url: string;
  redirected: false;
  headers: Headers;
  body: null;
  text(): Promise<string>;
  json(): Promise<unknown>;
}

function abortError(): Error {
  const error = new Error('The operation was aborted');
  error.name = 'AbortError';
  return error;
}

function headersOf(res: IncomingMessage): Headers {
  const headers = new Headers();
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i], raw[i + 1]);
  return headers;
}

function plainHeaders(init: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  new Headers(init).forEach((value, name) => (out[name] = value));
  return out;
}

/**
 * The `fetch` the language model's `openai` client is given: one request over Node's
 * `http`/`https` with keep-alive agents, the answer read whole into a buffer. Global fetch
 * (undici) builds a Request, web streams for both bodies and a Response per call, which
 * made up most of the client's CPU per completion; the package reads nothing of a
 * Response but its status, headers and text or JSON. Redirects and bodies other than a
 * string or bytes (never sent for chat completions) go to global fetch. An abort (the
 * client's timeout, the caller's signal) rejects with an `AbortError`, which the package
 * reports as a timeout or a cancellation as it does for global fetch.
 */
export function httpFetch(): typeof fetch {
  const agents = {
    'http:': new HttpAgent({ keepAlive: true }),
    'https:': new HttpsAgent({ keepAlive: true }),
  };
  const buffered = (input: string | URL, init: RequestInit, url: URL): Promise<BufferedResponse | null> =>
    new Promise((resolve, reject) => {
      const signal = init.signal ?? undefined;
      if (signal?.aborted) return reject(abortError());
      const body = init.body as string | Uint8Array | null | undefined;
      const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = send(
        url,
        {
          method: init.method ?? 'GET',
          headers: plainHeaders(init.headers),
          agent: agents[url.protocol as 'http:' | 'https:'],
        },
        (res) => {
          const status = res.statusCode ?? 0;
          if (status >= 300 && status < 400 && res.headers.location) {
            res.resume();
            return resolve(null);
          }
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_MODEL_RESPONSE_BYTES) {
              req.destroy(new Error(`the model server answered more than ${MAX_MODEL_RESPONSE_BYTES} bytes`));
              return;
            }
            chunks.push(chunk);
          });
          res.on('error', reject);
          // A connection that closes before the whole answer came (a complete one resolved on 'end').
          res.on('close', () => {
            if (!res.complete) reject(signal?.aborted ? abortError() : new Error('the answer was cut off'));
          });
          res.on('end', () => {
            if (!res.complete) return;
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({
              ok: status >= 200 && status < 300,
              status,
              statusText: res.statusMessage ?? '',
              url: url.href,
              redirected: false,
              headers: headersOf(res),
              body: null,
              text: () => Promise.resolve(text),
              json: () => Promise.resolve().then(() => JSON.parse(text) as unknown),
            });
          });
        },
      );
      const onAbort = () => req.destroy(abortError());
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('close', () => signal?.removeEventListener('abort', onAbort));
      req.on('error', (error) => reject(signal?.aborted ? abortError() : error));
      req.end(body ?? undefined);
    });

  return (async (input: string | URL | Request, init: RequestInit = {}) => {
    const body = init.body;
    const plain =
      body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array;
    if (input instanceof Request || !plain) return fetch(input, init);
    const url = new URL(String(input));
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return fetch(input, init);
    const response = await buffered(input, init, url);
    return (response ?? (await fetch(input, init))) as unknown as Response;
  }) as typeof fetch;
}
