import { Inject, Injectable, OnApplicationShutdown, SetMetadata } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import type { Credential } from '../auth/principal';
import { APP_CONFIG, AppConfig } from '../config/config';
import { TooManyRequestsError } from '../http/domain-errors';
import { markRouteConfig } from '../http/route-auth';
import { JsonLogger } from '../logging/json-logger';
import { redisOptionsFromUrl } from '../redis/redis';
import { ADMIT_MANY_SCRIPT, ADMIT_SCRIPT } from './rate-limit.script';

export const SKIP_RATE_LIMIT = 'rate-limit:skip';

/** The same mark in the route's Fastify config, for the hooks that count before Nest's guard (early-auth.ts). */
export const SKIP_RATE_LIMIT_CONFIG = 'skipRateLimit';

/** For probes that must answer however often they are asked (health checks of load balancers). */
export const SkipRateLimit = (): MethodDecorator & ClassDecorator =>
  ((target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (descriptor) {
      SetMetadata(SKIP_RATE_LIMIT, true)(target, key!, descriptor);
      markRouteConfig(SKIP_RATE_LIMIT_CONFIG, true)(target, key!, descriptor);
      return;
    }
    SetMetadata(SKIP_RATE_LIMIT, true)(target as CallableFunction);
    // On a controller: every handler it declares (route config is per route).
    const proto = (target as { prototype: object }).prototype;
    for (const name of Object.getOwnPropertyNames(proto)) {
      const own = Object.getOwnPropertyDescriptor(proto, name);
      if (name !== 'constructor' && typeof own?.value === 'function')
        markRouteConfig(SKIP_RATE_LIMIT_CONFIG, true)(proto, name, own);
    }
  }) as MethodDecorator & ClassDecorator;

const WINDOW_MS = 60_000;
/** An in-flight entry stops counting after this long even if its release was lost (crashed process). */
const INFLIGHT_TTL_MS = 120_000;
const FAILURE_LOG_INTERVAL_MS = 30_000;
/**
 * A finished request's slot is given back with the credential's next admission from this
 * process (same script call), or after this long when none comes: other processes may
 * count it as in flight for at most this much longer.
 */
const RELEASE_DELAY_MS = 5;

/** Who a limit applies to: the credential, or the client address where there is none. */
export const credentialSubject = (c: Credential): string => `${c.kind}:${c.credentialId}`;
export const addressSubject = (req: FastifyRequest): string => `ip:${req.ip}`;

type AdmitResult = [
  admitted: number,
  remaining: number,
  resetAtMs: number,
  nowMs: number,
  reason: 'ok' | 'rate' | 'concurrency',
  peeked: string | null,
];
/** One counted attempt of a bucket of its own (see RateLimiter.reserve). */
export interface Reservation {
  admitted: boolean;
  /** When refused: seconds until the oldest attempt leaves the window. */
  retryAfterSeconds: number;
  /** Takes the attempt back (it succeeded, so it does not count). */
  refund(): void;
}

/** The admissions of one credential asked for in one turn of the event loop, not sent yet. */
interface PendingAdmissions {
  inflightKey: string;
  members: string[];
  settle: ((result: AdmitResult | undefined, err?: unknown) => void)[];
}

type RedisWithAdmit = Redis & {
  /** ADMIT_MANY_SCRIPT: `n` admissions of one credential in one run. */
  wsAdmitMany(
    k1: string,
    k2: string,
    limit: number,
    windowMs: number,
    concurrency: number,
    ttl: number,
    n: number,
    ...membersThenFinished: string[]
  ): Promise<[number, number, number, number, AdmitResult[4]][]>;
  wsAdmit(
    k1: string,
    k2: string,
    limit: number,
    windowMs: number,
    concurrency: number,
    ttl: number,
    member: string,
    ...finished: string[]
  ): Promise<AdmitResult>;
  /** wsAdmit, also reading a third key (see ADMIT_SCRIPT). */
  wsAdmitPeek(
    k1: string,
    k2: string,
    k3: string,
    limit: number,
    windowMs: number,
    concurrency: number,
    ttl: number,
    member: string,
    ...finished: string[]
  ): Promise<AdmitResult>;
};

/**
 * Per-credential limits (DESIGN.md, HTTP conventions): rateLimitPerMinute requests in
 * any 60 s and rateLimitConcurrency in flight, counted in Redis so every API process
 * enforces one limit. Fails open: with Redis unreachable requests are served unlimited
 * and the failure is logged, because refusing all traffic would turn a cache outage
 * into a full outage. Its own connection, without an offline queue, so an outage costs
 * no waiting per request.
 */
