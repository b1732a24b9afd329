import { CanActivate, ExecutionContext, Inject, Injectable, Optional } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { APP_CONFIG, AppConfig } from '../config/config';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../http/domain-errors';
import { KEPT_READ, KeptReadRoute, PeekingRequest, versionKey } from '../http/kept-reads';
import { addressSubject, credentialSubject, RateLimiter, SKIP_RATE_LIMIT } from '../rate-limit/rate-limiter';
import { ACCOUNT_SCOPE, PUBLIC_ROUTE, REQUIRED_SCOPE, SELF_POLICY } from './auth.decorators';
import {
  Credential,
  CREDENTIAL_RESOLVER,
  CredentialResolver,
  MEMBERSHIP_RESOLVER,
  Membership,
  MembershipResolver,
  Principal,
} from './principal';
import { grants, intersectScopesOnce } from './scopes';

export interface AuthenticatedRequest extends FastifyRequest, PeekingRequest {
  principal?: Principal;
  actor?: Principal['actor'];
  /** Resolved before the body was read (core/http/early-auth.ts), so the guard does not resolve it twice. */
  earlyCredential?: { token: string; credential: Credential };
  /**
   * The rate limiter already counted the request before its body was read (early-auth.ts: a
   * request with a body, against its credential or, on a public route, its client address),
   * so the guard does not count it twice.
   */
  admittedEarly?: boolean;
}

/**
 * What runs once the guard has let a request through, before its body is validated and its
 * handler runs: `Idempotency-Key` takes its key or replays the kept answer by throwing it
 * (core/http/idempotency.ts). A token, so that core/auth does not import core/http's side.
 */
export interface AdmittedRequestHook {
  admitted(req: AuthenticatedRequest, reply: FastifyReply, handler: object): Promise<void>;
}
export const ADMITTED_REQUEST_HOOK = Symbol('admitted-request-hook');

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What a route declares to the guard, read once per route (decorators never change after start). */
interface RoutePolicy {
  public: boolean;
  skipRateLimit: boolean;
  scope: string | undefined;
  self: boolean;
  accountScope: string | undefined;
  keptRead: KeptReadRoute | undefined;
}

export function bearerToken(header: unknown): string | undefined {
  if (typeof header !== 'string') return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

/**
 * One authentication for every route: the bearer credential resolves to a principal;
 * a route naming {wid} needs an active membership there (else 404, so workspaces
 * cannot be probed); @RequireScope checks the effective scopes (else 403 naming it).
 * Each request is admitted by the rate limiter as soon as it is known whose it is: by
 * credential once resolved, by client address for public routes and failed credentials.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  /** By controller class, then route handler (a handler inherited by two classes may be declared apart). */
  private readonly policies = new WeakMap<object, WeakMap<object, RoutePolicy>>();

  constructor(
    private readonly reflector: Reflector,
    @Inject(CREDENTIAL_RESOLVER) private readonly credentials: CredentialResolver,
    @Inject(MEMBERSHIP_RESOLVER) private readonly memberships: MembershipResolver,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Optional() private readonly rateLimiter?: RateLimiter,
    @Optional() @Inject(ADMITTED_REQUEST_HOOK) private readonly admittedHook?: AdmittedRequestHook,
  ) {}

  private policyOf(context: ExecutionContext): RoutePolicy {
    const handler = context.getHandler();
    const cls = context.getClass();
    let byHandler = this.policies.get(cls);
    if (!byHandler) this.policies.set(cls, (byHandler = new WeakMap()));
    let policy = byHandler.get(handler);
    if (!policy) {
      const targets = [handler, cls];
      const read = <T>(key: string) => this.reflector.getAllAndOverride<T>(key, targets);
      policy = {
        public: read<boolean>(PUBLIC_ROUTE) === true,
        skipRateLimit: read<boolean>(SKIP_RATE_LIMIT) === true,
        scope: read<string | undefined>(REQUIRED_SCOPE),
        self: read<boolean>(SELF_POLICY) === true,
        accountScope: read<string | undefined>(ACCOUNT_SCOPE),
        keptRead: read<KeptReadRoute | undefined>(KEPT_READ),
      };
      byHandler.set(handler, policy);
    }
    return policy;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const policy = this.policyOf(context);
    const req = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const admit = async (subject: string, peek?: string): Promise<string | null | undefined> => {
      if (!this.rateLimiter || policy.skipRateLimit) return undefined;
      return this.rateLimiter.admit(subject, context.switchToHttp().getResponse<FastifyReply>(), peek);
    };
    if (policy.public) {
      if (!req.admittedEarly) await admit(addressSubject(req));
      return true;
    }
    const { scope, self } = policy;
    if (!scope && !self) throw new Error('Route declares neither a scope nor that it is public');

    const token = bearerToken(req.headers.authorization);
    if (!token) {
      await admit(addressSubject(req));
      throw new UnauthorizedError(
        'Missing or malformed Authorization header; send "Authorization: Bearer <token>"',
      );
    }
    const early = req.earlyCredential;
    const credential = early?.token === token ? early.credential : await this.credentials.resolve(token);
    // The assistant's credential is built in-process only; a bearer token never stands for it.
    if (!credential || credential.kind === 'assistant') {
      await admit(addressSubject(req));
      throw new UnauthorizedError('The credential is invalid, expired or revoked');
    }
    const params = req.params as Record<string, string> | undefined;
    // A kept read's version rides on the admission (core/http/kept-reads.ts); it is only
    // used by the handler, once the checks below have let the request through.
    const { keptRead } = policy;
    const keptId = keptRead && params?.[keptRead.param]?.toLowerCase();
    const peeked = req.admittedEarly
      ? undefined
      : await admit(
          credentialSubject(credential),
          keptRead && keptId ? versionKey(this.config.redisPrefix, keptRead.kind, keptId) : undefined,
        );
    if (keptId && peeked !== undefined) req.peekedVersion = peeked;

    const wid = params?.wid;
    let membership: Membership | undefined;
    if (wid !== undefined) {
      if (!UUID.test(wid) || (credential.workspaceId && credential.workspaceId !== wid))
        throw workspaceNotFound();
      membership = await this.memberships.find(wid.toLowerCase(), credential);
      if (!membership) throw workspaceNotFound();
    }
    const principal = principalOf(credential, membership);
    req.principal = principal;
    req.actor = principal.actor;
    if (scope && !self && !grants(principal.effectiveScopes, scope)) {
      throw new ForbiddenError(`This credential lacks the scope ${scope}`);
    }
    // Account scopes are checked against the credential itself, never a role (@RequireAccountScope).
    const accountScope = policy.accountScope;
    if (accountScope && !grants(credential.scopes, accountScope)) {
      throw new ForbiddenError(`This credential lacks the scope ${accountScope}`);
    }
    await this.admittedHook?.admitted(
      req,
      context.switchToHttp().getResponse<FastifyReply>(),
      context.getHandler(),
    );
    return true;
  }
}

