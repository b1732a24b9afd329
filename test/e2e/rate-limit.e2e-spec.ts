import { Controller, Get, Module } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import Redis from 'ioredis';
import { RequireScope } from '../../src/core/auth/auth.decorators';
import { JsonLogger } from '../../src/core/logging/json-logger';
import { RateLimiter } from '../../src/core/rate-limit/rate-limiter';
import { startTestApp, TestApp, TestResponse } from '../support/app';
import { eventually } from '../support/processes';

/**
 * A route that holds requests until the spec lets them go, so "in flight" is exact.
 * Mounted only in this spec's app (extraModules), never in the service.
 */
const gate = { entered: 0, open: Promise.resolve(), release: () => undefined as void };
function closeGate(): void {
  gate.entered = 0;
  gate.open = new Promise<void>((resolve) => (gate.release = resolve));
}

@Controller('w/:wid/test-held')
class HeldController {
  @Get()
  @RequireScope('workspace:read')
  async held(): Promise<{ ok: true }> {
    gate.entered++;
    await gate.open;
    return { ok: true };
  }
}

@Module({ controllers: [HeldController] })
class HeldModule {}

const PRODUCTION_LIMITS = { RATE_LIMIT_PER_MINUTE: '100', RATE_LIMIT_CONCURRENCY: '10' };

function expectLimitHeaders(res: TestResponse, remaining: number): void {
  expect(res.headers.get('x-ratelimit-limit')).toBe('100');
  expect(res.headers.get('x-ratelimit-remaining')).toBe(String(remaining));
  const reset = Number(res.headers.get('x-ratelimit-reset'));
  const nowSeconds = Date.now() / 1000;
  expect(reset).toBeGreaterThan(nowSeconds);
  expect(reset).toBeLessThanOrEqual(Math.ceil(nowSeconds) + 61);
}

describe('rate limits (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: PRODUCTION_LIMITS, extraModules: [HeldModule] });
  });
  afterAll(() => t.close());

  it('every authenticated response carries X-RateLimit-Limit, -Remaining and -Reset (epoch seconds), errors included', async () => {
    const a = await t.bootstrap();
    expectLimitHeaders(await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey }), 99);
    const forbidden = await t.request('GET', `/w/${a.workspaceId}/test-held`, {
      token: (
        await t.request('POST', '/me/api-keys', { token: a.apiKey, body: { name: 'none', scopes: [] } })
      ).body.secret,
    });
    expect(forbidden.status).toBe(403);
    expectLimitHeaders(forbidden, 99);
    const notFound = await t.request('GET', `/w/${a.workspaceId}/member-roles/999999`, { token: a.apiKey });
    expect(notFound.status).toBe(404);
    expectLimitHeaders(notFound, 97);
  });

  it('the 101st request of a credential within a minute is 429 with Retry-After; other credentials are unaffected', async () => {
    const a = await t.bootstrap();
    for (let i = 1; i <= 100; i++) {
      const res = await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(100 - i));
    }
    const limited = await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey });
    expect(limited.status).toBe(429);
    expect(limited.body.detail).toMatch(
      /^Rate limit exceeded: at most 100 requests per minute per credential/,
    );
    expectLimitHeaders(limited, 0);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // A refused request is not counted, and a second bootstrap's key has its own budget.
    expect((await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey })).status).toBe(429);
    const b = await t.bootstrap();
    expect((await t.request('GET', `/w/${b.workspaceId}`, { token: b.apiKey })).status).toBe(200);
  });

  it('at most 10 requests in flight per credential: the 11th concurrent request is 429, and slots free on completion', async () => {
    const a = await t.bootstrap();
    const tenHeld = async () => {
      const deadline = Date.now() + 10_000;
      while (gate.entered < 10 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(gate.entered).toBe(10);
    };
    closeGate();
    try {
      const inFlight = Array.from({ length: 11 }, () =>
        t.request('GET', `/w/${a.workspaceId}/test-held`, { token: a.apiKey }),
      );
      const first = await Promise.race(inFlight);
      expect(first.status).toBe(429);
      expect(first.body.detail).toMatch(/^Too many concurrent requests: at most 10 in flight per credential/);
      expect(first.headers.get('retry-after')).toBe('1');
      await tenHeld();
      gate.release();
      const statuses = (await Promise.all(inFlight)).map((r) => r.status).sort();
      expect(statuses).toEqual([...Array(10).fill(200), 429]);

      // Completed requests (errors too) give their slots back.
      expect(
        (await t.request('GET', `/w/${a.workspaceId}/member-roles/999999`, { token: a.apiKey })).status,
      ).toBe(404);
      closeGate();
      const again = Array.from({ length: 10 }, () =>
        t.request('GET', `/w/${a.workspaceId}/test-held`, { token: a.apiKey }),
      );
      await tenHeld();
      gate.release();
      expect((await Promise.all(again)).map((r) => r.status)).toEqual(Array(10).fill(200));
    } finally {
      gate.release();
    }
  });

  it('a finished request frees its slot for other processes too, without a later request of its own', async () => {
    const a = await t.bootstrap();
    const keys = await t.request('GET', '/me/api-keys', { token: a.apiKey });
    const keyId = keys.body.items[0].id as string;
    for (let i = 0; i < 10; i++)
      expect((await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey })).status).toBe(200);
    // Another process admits ten requests that stay in flight: all ten slots are free.
    const other = new RateLimiter(t.config, new JsonLogger('silent'));
    try {
      const held = {
        header: () => held,
        raw: { once: () => undefined, writableFinished: false, destroyed: false },
      };
      const admitted = async () => {
        try {
          await other.admit(`api_key:${keyId}`, held as unknown as FastifyReply);
          return true;
        } catch {
          return false;
        }
      };
      // The releases leave this process a few milliseconds after the responses.
      const redis = new Redis(t.config.redisUrl);
      try {
        const inflight = `${t.config.redisPrefix}:ratelimit:{api_key:${keyId}}:inflight`;
        await eventually(
          async () => (await redis.zcard(inflight)) === 0,
          'the slots to be given back',
          5000,
          10,
        );
      } finally {
        redis.disconnect();
      }
      const results: boolean[] = [];
      for (let i = 0; i < 11; i++) results.push(await admitted());
      expect(results).toEqual([...Array(10).fill(true), false]);
    } finally {
      await other.onApplicationShutdown();
    }
  });

  it('is one limit across API processes: what another process admitted through Redis counts here', async () => {
    const a = await t.bootstrap();
    const keys = await t.request('GET', '/me/api-keys', { token: a.apiKey });
    const keyId = keys.body.items[0].id as string;
    // A second limiter with the same configuration stands for another API process.
    const other = new RateLimiter(t.config, new JsonLogger('silent'));
    try {
      // The list above was this key's first request; 98 more elsewhere leave it one.
      for (let i = 0; i < 98; i++) {
        const reply = {
          header: () => reply,
          raw: { once: () => undefined, writableFinished: true, destroyed: false },
        };
        await other.admit(`api_key:${keyId}`, reply as unknown as FastifyReply);
      }
      const last = await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey });
      expect(last.status).toBe(200);
      expect(last.headers.get('x-ratelimit-remaining')).toBe('0');
      expect((await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey })).status).toBe(429);
    } finally {
      await other.onApplicationShutdown();
    }
  });
});

