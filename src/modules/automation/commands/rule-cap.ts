import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { ConflictError } from '../../../core/http/domain-errors';
import { ConsistencyWaiter } from '../../../core/projections/consistency';
import { REDIS } from '../../../core/redis/redis';

/**
 * Adds a rule id to the workspace's creations in flight (members scored by when they lapse),
 * dropping lapsed ones, and answers them all, this one included.
 */
const RESERVE = `
local now = tonumber(ARGV[1])
local lapse = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + lapse, ARGV[3])
redis.call('PEXPIRE', KEYS[1], lapse)
return redis.call('ZRANGE', KEYS[1], 0, -1)`;

/**
 * EVENT_RULES_MAX_PER_WORKSPACE: one event fans out to at most that many deliveries. Every
 * process creating rules shares, through Redis (as pacing does), the workspace's creations
 * in flight: a creation first adds itself there, then counts the rules of the read model
 * (those in flight not twice) and those in flight, and leaves once its rule is in the read
 * model. Of two racing creations each sees the other (the later one's add comes after the
 * earlier one's), so the cap holds; one that crashed lapses after a minute (counted until then).
 */
@Injectable()
export class RuleCap {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly db: DataSource,
    private readonly waiter: ConsistencyWaiter,
  ) {}

  /** Runs `create` (which appends rule `ruleId`) if the workspace has room for one more rule; else 409. */
  async within<T>(workspaceId: string, ruleId: number, create: () => Promise<T>): Promise<T> {
    const key = `${this.config.redisPrefix}:event-rule-creations:${workspaceId}`;
    const lapse = Math.max(60_000, 2 * this.config.readYourWritesTimeoutMs);
    const inFlight = (
      (await this.redis.eval(RESERVE, 1, key, String(Date.now()), String(lapse), String(ruleId))) as string[]
    ).map(Number);
    let settled = false;
    try {
      const [{ n }] = (await this.db.query(
        `SELECT count(*)::int AS n FROM event_rules WHERE workspace_id = $1 AND NOT (id = ANY($2::int[]))`,
        [workspaceId, inFlight],
      )) as { n: number }[];
      const max = this.config.eventRulesMaxPerWorkspace;
      if (n + inFlight.length > max) {
        settled = true;
        throw new ConflictError(
          `This workspace has ${max} event rules, the most it may have (EVENT_RULES_MAX_PER_WORKSPACE); delete one first`,
        );
      }
      const out = await create();
      // Counted in flight until the read model shows it (a projection slower than the wait: until it lapses).
      settled = await this.waiter.settle();
      return out;
    } catch (err) {
      settled = true; // nothing appended, or the append failed: nothing to count
      throw err;
    } finally {
      if (settled) await this.redis.zrem(key, String(ruleId)).catch(() => undefined);
    }
  }
}
