import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { catchError, from, mergeAll, mergeMap, Observable } from 'rxjs';
import { APP_CONFIG, AppConfig } from '../config/config';
import type { Actor } from '../event-store/event-store.port';
import { IdempotencyInterceptor } from '../http/idempotency';
import { CREATED_LOCATION, LocationOf, setCreatedLocation } from '../http/location';
import { setETagFrom } from '../http/preconditions';
import { ConsistencyWaiter } from '../projections/consistency';
import { SKIP_READ_YOUR_WRITES } from './read-your-writes';
import { RequestContext, requestContext } from './request-context';

export const ANONYMOUS_ACTOR: Actor = { kind: 'system', id: 'anonymous' };

/** Set by the authentication guard on the request. */
export interface RequestWithActor extends FastifyRequest {
  actor?: Actor;
}

/**
 * Runs the handler inside the request context (request id = correlation id, actor),
 * and holds the response until the projections have caught up with what the handler
 * appended (read-your-writes, DESIGN.md), on success and on failure alike, unless the
 * route is marked @SkipReadYourWrites (a caller that never reads back). It also sets
 * the ETag of a versioned body (core/http/preconditions.ts) and the Location of a 201
 * (core/http/location.ts): each interceptor Nest runs costs every request an
 * AsyncResource binding and rxjs operators, so these two have none of their own, and it
 * is the only global interceptor: `Idempotency-Key` (core/http/idempotency.ts) is run
 * from here, around everything else, for the requests it applies to (a replay skips the
 * handler; a first execution runs it here).
 */
@Injectable()
export class RequestContextInterceptor implements NestInterceptor {
  constructor(
    private readonly waiter: ConsistencyWaiter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly reflector: Reflector,
    private readonly idempotency: IdempotencyInterceptor,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    if (this.idempotency.applies(context))
      return from(this.idempotency.intercept(context, { handle: () => this.run(context, next) })).pipe(
        mergeAll(),
      );
    return this.run(context, next);
  }

  private run(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const req = http.getRequest<RequestWithActor>();
    const reply = http.getResponse<FastifyReply>();
    const ctx: RequestContext = { requestId: req.id, actor: req.actor ?? ANONYMOUS_ACTOR, appended: [] };
    const wait = !this.reflector.get<boolean | undefined>(SKIP_READ_YOUR_WRITES, context.getHandler());
    return new Observable((subscriber) =>
      requestContext.run(ctx, () =>
        next
          .handle()
          .pipe(
            // A refusal can follow writes (a compensation, a partial step): its response
            // waits for them too, so the client's next read sees what the failure left.
            catchError(async (err: unknown) => {
              if (wait && ctx.appended.length)
                await this.waiter
                  .waitFor(ctx.appended, this.config.readYourWritesTimeoutMs)
                  .catch(() => undefined); // the refusal is the answer, not a slow projection
              throw err;
            }),
            mergeMap(async (result: unknown) => {
              setETagFrom(result, reply);
              setCreatedLocation(
                this.reflector.get<LocationOf<unknown> | undefined>(CREATED_LOCATION, context.getHandler()),
                result,
                req,
                reply,
              );
              if (wait && ctx.appended.length)
                await this.waiter.waitFor(ctx.appended, this.config.readYourWritesTimeoutMs);
              return result;
            }),
          )
          .subscribe(subscriber),
      ),
    );
  }
}
