import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { JsonLogger } from '../logging/json-logger';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Accept the caller's X-Request-Id when it is a sane token, else make one. */
export function requestIdFor(req: { headers: Record<string, unknown> }): string {
  const given = req.headers['x-request-id'];
  if (typeof given === 'string' && SAFE_ID.test(given)) return given;
  return randomUUID();
}

/**
 * Returns X-Request-Id on every response (errors and 404s included) and writes one
 * log line per request: method, route pattern, status, duration, request id. Never
 * bodies, headers or query strings, which may carry secrets.
 */
export function registerRequestHooks(fastify: FastifyInstance, logger: JsonLogger): void {
  fastify.addHook('onRequest', (req, reply, done) => {
    void reply.header('X-Request-Id', req.id);
    done();
  });
  // No hook at all when the level drops its lines (LOG_LEVEL above info): the line's
  // fields (the route, the elapsed time) are not worked out for nothing on every request.
  if (!logger.enabled('info')) return;
  fastify.addHook('onResponse', (req: FastifyRequest, reply, done) => {
    logger.event('info', {
      msg: 'request',
      method: req.method,
      route: req.routeOptions?.url ?? 'unmatched',
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 100) / 100,
      requestId: req.id,
    });
    done();
  });
}
