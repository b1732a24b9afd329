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
