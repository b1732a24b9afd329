import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { REDIS } from '../../../core/redis/redis';

/** Atomically takes the next free slot of a rule: max(now, next free), then moves "next free" one interval on. */
const RESERVE = `
local now = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local nextFree = tonumber(redis.call('GET', KEYS[1]) or '0')
local slot = math.max(now, nextFree)
redis.call('SET', KEYS[1], tostring(slot + interval), 'PX', math.ceil(slot + interval - now) + 1000)
return tostring(slot)`;

/**
 * Per-rule pacing (`actionParams.maxPerSecond`): each delivery reserves a time slot in
 * Redis shared by every worker process; a delivery whose slot is later is put back in
 * the queue until then (it does not hold a worker slot), so a paced receiver never
 * delays another rule's deliveries, and nothing is dropped.
 */
@Injectable()
export class RulePacer {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The instant (ms) this delivery may be sent. */
  async reserve(ruleId: number, maxPerSecond: number, now = Date.now()): Promise<number> {
    const slot = await this.redis.eval(
      RESERVE,
      1,
      // One schedule per rate: a rule whose limit is raised paces its new deliveries at the
      // new rate from now, not behind the slots a backlog took at the old one.
      `${this.config.redisPrefix}:webhook-pace:${ruleId}:${maxPerSecond}`,
      String(now),
      String(1000 / maxPerSecond),
    );
    return Math.ceil(Number(slot));
  }
}
