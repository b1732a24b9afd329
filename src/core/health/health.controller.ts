import { Controller, Get, Inject, Res } from '@nestjs/common';
import { ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { Public } from '../auth/auth.decorators';
import { EVENT_STORE, EventStore } from '../event-store/event-store.port';
import { SkipRateLimit } from '../rate-limit/rate-limiter';
import { REDIS } from '../redis/redis';

const CHECK_TIMEOUT_MS = 2000;

async function check(fn: () => Promise<unknown>): Promise<'up' | 'down'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), CHECK_TIMEOUT_MS);
      }),
    ]);
    return 'up';
  } catch {
    return 'down';
  } finally {
    clearTimeout(timer);
  }
}

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly db: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(EVENT_STORE) private readonly eventStore: EventStore,
  ) {}

  @Get()
  @Public()
  // Probed by load balancers from few addresses, often more than the public per-address limit.
  @SkipRateLimit()
  @ApiOkResponse({ description: 'every dependency answers' })
  @ApiServiceUnavailableResponse({ description: 'detail names the dependency that does not' })
  async health(@Res({ passthrough: true }) reply: FastifyReply) {
    const [postgres, redis, eventStore] = await Promise.all([
      check(() => this.db.query('SELECT 1')),
      check(() => this.redis.ping()),
      check(() => this.eventStore.ping()),
    ]);
    const checks = { postgres, redis, eventStore };
    const down = Object.entries(checks)
      .filter(([, v]) => v === 'down')
      .map(([k]) => k);
    if (down.length) {
      void reply.status(503);
      return { status: 'down', detail: `Unavailable: ${down.join(', ')}`, checks };
    }
    return { status: 'up', checks };
  }
}
