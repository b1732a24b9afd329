import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG, AppConfig } from '../config/config';
import { ConflictError } from '../http/domain-errors';
import { ConsistencyWaiter } from '../projections/consistency';
import { REDIS } from '../redis/redis';
import { requestContext, SYSTEM_ACTOR } from './request-context';

/**
 * Enters a write referring to every target (KEYS: writes, removals of each, in pairs) unless
 * one of them is being removed: then answers that target's index (1-based), entering none.
 */
const ENTER = `
local now = tonumber(ARGV[1])
local lapse = tonumber(ARGV[2])
for i = 2, #KEYS, 2 do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
  if redis.call('ZCARD', KEYS[i]) > 0 then return i / 2 end
end
for i = 1, #KEYS, 2 do
  redis.call('ZADD', KEYS[i], now + lapse, ARGV[3])
  redis.call('PEXPIRE', KEYS[i], lapse)
end
return 0`;

/** Marks a removal in progress (KEYS[2]) and answers how many writes (KEYS[1]) are still in flight. */
const MARK = `
local now = tonumber(ARGV[1])
local lapse = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZADD', KEYS[2], now + lapse, ARGV[3])
redis.call('PEXPIRE', KEYS[2], lapse)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZCARD', KEYS[1])`;

const POLL_MS = 15;

/**
 * Keeps a write that makes something refer to a target (a member given a role, an
 * invitation offering it, a workspace default naming it) from crossing the target's
 * removal, which decides from the read models that nothing refers to it any more: the
 * two live on different streams, and no append is conditional on both.
 *
 * Every process shares, through Redis, per target, the writes referring to it in flight
 * and the removals in progress. A write enters (one script call) unless a removal is in
 * progress, then reads the target from its stream and decides as usual, appends, and
 * leaves once the projections show its append (the response waits for them anyway). A
 * removal first marks itself, then waits until no write is in flight, and only then reads
 * the read models and decides: a write that entered before the mark is projected by then
 * (the removal sees the reference and refuses), one that comes after waits until the
 * removal is over and then reads the target as removed (and refuses). So they never both
 * succeed.
 *
 * Bounds: a write waits for a removal at most READ_YOUR_WRITES_TIMEOUT_MS, then is 409
 * (retry); a removal waits for writes as long, then is 409, changing nothing. A write
 * that crashed, or whose projection did not catch up within the wait, counts as in flight
 * until it lapses (a minute, or twice the wait); a removal that crashed holds writes off
 * until it lapses: both fail closed.
 */
@Injectable()
export class ReferenceGate {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly waiter: ConsistencyWaiter,
  ) {}

  /**
   * Runs `write`, which reads each target from its stream (after entering, never before)
   * and may append a reference to it. `busy(target)`: the error when a removal of that
   * target outlasts the wait.
   */
  async referring<T>(
    targets: readonly string[],
    write: () => Promise<T>,
    busy: (target: string) => Error = (t) => new ConflictError(`${t} is being deleted; retry`),
  ): Promise<T> {
    const unique = [...new Set(targets)];
    if (!unique.length) return write();
    const keys = unique.flatMap((t) => [this.key(t, 'writes'), this.key(t, 'removals')]);
    const token = randomUUID();
    const lapse = this.lapse();
    const deadline = Date.now() + this.config.readYourWritesTimeoutMs;
    for (;;) {
      const blocked = Number(
        await this.redis.eval(ENTER, keys.length, ...keys, String(Date.now()), String(lapse), token),
      );
      if (blocked === 0) break;
      if (Date.now() >= deadline) throw busy(unique[blocked - 1]);
      await sleep(POLL_MS);
    }
    let settled = false;
    const parent = requestContext.current();
    const own = {
      requestId: parent?.requestId ?? token,
      actor: parent?.actor ?? SYSTEM_ACTOR,
      causationId: parent?.causationId,
      appended: [] as NonNullable<typeof parent>['appended'],
    };
    try {
      const out = await requestContext.run(own, write);
      // In flight until the read models show the append (a projection slower than the wait: until it lapses).
      settled = await this.waiter.waitFor(own.appended, this.config.readYourWritesTimeoutMs);
      return out;
    } catch (err) {
      settled = true; // nothing appended, or the append failed: nothing to wait for
      throw err;
    } finally {
      parent?.appended.push(...own.appended);
      if (settled) {
        // Not waited for: a removal polls until it is gone.
        for (let i = 0; i < keys.length; i += 2) void this.redis.zrem(keys[i], token).catch(() => undefined);
      }
    }
  }

  /**
   * Runs `remove`, which decides from the read models that nothing refers to `target`,
   * once every write referring to it that began before is projected; writes beginning
   * meanwhile wait until it is over. 409 (`busy`) when writes stay in flight past the wait.
   */
  async removing<T>(
    target: string,
    remove: () => Promise<T>,
    busy: () => Error = () => new ConflictError(`${target} is being referred to; retry`),
  ): Promise<T> {
    const writes = this.key(target, 'writes');
    const removals = this.key(target, 'removals');
    const token = randomUUID();
    const deadline = Date.now() + this.config.readYourWritesTimeoutMs;
    try {
      for (;;) {
        const inFlight = Number(
          await this.redis.eval(MARK, 2, writes, removals, String(Date.now()), String(this.lapse()), token),
        );
        if (inFlight === 0) break;
        if (Date.now() >= deadline) throw busy();
        await sleep(POLL_MS);
      }
      return await remove();
    } finally {
      await this.redis.zrem(removals, token).catch(() => undefined);
    }
  }

  /**
   * For a write that does not enter (it appends first and checks after): waits until no
   * removal of `target` is in progress, so that a removal marked before the write's append
   * was projected has appended or failed by the time this returns, and one marked later
   * reads the read models after the write. False when one is still in progress after the
   * wait (the write cannot tell whether it crossed it: it should undo itself).
   */
  async removalsOver(target: string): Promise<boolean> {
    const removals = this.key(target, 'removals');
    const deadline = Date.now() + this.config.readYourWritesTimeoutMs;
    for (;;) {
      // Entries score their lapse: those still counting are the removals in progress.
      if ((await this.redis.zcount(removals, `(${Date.now()}`, '+inf')) === 0) return true;
      if (Date.now() >= deadline) return false;
      await sleep(POLL_MS);
    }
  }

  private key(target: string, what: 'writes' | 'removals'): string {
    // One hash slot per target: the scripts touch both keys.
    return `${this.config.redisPrefix}:references:{${target}}:${what}`;
  }

  private lapse(): number {
    return Math.max(60_000, 2 * this.config.readYourWritesTimeoutMs);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