/**
 * The principal of a resolved credential, in a workspace when its membership there is
 * given: effective scopes are the credential's ∩ the role's (none for a member token, whose
 * rights come from self-access), and the actor events name (key, token and OAuth client ids).
 * The guard builds every request's principal with it; the MCP endpoint builds its tool
 * calls' principal with it too, so both act as the same caller.
 */
export function principalOf(credential: Credential, membership?: Membership): Principal {
  if (credential.kind === 'assistant') return assistantPrincipalOf(credential, membership);
  const actor: Principal['actor'] = {
    kind: credential.kind,
    id: credential.accountUuid,
    accountUuid: credential.accountUuid,
    memberId: membership?.memberId ?? credential.memberId,
    ...(credential.kind === 'api_key' ? { keyId: credential.credentialId } : {}),
    ...(credential.kind === 'member_token' ? { tokenId: credential.credentialId } : {}),
    ...(credential.kind === 'oauth'
      ? { tokenId: credential.credentialId, clientId: credential.clientId }
      : {}),
  };
  return {
    credential,
    accountUuid: credential.accountUuid,
    membership,
    effectiveScopes:
      !membership || credential.kind === 'member_token'
        ? []
        : intersectScopesOnce(credential.scopes, membership.roleScopes),
    actor,
  };
}

/**
 * The assistant acting as an agent member: the member is the actor (agents need no
 * account), and its effective scopes are its credential's (the role's, see
 * assistantCredential) ∩ the role's, outside its own workspace none.
 */
function assistantPrincipalOf(credential: Credential, membership?: Membership): Principal {
  const own =
    membership !== undefined &&
    membership.workspaceId === credential.workspaceId &&
    membership.memberId === credential.memberId;
  return {
    credential,
    accountUuid: credential.accountUuid,
    membership,
    effectiveScopes: own ? intersectScopesOnce(credential.scopes, membership.roleScopes) : [],
    actor: {
      kind: 'assistant',
      id: String(credential.memberId),
      memberId: credential.memberId,
      ...(credential.accountUuid ? { accountUuid: credential.accountUuid } : {}),
    },
  };
}

function workspaceNotFound(): NotFoundError {
  return new NotFoundError('Workspace not found');
}
