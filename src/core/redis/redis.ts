import Redis, { RedisOptions } from 'ioredis';

export const REDIS = Symbol('REDIS');

/** ioredis options from a redis:// or rediss:// URL (BullMQ wants options, not a URL). */
export function redisOptionsFromUrl(url: string): RedisOptions {
  const u = new URL(url);
  const db = u.pathname && u.pathname !== '/' ? Number(u.pathname.slice(1)) : undefined;
  return {
    host: u.hostname || '127.0.0.1',
    port: u.port ? Number(u.port) : 6379,
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: Number.isInteger(db) ? db : undefined,
    tls: u.protocol === 'rediss:' ? {} : undefined,
  };
}

/** One shared command connection; BullMQ opens its own per queue and worker. */
export function createRedis(url: string): Redis {
  return new Redis({ ...redisOptionsFromUrl(url), maxRetriesPerRequest: 2 });
}

/** Connection options for BullMQ queues and workers (workers need maxRetriesPerRequest: null). */
export function bullConnection(url: string): RedisOptions {
  return { ...redisOptionsFromUrl(url), maxRetriesPerRequest: null };
}
