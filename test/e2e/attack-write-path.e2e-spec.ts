import { Body, Controller, Header, HttpCode, Module, Post } from '@nestjs/common';
import { randomBytes, randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { SelfAccess } from '../../src/core/auth/auth.decorators';
import { startTestApp, TestApp, TestResponse } from '../support/app';
import { PNG_1X1, uploadFile } from '../support/file-uploads';

/**
 * A hostile and careless client against the write path of round 16 (request context as
 * Fastify hooks, Idempotency-Key claimed by the guard, batched rate-limit admissions).
 */
const runs = new Map<string, number>();
@Controller('attack-write-path')
class SlowController {
  /** Counts its executions per body id; takes `ms` before answering. */
  @Post('slow')
  @SelfAccess()
  @HttpCode(202)
  @Header('Cache-Control', 'no-store')
  @Header('X-Route-Own', 'kept')
  async slow(@Body() body: { id: string; ms?: number }): Promise<{ runs: number }> {
    const n = (runs.get(body.id) ?? 0) + 1;
    runs.set(body.id, n);
    await new Promise((resolve) => setTimeout(resolve, body.ms ?? 0));
    return { runs: n };
  }
}
@Module({ controllers: [SlowController] })
class SlowModule {}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('attack: the write path (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      env: { RATE_LIMIT_PER_MINUTE: '7', RATE_LIMIT_CONCURRENCY: '100' },
      extraModules: [SlowModule],
    });
  });
  afterAll(() => t.close());

  const slow = (token: string, key: string | undefined, body: object): Promise<TestResponse> =>
    t.request('POST', '/attack-write-path/slow', {
      token,
      body,
      headers: key === undefined ? {} : { 'Idempotency-Key': key },
    });

  it('a client that drops its connection and retries with the same key never gets a second execution', async () => {
    const a = await t.bootstrap();
    const key = randomUUID();
    const id = randomUUID();
    const body = { id, ms: 600 };
    const abort = new AbortController();
    const first = fetch(`${t.baseUrl}/attack-write-path/slow`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${a.apiKey}`,
        'content-type': 'application/json',
        'idempotency-key': key,
      },
      body: JSON.stringify(body),
      signal: abort.signal,
    }).catch(() => undefined);
    // The first request is running (its handler waits 600 ms): the client gives up on it.
    for (let i = 0; i < 100 && !runs.has(id); i++) await sleep(10);
    expect(runs.get(id)).toBe(1);
    abort.abort();
    await first;
    await sleep(100);
    // The retry the header exists for: it must wait for the first and replay its answer.
    const retry = await slow(a.apiKey, key, body);
    expect(runs.get(id)).toBe(1);
    expect(retry.status).toBe(202);
    expect(retry.body).toEqual({ runs: 1 });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
  });

  it('an upload cut off mid-way does not hold its key: the retry with it stores the file', async () => {
    const a = await t.bootstrap();
    const key = `cut-${randomUUID()}`;
    const boundary = `----cut${randomBytes(8).toString('hex')}`;
    const cut = httpRequest(new URL(`${t.baseUrl}/w/${a.workspaceId}/files`), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${a.apiKey}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'transfer-encoding': 'chunked',
        'idempotency-key': key,
      },
    });
    cut.on('error', () => undefined);
    cut.write(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\n` +
        `Content-Type: application/octet-stream\r\n\r\n`,
    );
    cut.write(randomBytes(64 * 1024));
    await sleep(300);
    cut.destroy();
    await sleep(300);
    const started = Date.now();
    const retry = await uploadFile(t.baseUrl, a.workspaceId, a.apiKey, PNG_1X1, {
      headers: { 'idempotency-key': key },
    });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("a replay carries the kept status, body, the route's own headers and Idempotent-Replayed", async () => {
    const a = await t.bootstrap();
    const key = randomUUID();
    const id = randomUUID();
    const first = await slow(a.apiKey, key, { id });
    expect(first.status).toBe(202);
    const again = await slow(a.apiKey, key, { id });
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(again.headers.get('x-route-own')).toBe('kept');
    expect(again.headers.get('cache-control')).toBe('no-store');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('x-ratelimit-limit')).toBe('7');
    expect(runs.get(id)).toBe(1);
    // Another credential's same key is its own request, never the first one's answer.
    const b = await t.bootstrap();
    const other = await slow(b.apiKey, key, { id });
    expect(other.headers.get('idempotent-replayed')).toBeNull();
    expect(other.body).toEqual({ runs: 2 });
  });

  it('a burst of one credential in one turn admits exactly the limit, each with its own remaining count', async () => {
    const a = await t.bootstrap();
    const b = await t.bootstrap();
    // bootstrap's own requests are not made with the key: both budgets are whole.
    const burst = (token: string) =>
      Array.from({ length: 10 }, () => slow(token, undefined, { id: randomUUID() }));
    const answers = await Promise.all([...burst(a.apiKey), ...burst(b.apiKey)]);
    for (const mine of [answers.slice(0, 10), answers.slice(10)]) {
      const ok = mine.filter((r) => r.status === 202);
      const refused = mine.filter((r) => r.status === 429);
      expect(ok).toHaveLength(7);
      expect(refused).toHaveLength(3);
      expect(ok.map((r) => Number(r.headers.get('x-ratelimit-remaining'))).sort()).toEqual([
        0, 1, 2, 3, 4, 5, 6,
      ]);
      for (const r of refused) {
        expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(Number(r.headers.get('retry-after'))).toBeLessThanOrEqual(60);
      }
    }
  });
});