describe('rate limits on public routes (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: PRODUCTION_LIMITS });
  });
  afterAll(() => t.close());

  it('limits public endpoints and failed credentials per client address; health checks are exempt', async () => {
    // Exempt: never refused, never counted (a check itself may answer 503 under load).
    for (let i = 0; i < 105; i++) {
      const health = await t.request('GET', '/health');
      expect(health.status).not.toBe(429);
      expect(health.headers.get('x-ratelimit-limit')).toBeNull();
      expect(health.headers.get('x-ratelimit-remaining')).toBeNull();
    }
    for (let i = 1; i <= 99; i++) {
      const res = await t.request('GET', '/resources/registry');
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(100 - i));
    }
    // Failed authentication counts against the address too (brute force).
    const unauthenticated = await t.request('GET', '/me/api-keys', { token: 'wsk_guess' });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('x-ratelimit-remaining')).toBe('0');
    const limited = await t.request('GET', '/resources/registry');
    expect(limited.status).toBe(429);
    expect(limited.body.detail).toMatch(
      /^Rate limit exceeded: at most 100 requests per minute per client address/,
    );
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await t.request('GET', '/me/api-keys')).status).toBe(429);
    // A credential has its own budget.
    const a = await t.bootstrap();
    expect((await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey })).status).toBe(200);
  });
});

describe('rate limits without Redis (e2e)', () => {
  let t: TestApp;
  let logged: Record<string, unknown>[];
  beforeAll(async () => {
    // Nothing listens on port 1: the limiter cannot reach its Redis.
    t = await startTestApp({ env: { ...PRODUCTION_LIMITS, RATE_LIMIT_REDIS_URL: 'redis://127.0.0.1:1' } });
    logged = [];
    const logger = t.app.get(JsonLogger);
    const original = logger.event.bind(logger);
    jest.spyOn(logger, 'event').mockImplementation((level, fields) => {
      logged.push({ level, ...fields });
      original(level, fields);
    });
  });
  afterAll(() => t.close());

  it('serves requests (unlimited, without limit headers) and logs the failure', async () => {
    const a = await t.bootstrap();
    for (let i = 0; i < 110; i++) {
      const res = await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    }
    expect((await t.request('GET', '/resources/registry')).status).toBe(200);
    expect(logged).toContainEqual(
      expect.objectContaining({
        level: 'error',
        msg: 'rate limiter unavailable: serving requests without rate limits',
      }),
    );
  });
});

describe('rate limits when Redis goes away (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: PRODUCTION_LIMITS });
  });
  afterAll(() => t.close());

  it('keeps serving when the connection drops after start', async () => {
    const a = await t.bootstrap();
    const before = await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey });
    expect(before.headers.get('x-ratelimit-remaining')).toBe('99');
    // Drop the limiter's connection for good (as a Redis that went away and does not come back).
    (t.app.get(RateLimiter) as unknown as { redis: { disconnect(): void } }).redis.disconnect();
    const after = await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey });
    expect(after.status).toBe(200);
    expect(after.headers.get('x-ratelimit-remaining')).toBeNull();
  });
});