@Injectable()
export class RateLimiter implements OnApplicationShutdown {
  private redis: RedisWithAdmit | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;
  private lastFailureLoggedAt = 0;
  /** In-flight key → members of finished requests not yet removed from it. */
  private readonly finished = new Map<string, string[]>();
  private flushTimer: NodeJS.Timeout | undefined;
  /** Log key → admissions waiting for this turn's script call (see `batched`). */
  private pending = new Map<string, PendingAdmissions>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly logger: JsonLogger,
  ) {}

  /**
   * Connects on the first request rather than at start: the worker and the CLI build
   * the same application but serve no HTTP, and need no connection.
   */
  private connect(): Promise<void> {
    this.connecting ??= (async () => {
      const redis = new Redis({
        ...redisOptionsFromUrl(this.config.rateLimitRedisUrl ?? this.config.redisUrl),
        lazyConnect: true,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        commandTimeout: 500,
        connectTimeout: 2000,
        retryStrategy: (attempt) => Math.min(attempt * 200, 5000),
        // The admissions (and releases) asked for in one turn of the event loop go out in
        // one write and come back in one read: under load, several requests' script calls
        // share a round trip. Each is still its own atomic script run, in the order asked.
        enableAutoPipelining: true,
      }) as RedisWithAdmit;
      redis.on('error', (err: Error) => this.logFailure(err));
      redis.defineCommand('wsAdmit', { numberOfKeys: 2, lua: ADMIT_SCRIPT });
      redis.defineCommand('wsAdmitPeek', { numberOfKeys: 3, lua: ADMIT_SCRIPT });
      redis.defineCommand('wsAdmitMany', { numberOfKeys: 2, lua: ADMIT_MANY_SCRIPT });
      this.redis = redis;
      await redis.connect().catch((err: Error) => this.logFailure(err));
    })();
    return this.connecting;
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    await this.connecting;
    await this.flushReleases();
    const redis = this.redis;
    this.redis = undefined;
    if (redis) await redis.quit().catch(() => redis.disconnect());
  }

  /**
   * Admits the request for `subject` or throws 429 (with Retry-After). Sets the
   * X-RateLimit-* headers either way, and frees the in-flight slot when the response
   * ends, whatever its status.
   *
   * `peek`: a key of the application's Redis (REDIS_URL) to read in the same call, whose
   * value (null when absent) is returned; undefined when it was not read (no admission
   * ran: the limiter is closed, failed or not connected, or counts in another Redis,
   * RATE_LIMIT_REDIS_URL). The caller then reads it itself.
   */
  async admit(subject: string, reply: FastifyReply, peek?: string): Promise<string | null | undefined> {
    if (this.closed) return undefined;
    await this.connect();
    const redis = this.redis;
    if (!redis || redis.status !== 'ready') {
      this.logFailure(new Error(`Redis connection is ${redis?.status ?? 'absent'}`));
      return undefined;
    }
    const { redisPrefix } = this.config;
    const base = `${redisPrefix}:ratelimit:{${subject}}`;
    const inflightKey = `${base}:inflight`;
    const member = randomUUID();
    const peeking = peek !== undefined && this.sameRedis;
    let result: AdmitResult;
    if (!peeking) {
      const batched = await this.batched(redis, `${base}:log`, inflightKey, member);
      if (!batched) return undefined;
      result = batched;
    } else {
      const finished = this.finished.get(inflightKey) ?? [];
      this.finished.delete(inflightKey);
      try {
        result = await this.admitPeeking(redis, base, inflightKey, peek, member, finished);
      } catch (err) {
        this.release(inflightKey, ...finished);
        this.logFailure(err);
        return undefined;
      }
    }
    return this.answer(result, subject, reply, inflightKey, member, peeking);
  }

  private admitPeeking(
    redis: RedisWithAdmit,
    base: string,
    inflightKey: string,
    peek: string,
    member: string,
    finished: string[],
  ): Promise<AdmitResult> {
    const { rateLimitPerMinute: limit, rateLimitConcurrency: concurrency } = this.config;
    return redis.wsAdmitPeek(
      `${base}:log`,
      inflightKey,
      peek,
      limit,
      WINDOW_MS,
      concurrency,
      INFLIGHT_TTL_MS,
      member,
      ...finished,
    );
  }

  /**
   * One admission without a peeked key, sent with the others of its credential asked for
   * in this turn of the event loop: one script run (ADMIT_MANY_SCRIPT) answers them all,
   * each as its own call would have in the order asked. Undefined when the call failed
   * (logged; the request is served unlimited, as for any failure).
   */
  private batched(
    redis: RedisWithAdmit,
    logKey: string,
    inflightKey: string,
    member: string,
  ): Promise<AdmitResult | undefined> {
    return new Promise((resolve) => {
      let group = this.pending.get(logKey);
      if (!group) {
        if (this.pending.size === 0) setImmediate(() => this.sendBatched(redis));
        this.pending.set(logKey, (group = { inflightKey, members: [], settle: [] }));
      }
      group.members.push(member);
      group.settle.push((result) => resolve(result));
    });
  }

  private sendBatched(redis: RedisWithAdmit): void {
    const groups = this.pending;
    this.pending = new Map();
    const { rateLimitPerMinute: limit, rateLimitConcurrency: concurrency } = this.config;
    for (const [logKey, group] of groups) {
      const finished = this.finished.get(group.inflightKey) ?? [];
      this.finished.delete(group.inflightKey);
      redis
        .wsAdmitMany(
          logKey,
          group.inflightKey,
          limit,
          WINDOW_MS,
          concurrency,
          INFLIGHT_TTL_MS,
          group.members.length,
          ...group.members,
          ...finished,
        )
        .then(
          (results) => group.settle.forEach((settle, i) => settle([...results[i], null] as AdmitResult)),
          (err: unknown) => {
            this.release(group.inflightKey, ...finished);
            this.logFailure(err);
            for (const settle of group.settle) settle(undefined);
          },
        );
    }
  }

  private answer(
    result: AdmitResult,
    subject: string,
    reply: FastifyReply,
    inflightKey: string,
    member: string,
    peeking: boolean,
  ): string | null | undefined {
    const { rateLimitPerMinute: limit, rateLimitConcurrency: concurrency } = this.config;
    const [admitted, remaining, resetAtMs, nowMs, reason, peeked] = result;
    void reply.header('X-RateLimit-Limit', String(limit));
    void reply.header('X-RateLimit-Remaining', String(Math.max(0, remaining)));
    void reply.header('X-RateLimit-Reset', String(Math.ceil(resetAtMs / 1000)));
    if (!admitted) {
      const per = subject.startsWith('ip:') ? 'per client address' : 'per credential';
      if (reason === 'concurrency') {
        throw new TooManyRequestsError(
          `Too many concurrent requests: at most ${concurrency} in flight ${per}; retry when one completes`,
          1,
        );
      }
      const retryAfter = Math.max(1, Math.ceil((resetAtMs - nowMs) / 1000));
      throw new TooManyRequestsError(
        `Rate limit exceeded: at most ${limit} requests per minute ${per}; retry in ${retryAfter} s`,
        retryAfter,
      );
    }
    const release = () => this.release(inflightKey, member);
    const raw = reply.raw;
    if (raw.writableFinished || raw.destroyed) release();
    else raw.once('close', release);
    return peeking ? (peeked ?? null) : undefined;
  }

  /** Whether the limiter counts in the application's Redis, where a peeked key lives. */
  private get sameRedis(): boolean {
    const own = this.config.rateLimitRedisUrl;
    return own === undefined || own === this.config.redisUrl;
  }

  private release(inflightKey: string, ...members: string[]): void {
    if (!members.length) return;
    const list = this.finished.get(inflightKey);
    if (list) list.push(...members);
    else this.finished.set(inflightKey, members);
    this.flushTimer ??= setTimeout(() => void this.flushReleases(), RELEASE_DELAY_MS);
  }

  /** Removes what no admission has taken along: one ZREM per credential. */
  private async flushReleases(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const all = [...this.finished];
    this.finished.clear();
    const redis = this.redis;
    if (!redis) return;
    await Promise.all(
      all.map(([key, members]) => redis.zrem(key, ...members).catch((err: unknown) => this.logFailure(err))),
    );
  }

  /**
   * Counts one attempt of `subject` in a bucket of its own with its own limit per
   * minute (failed operator logins per address), or refuses it when the limit is used.
   * Reserved before the attempt is judged and refunded when it succeeds, so concurrent
   * attempts cannot all slip in under the limit. Fails open like admit().
   */
  async reserve(bucket: string, subject: string, limit: number): Promise<Reservation> {
    const open: Reservation = { admitted: true, retryAfterSeconds: 0, refund: () => undefined };
    if (this.closed) return open;
    await this.connect();
    const redis = this.redis;
    if (!redis || redis.status !== 'ready') {
      this.logFailure(new Error(`Redis connection is ${redis?.status ?? 'absent'}`));
      return open;
    }
    const logKey = `${this.config.redisPrefix}:ratelimit:${bucket}:{${subject}}:log`;
    const member = randomUUID();
    try {
      // No concurrency limit here: an in-flight entry that expires at once.
      const [admitted, , resetAtMs, nowMs] = await redis.wsAdmit(
        logKey,
        `${logKey}:inflight`,
        limit,
        WINDOW_MS,
        limit,
        1,
        member,
      );
      return {
        admitted: admitted === 1,
        retryAfterSeconds: Math.max(1, Math.ceil((resetAtMs - nowMs) / 1000)),
        refund: () => {
          this.redis?.zrem(logKey, member).catch((err: unknown) => this.logFailure(err));
        },
      };
    } catch (err) {
      this.logFailure(err);
      return open;
    }
  }

  private logFailure(err: unknown): void {
    const now = Date.now();
    if (now - this.lastFailureLoggedAt < FAILURE_LOG_INTERVAL_MS) return;
    this.lastFailureLoggedAt = now;
    this.logger.event('error', {
      msg: 'rate limiter unavailable: serving requests without rate limits',
      err: err instanceof Error ? err.message : String(err),
    });
  }
}
