import type { FastifyReply } from 'fastify';
import Redis from 'ioredis';
import { EventEmitter } from 'node:events';
import { clearRedisPrefix, TEST_REDIS_URL, testRedisPrefix } from '../../../test/support/redis';
import { loadConfig } from '../config/config';
import { TooManyRequestsError } from '../http/domain-errors';
import { JsonLogger } from '../logging/json-logger';
import { RateLimiter } from './rate-limiter';

/** A reply the limiter can set headers on, whose response ends when `end()` is called. */
function reply(): FastifyReply & { headers: Record<string, string>; end(): void } {
  const raw = Object.assign(new EventEmitter(), { writableFinished: false, destroyed: false });
  const headers: Record<string, string> = {};
  const r = {
    raw,
    headers,
    header(name: string, value: string) {
      headers[name] = value;
      return r;
    },
    end() {
      raw.writableFinished = true;
      raw.emit('close');
    },
  };
  return r as unknown as FastifyReply & { headers: Record<string, string>; end(): void };
}

/** The admission's read of a kept read's version (core/http/kept-reads.ts), against the real Redis. */
describe('RateLimiter.admit with a peeked key', () => {
  const prefix = testRedisPrefix();
  let redis: Redis;
  const limiters: RateLimiter[] = [];

  const limiter = (env: Record<string, string> = {}) => {
    const l = new RateLimiter(
      loadConfig({
        REDIS_URL: TEST_REDIS_URL,
        REDIS_PREFIX: prefix,
        RATE_LIMIT_PER_MINUTE: '3',
        RATE_LIMIT_CONCURRENCY: '10',
        ...env,
      }),
      new JsonLogger('silent'),
    );
    limiters.push(l);
    return l;
  };

  beforeAll(() => {
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 2 });
  });

  afterAll(async () => {
    await Promise.all(limiters.map((l) => l.onApplicationShutdown()));
    await clearRedisPrefix(prefix);
    redis.disconnect();
  });

  it('returns the key’s value read in the admission’s call, null when absent, and still counts the request', async () => {
    const l = limiter();
    const key = `${prefix}:read-version:thing:a`;
    const first = reply();
    expect(await l.admit('api_key:peek-1', first, key)).toBeNull();
    expect(first.headers['X-RateLimit-Remaining']).toBe('2');
    first.end();
    await redis.set(key, '7');
    const second = reply();
    expect(await l.admit('api_key:peek-1', second, key)).toBe('7');
    expect(second.headers['X-RateLimit-Remaining']).toBe('1');
    second.end();
    // Without a key, nothing is read.
    expect(await l.admit('api_key:peek-1', reply())).toBeUndefined();
    // Over the limit, refused as ever.
    await expect(l.admit('api_key:peek-1', reply(), key)).rejects.toBeInstanceOf(TooManyRequestsError);
  });

  it('reads nothing when it counts in another Redis than the application’s (RATE_LIMIT_REDIS_URL)', async () => {
    const l = limiter({ RATE_LIMIT_REDIS_URL: `${TEST_REDIS_URL}/1` });
    const key = `${prefix}:read-version:thing:b`;
    await redis.set(key, '3');
    expect(await l.admit('api_key:peek-2', reply(), key)).toBeUndefined();
  });

  it('reads nothing once closed (the caller reads the key itself)', async () => {
    const l = limiter();
    await l.onApplicationShutdown();
    expect(await l.admit('api_key:peek-3', reply(), `${prefix}:read-version:thing:c`)).toBeUndefined();
  });
});

/** Admissions of one credential asked for together: one script run, each answered as alone. */
describe('RateLimiter.admit of concurrent requests', () => {
  const prefix = testRedisPrefix();
  const limiters: RateLimiter[] = [];

  const limiter = (perMinute: string, concurrency: string) => {
    const l = new RateLimiter(
      loadConfig({
        REDIS_URL: TEST_REDIS_URL,
        REDIS_PREFIX: prefix,
        RATE_LIMIT_PER_MINUTE: perMinute,
        RATE_LIMIT_CONCURRENCY: concurrency,
      }),
      new JsonLogger('silent'),
    );
    limiters.push(l);
    return l;
  };

  afterAll(async () => {
    await Promise.all(limiters.map((l) => l.onApplicationShutdown()));
    await clearRedisPrefix(prefix);
  });

  /** The Redis commands the limiter sends from now on (its own connection, once connected). */
  async function counting(l: RateLimiter): Promise<string[]> {
    await l.admit('api_key:warm-up', reply()); // connects
    const sent: string[] = [];
    const redis = (l as unknown as { redis: Redis }).redis;
    const send = redis.sendCommand.bind(redis);
    redis.sendCommand = ((command: { name: string }, ...rest: unknown[]) => {
      sent.push(command.name);
      return (send as (...a: unknown[]) => unknown)(command, ...rest);
    }) as typeof redis.sendCommand;
    return sent;
  }

  it('answers each in the order asked, with the remaining count and refusals of calls one by one, in one script run', async () => {
    const l = limiter('5', '10');
    const sent = await counting(l);
    const replies = Array.from({ length: 7 }, () => reply());
    const outcomes = await Promise.allSettled(replies.map((r) => l.admit('api_key:many-1', r)));
    expect(outcomes.map((o) => o.status)).toEqual([...Array(5).fill('fulfilled'), 'rejected', 'rejected']);
    expect(replies.map((r) => r.headers['X-RateLimit-Remaining'])).toEqual([
      '4',
      '3',
      '2',
      '1',
      '0',
      '0',
      '0',
    ]);
    expect((outcomes[5] as PromiseRejectedResult).reason).toBeInstanceOf(TooManyRequestsError);
    expect(sent.filter((c) => c === 'evalsha' || c === 'eval')).toHaveLength(1);
    // Later requests see the five counted.
    await expect(l.admit('api_key:many-1', reply())).rejects.toBeInstanceOf(TooManyRequestsError);
  });

  it('refuses past the concurrency limit within one run, and admits again once a request ended', async () => {
    const l = limiter('100', '2');
    const replies = Array.from({ length: 3 }, () => reply());
    const outcomes = await Promise.allSettled(replies.map((r) => l.admit('api_key:many-2', r)));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect(((outcomes[2] as PromiseRejectedResult).reason as Error).message).toMatch(/concurrent/);
    replies[0].end();
    await new Promise((resolve) => setTimeout(resolve, 20)); // the release is sent
    await expect(l.admit('api_key:many-2', reply())).resolves.toBeUndefined();
  });

  it('keeps credentials apart in one turn', async () => {
    const l = limiter('1', '10');
    const [a, b] = await Promise.allSettled([
      l.admit('api_key:many-3a', reply()),
      l.admit('api_key:many-3b', reply()),
    ]);
    expect([a.status, b.status]).toEqual(['fulfilled', 'fulfilled']);
  });
});
