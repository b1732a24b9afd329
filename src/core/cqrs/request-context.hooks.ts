import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../event-store/event-store.port';
import { toErrorResponse } from '../http/http-exception.filter';
import { CREATED_LOCATION, LocationOf, setCreatedLocation } from '../http/location';
import { setETagFrom } from '../http/preconditions';
import { routeConfigValue } from '../http/route-auth';
import { JsonLogger } from '../logging/json-logger';
import { loggableError } from '../logging/loggable-error';
import { ConsistencyWaiter } from '../projections/consistency';
import { SKIP_READ_YOUR_WRITES } from './read-your-writes';
import { RequestContext, requestContext } from './request-context';

export const ANONYMOUS_ACTOR: Actor = { kind: 'system', id: 'anonymous' };

/** Set by the authentication guard on the request. */
export interface RequestWithActor extends FastifyRequest {
  actor?: Actor;
}

const CONTEXT = Symbol('request-context');
type ContextRequest = RequestWithActor & { [CONTEXT]?: RequestContext };

/**
 * Every route handler runs inside its request's context (request id = correlation id, the
 * actor the guard set), and its response is held until the projections have caught up
 * with what it appended (read-your-writes, DESIGN.md), on success and on failure alike,
 * unless the route is marked @SkipReadYourWrites (a caller that never reads back). The
 * answer also gets the ETag of a versioned body (core/http/preconditions.ts) and the
 * Location of a 201 (core/http/location.ts).
 *
 * As Fastify hooks, not a Nest interceptor: a route with any interceptor costs each of its
 * requests two AsyncResource bindings (with node's deprecation wrappers), rxjs operators
 * and an execution context; with none, Nest calls the handler directly. `Idempotency-Key`
 * is claimed by the guard once it let the request through (core/http/idempotency.ts).
 * Registered before the application's other onSend hooks (bootstrap.ts), so that the
 * idempotency record of an answer is kept only once the answer has waited.
 */
export function registerRequestContext(
  fastify: FastifyInstance,
  waiter: ConsistencyWaiter,
  timeoutMs: number,
  logger: JsonLogger,
): void {
  // The last hook before the handler (Nest's guards, pipes and handler run inside it): what
  // it and everything it awaits append is noted in this context.
  fastify.addHook('preHandler', (req: ContextRequest, _reply, done) => {
    const ctx: RequestContext = {
      requestId: req.id,
      // Read when an event is appended: the guard sets the request's actor before any handler runs.
      get actor(): Actor {
        return req.actor ?? ANONYMOUS_ACTOR;
      },
      appended: [],
    };
    req[CONTEXT] = ctx;
    requestContext.run(ctx, done);
  });
  // An answer in JSON, before it is serialised: its ETag and, on a 201, its Location.
  fastify.addHook('preSerialization', (req: FastifyRequest, reply: FastifyReply, payload: unknown, done) => {
    if (!(req as ContextRequest)[CONTEXT]) return done(null, payload);
    setETagFrom(payload, reply);
    setCreatedLocation(
      routeConfigValue(req, CREATED_LOCATION) as LocationOf<unknown> | undefined,
      payload,
      req,
      reply,
    );
    done(null, payload);
  });
  fastify.addHook('onSend', (req: ContextRequest, reply: FastifyReply, payload: unknown, done) => {
    const ctx = req[CONTEXT];
    if (!ctx?.appended.length || routeConfigValue(req, SKIP_READ_YOUR_WRITES) === true)
      return done(null, payload);
    const appended = ctx.appended.splice(0);
    // A refusal can follow writes (a compensation, a partial step): its response waits for
    // them too, so the client's next read sees what the failure left; the refusal is the
    // answer there, not a slow projection.
    const refusal = reply.statusCode >= 400;
    waiter.waitFor(appended, timeoutMs).then(
      () => done(null, payload),
      (err: unknown) => {
        if (refusal) return done(null, payload);
        // As the exception filter answers a failure (core/http/http-exception.filter.ts).
        const res = toErrorResponse(err);
        logger.event('error', {
          msg: 'request failed',
          requestId: req.id,
          method: req.method,
          route: req.routeOptions?.url,
          err: loggableError(err),
        });
        // No error answer carries the ETag or Location set for the answer it replaces.
        reply.removeHeader('etag');
        reply.removeHeader('location');
        void reply.code(res.status).headers(res.headers).type('application/json; charset=utf-8');
        done(null, JSON.stringify({ detail: res.detail }));
      },
    );
  });
}
