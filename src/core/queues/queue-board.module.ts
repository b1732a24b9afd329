import { DynamicModule, Inject, Injectable, Module, OnModuleInit, Optional } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, HttpAdapterHost } from '@nestjs/core';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import type { IServerAdapter } from '@bull-board/api/typings/app';
import { FastifyAdapter } from '@bull-board/fastify';
import { Queue } from 'bullmq';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';
import { APP_CONFIG, AppConfig } from '../config/config';
import { JsonLogger } from '../logging/json-logger';
import { addressSubject, RateLimiter } from '../rate-limit/rate-limiter';

/** Outside /api/v2: bootstrap.ts excludes `admin/{*path}` from the global prefix. */
export const BOARD_PATH = '/admin/queues';
/** The rate limiter's bucket of failed operator logins, counted per client address. */
const LOGIN_BUCKET = 'operator-login';

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Constant time whatever the lengths: both sides are hashed to 32 bytes first. */
export function tokenMatches(given: string | undefined, expected: string): boolean {
  return given !== undefined && timingSafeEqual(digest(given), digest(expected));
}

/**
 * The operator token from `Authorization: Bearer <token>`, or from HTTP Basic (any user
 * name, the token as password), which lets a browser ask for it once and resend it on
 * every request of the board, its XHR calls included.
 */
export function presentedToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const [scheme, value] = header.trim().split(/\s+/, 2);
  if (!value) return undefined;
  if (scheme.toLowerCase() === 'bearer') return value;
  if (scheme.toLowerCase() === 'basic') {
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon < 0 ? undefined : decoded.slice(colon + 1);
  }
  return undefined;
}

/**
 * Mounts Bull Board on the Fastify instance and lists on it every queue registered in
 * the application. The board's routes live in their own encapsulated Fastify scope
 * whose onRequest hook checks the operator token: Nest guards and middleware do not
 * cover routes added as a Fastify plugin, and a scope hook covers every route of the
 * board by construction, however its path was spelled. Presented tokens are counted
 * per client address (OPERATOR_LOGIN_ATTEMPTS_PER_MINUTE, wrong ones only), so the
 * token cannot be guessed by brute force; an address over the limit gets 429 whatever
 * it sends, or its 401s and 200s would still tell a wrong guess from a right one.
 */
@Injectable()
class QueueBoard implements OnModuleInit {
  private readonly board: ReturnType<typeof createBullBoard> | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly discovery: DiscoveryService,
    adapterHost: HttpAdapterHost,
    private readonly logger: JsonLogger,
    @Optional() private readonly rateLimiter?: RateLimiter,
  ) {
    // Absent in application contexts (the CLI): they serve no HTTP.
    const fastify = adapterHost.httpAdapter?.getInstance?.() as FastifyInstance | undefined;
    if (!fastify) return;
    const serverAdapter = new FastifyAdapter();
    serverAdapter.setBasePath(BOARD_PATH);
    // @bull-board/fastify pins its own copy of @bull-board/api: same shape, separate declarations.
    this.board = createBullBoard({
      queues: [],
      serverAdapter: serverAdapter as unknown as IServerAdapter,
      options: { uiConfig: { boardTitle: 'Queues' } },
    });
    // Registered while the application is being built, before Fastify loads its plugins.
    void fastify.register(async (scope) => {
      scope.addHook('onRequest', (req, reply) => this.guard(req, reply));
      await scope.register(serverAdapter.registerPlugin(), { prefix: BOARD_PATH });
    });
  }

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders()) {
      if (wrapper.instance instanceof Queue) this.board?.addQueue(new BullMQAdapter(wrapper.instance));
    }
  }

  private async guard(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    // The root's request-id hook is added after this scope was loaded (bootstrap.ts), so it is set here.
    void reply.header('X-Request-Id', req.id);
    const presented = presentedToken(req.headers.authorization);
    // No token at all is a browser's first request before it asks for one: nothing to count.
    if (presented === undefined) return this.challenge(reply);
    const limit = this.config.operatorLoginAttemptsPerMinute;
    const attempt = await this.rateLimiter?.reserve(LOGIN_BUCKET, addressSubject(req), limit);
    if (attempt && !attempt.admitted) {
      this.logger.event('warn', {
        msg: 'operator login refused: too many failures',
        ip: req.ip,
        requestId: req.id,
      });
      void reply
        .code(429)
        .header('retry-after', String(attempt.retryAfterSeconds))
        .header('cache-control', 'no-store')
        .send({
          detail: `Too many failed operator logins from this address: at most ${limit} a minute; retry in ${attempt.retryAfterSeconds} s`,
        });
      return reply;
    }
    if (tokenMatches(presented, this.config.operatorToken!)) {
      attempt?.refund();
      return undefined;
    }
    // Never the token: the address and the request id are enough to follow an attack.
    this.logger.event('warn', { msg: 'operator login failed', ip: req.ip, requestId: req.id });
    return this.challenge(reply);
  }

  private challenge(reply: FastifyReply): FastifyReply {
    void reply
      .code(401)
      .header('www-authenticate', ['Bearer realm="queues"', 'Basic realm="queues", charset="UTF-8"'])
      .header('cache-control', 'no-store')
      .send({
        detail:
          'The queue board needs the operator token: Authorization: Bearer <OPERATOR_TOKEN>, or HTTP Basic with it as password',
      });
    return reply; // fastify: an async hook that answered returns the reply
  }
}

/**
 * Bull Board at /admin/queues (waiting, active, failed, completed; retry), only where
 * the process serves HTTP and OPERATOR_TOKEN is set; otherwise the path is a plain 404.
 * The plugin is registered here rather than through @bull-board/nestjs, whose module
 * pulls in @nestjs/bull-shared 12, an ES module that jest (and Node before 20.19)
 * cannot require.
 */
@Module({})
export class QueueBoardModule {
  static forRoot(config: AppConfig): DynamicModule {
    if (!config.operatorToken || config.role === 'worker') return { module: QueueBoardModule };
    return { module: QueueBoardModule, imports: [DiscoveryModule], providers: [QueueBoard] };
  }
}
