import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AuthenticatedRequest, bearerToken } from '../auth/auth.guard';
import type { Credential, CredentialResolver } from '../auth/principal';
import {
  addressSubject,
  credentialSubject,
  RateLimiter,
  SKIP_RATE_LIMIT_CONFIG,
} from '../rate-limit/rate-limiter';
import { UnauthorizedError } from './domain-errors';
import { toErrorResponse } from './http-exception.filter';
import { ROUTE_AUTH } from './route-auth';

/**
 * Refuses anonymous calls to routes that need a credential in the request's first phase
 * (onRequest), before the body is read: a caller without credentials must not get a
 * 25 MB body parsed, nor learn from a 400 how its body would have been read. A bearer
 * token is resolved here too, so an invalid one is refused as early; the guard reuses the
 * credential resolved here (resolving again only if this lookup failed) and still checks
 * its membership and scopes. An anonymous request counts against its client address here,
 * as in the guard. A request with a body and a live credential is counted against the
 * credential here too, before its body is read: one over the limit is 429 without being
 * read, a body that then fails to parse (400, 413, 415) or that the input guard refuses
 * still counts and carries the X-RateLimit-* headers, and an upload in progress holds one
 * of the credential's in-flight slots. So is a body sent to a public route, against its
 * client address. Requests without a body (the reads) are counted by the guard, where a
 * kept read's version rides on the admission.
 */
export function registerEarlyAuth(
  fastify: FastifyInstance,
  rateLimiter: RateLimiter | undefined,
  credentials?: CredentialResolver,
): void {
  /** Counts a request with a body against `subject` now; false when it was answered (429). */
  const admitBody = async (req: FastifyRequest, reply: FastifyReply, subject: string): Promise<boolean> => {
    if (!rateLimiter || !carriesBody(req)) return true;
    try {
      await rateLimiter.admit(subject, reply);
    } catch (err) {
      const res = toErrorResponse(err);
      void reply.code(res.status).headers(res.headers).send({ detail: res.detail });
      return false;
    }
    (req as AuthenticatedRequest).admittedEarly = true;
    return true;
  };

  fastify.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    const config = req.routeOptions.config as unknown as Record<string, unknown> | undefined;
    const auth = config?.[ROUTE_AUTH];
    if (auth === 'public') {
      // An anonymous body is counted against its client address before it is read, unless
      // the route is exempt from limits (@SkipRateLimit: health checks, providers' webhooks).
      if (config?.[SKIP_RATE_LIMIT_CONFIG] === true) return;
      return (await admitBody(req, reply, addressSubject(req))) ? undefined : reply;
    }
    if (auth !== 'credential') return;
    const token = bearerToken(req.headers.authorization);
    // The refusal is built only when one is answered: an error's stack trace costs more than
    // the rest of this hook on the (common) path that lets the request through.
    let refusal: () => unknown = () =>
      new UnauthorizedError(
        'Missing or malformed Authorization header; send "Authorization: Bearer <token>"',
      );
    if (token) {
      // Any string after "Bearer" is not a credential: a made-up token must not get its
      // body parsed either. Resolved once here; the guard reuses it.
      let credential: Credential | undefined;
      try {
        credential = await credentials?.resolve(token);
      } catch {
        return; // the guard resolves again and answers (and logs) the failure as for any request
      }
      if (!credentials || credential) {
        if (!credential) return;
        (req as AuthenticatedRequest).earlyCredential = { token, credential };
        // The guard refuses the assistant's kind (and counts that against the address).
        if (credential.kind === 'assistant') return;
        return (await admitBody(req, reply, credentialSubject(credential))) ? undefined : reply;
      }
      refusal = () => new UnauthorizedError('The credential is invalid, expired or revoked');
    }
    try {
      await rateLimiter?.admit(addressSubject(req), reply);
    } catch (err) {
      refusal = () => err;
    }
    const res = toErrorResponse(refusal());
    void reply.code(res.status).headers(res.headers).send({ detail: res.detail });
    return reply; // fastify: an async hook that answered returns the reply
  });
}

/** Whether the request announces a body (a length other than 0, or chunks). */
function carriesBody(req: FastifyRequest): boolean {
  const length = req.headers['content-length'];
  if (length !== undefined) return length !== '0';
  return req.headers['transfer-encoding'] !== undefined;
}
