import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { bearerToken } from '../auth/auth.guard';
import { addressSubject, RateLimiter } from '../rate-limit/rate-limiter';
import { UnauthorizedError } from './domain-errors';
import { toErrorResponse } from './http-exception.filter';
import { ROUTE_AUTH } from './route-auth';

/**
 * Refuses anonymous calls to routes that need a credential in the request's first phase
 * (onRequest), before the body is read: a caller without credentials must not get a
 * 25 MB body parsed, nor learn from a 400 how its body would have been read. The guard
 * still resolves and checks the credential of every request that presents one; an
 * anonymous request counts against its client address here, as in the guard.
 */
export function registerEarlyAuth(fastify: FastifyInstance, rateLimiter: RateLimiter | undefined): void {
  fastify.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    const config = req.routeOptions.config as unknown as Record<string, unknown> | undefined;
    if (config?.[ROUTE_AUTH] !== 'credential' || bearerToken(req.headers.authorization)) return;
    let refusal: unknown = new UnauthorizedError(
      'Missing or malformed Authorization header; send "Authorization: Bearer <token>"',
    );
    try {
      await rateLimiter?.admit(addressSubject(req), reply);
    } catch (err) {
      refusal = err;
    }
    const res = toErrorResponse(refusal);
    void reply.code(res.status).headers(res.headers).send({ detail: res.detail });
    return reply; // fastify: an async hook that answered returns the reply
  });
}
