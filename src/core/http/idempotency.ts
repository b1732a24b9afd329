import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { HEADERS_METADATA } from '@nestjs/common/constants';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Redis from 'ioredis';
import { createCipheriv, createDecipheriv, createHash, randomBytes, randomUUID } from 'node:crypto';
import { AdmittedRequestHook, AuthenticatedRequest, bearerToken } from '../auth/auth.guard';
import { APP_CONFIG, AppConfig } from '../config/config';
import { JsonLogger } from '../logging/json-logger';
import { REDIS } from '../redis/redis';
import { ConflictError, DomainError, ValidationError } from './domain-errors';

/**
 * `Idempotency-Key` on POST (DESIGN.md, HTTP conventions): the first response to a key is
 * replayed for 24 h to the same credential, so a client may retry a write whose answer it
 * lost without doing it twice. The record lives in Redis, so every API process honours it.
 *
 * - The key is scoped to the credential (kind + id): another credential's key of the same
 *   text is another request. Public routes ignore the header: an anonymous response cannot
 *   be bound to its client (addresses are shared behind NAT and proxies), and replaying it
 *   to whoever guesses the key would hand one client's answer to another.
 * - A request is fingerprinted by method, path and canonical JSON body; the same key with
 *   another fingerprint is 422 naming the header.
 * - The first request takes the key with SET NX (a pending record); a duplicate arriving
 *   meanwhile waits for it (bounded) and replays its answer, or gets 409. Never a second
 *   execution while the first may still run.
 * - What is kept is what was sent: an onSend hook captures status, body and the headers that
 *   describe the result (Content-Type, Location, ETag), errors included. 5xx are not kept:
 *   the key is released so a retry may execute. Rate-limit and request-id headers are the
 *   replay's own.
 * - Answers carry secrets (a new API key, a member token), so the kept response is sealed
 *   (AES-256-GCM) with a key derived from the bearer token and the Idempotency-Key: Redis
 *   holds nothing a reader of it could use, and only the same credential can open it.
 */

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** How long a completed response is replayed. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
/**
 * How long a pending record holds the key if its process dies before answering; far
 * longer than any request may take (read-your-writes waits at most a few seconds).
 */
const PENDING_TTL_SECONDS = 10 * 60;
/** How long a duplicate waits for the first request before it is answered 409. */
const DUPLICATE_WAIT_MS = 10_000;
const POLL_MS = 25;
const KEPT_HEADERS = ['content-type', 'location', 'etag'] as const;
const VALID_KEY = /^[\x20-\x7e]{1,255}$/;

class IdempotencyKeyMismatchError extends DomainError {
  readonly status = 422;
}

interface Pending {
  state: 'pending';
  owner: string;
  fingerprint: string;
}
/** What a replay sends; kept sealed (see seal). */
interface KeptResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}
interface Completed {
  state: 'completed';
  fingerprint: string;
  sealed: string;
}
type StoredRecord = Pending | Completed;

/** The key this request holds, until its response is kept or the key released. */
interface Claim {
  redisKey: string;
  /** The pending record exactly as stored: the compare-and-set operand. */
  pending: string;
  fingerprint: string;
  sealingKey: Buffer;
  settled: boolean;
  /** The client went away before the answer was sent (see admitted). */
  abandoned?: boolean;
}

const CLAIM = Symbol('idempotencyClaim');
type ClaimingRequest = FastifyRequest & { [CLAIM]?: Claim };

/** Replaces or deletes the record only while it is still this request's pending one. */
const SETTLE_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3]) end
return 1`;

/** 400 unless the header is one value of 1-255 printable ASCII characters. */
export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== 'string' || !VALID_KEY.test(header))
    throw new ValidationError(
      `${IDEMPOTENCY_HEADER}: expected one value of 1 to 255 printable ASCII characters`,
    );
  return header;
}

/** JSON with object keys sorted, so key order does not make two bodies differ. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object' && !Buffer.isBuffer(value)) {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  if (Buffer.isBuffer(value)) return JSON.stringify(value.toString('base64'));
  return JSON.stringify(value) ?? 'null';
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** Only a request bearing the same token and Idempotency-Key derives the same key. */
const sealingKeyFor = (token: string, key: string): Buffer =>
  createHash('sha256').update(`idempotency\0${token}\0${key}`).digest();

function seal(key: Buffer, response: KeptResponse): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(JSON.stringify(response), 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), data].map((b) => b.toString('base64')).join('.');
}

function unseal(key: Buffer, sealed: string): KeptResponse {
  const [iv, tag, data] = sealed.split('.').map((part) => Buffer.from(part, 'base64'));
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAuthTag(tag);
  return JSON.parse(
    Buffer.concat([decipher.update(data), decipher.final()]).toString('utf8'),
  ) as KeptResponse;
}

/**
 * A kept answer to send again: thrown by the guard's admission (below) so that the handler
 * never runs, and answered as it is by the exception filter (core/http/http-exception.filter.ts).
 */
export class ReplayedResponse {
  constructor(
    readonly status: number,
    readonly headers: Record<string, string>,
    readonly body: string,
  ) {}

  send(reply: FastifyReply): void {
    void reply.status(this.status).headers(this.headers).header(REPLAYED_HEADER, 'true').send(this.body);
  }
}

/**
 * Run by the authentication guard once it let a request through (AdmittedRequestHook), for
 * a POST by a credential that sends the header: it takes the key, or replays the kept
 * answer (ReplayedResponse), before the body is validated and the handler runs, as the
 * interceptor it was did. Not a Nest interceptor: any interceptor costs every request of
 * its routes two AsyncResource bindings and rxjs operators.
 */
@Injectable()
export class IdempotencyInterceptor implements AdmittedRequestHook, OnModuleInit {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly adapterHost: HttpAdapterHost,
    private readonly logger: JsonLogger,
  ) {}

  /** One onSend hook for every route keeps what a claiming request answered (see settle). */
  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    if (!fastify) return; // the worker and the CLI build the application without HTTP
    // A callback hook, not an async one: the requests without a claim (nearly all) pass
    // without a promise of their own.
    fastify.addHook(
      'onSend',
      (
        req: ClaimingRequest,
        reply: FastifyReply,
        payload: unknown,
        done: (err: null, p: unknown) => void,
      ) => {
        const claim = req[CLAIM];
        if (!claim || claim.settled) return done(null, payload);
        // The answer still goes out; its pending record then expires on its own.
        this.settle(claim, reply, payload)
          .catch((err: unknown) =>
            this.logger.event('error', {
              msg: 'idempotency record not saved',
              requestId: req.id,
              err: err instanceof Error ? err.message : String(err),
            }),
          )
          .finally(() => done(null, payload));
      },
    );
  }

  /**
   * A POST by a credential with the header: takes its key, or throws the kept answer
   * (ReplayedResponse) with the route's own headers (@Header) set first, as Nest set them
   * before an interceptor replayed. Every other request passes at once.
   */
  async admitted(req: AuthenticatedRequest, reply: FastifyReply, handler: object): Promise<void> {
    if (req.method !== 'POST' || !req.principal || req.headers['idempotency-key'] === undefined) return;
    const key = parseIdempotencyKey(req.headers['idempotency-key']);
    if (key === undefined) return;

    const { kind, credentialId } = req.principal.credential;
    const redisKey = `${this.config.redisPrefix}:idempotency:${kind}:${credentialId}:${sha256(key)}`;
    const fingerprint = sha256(`${req.method} ${req.url}\n${canonicalJson(req.body)}`);
    const sealingKey = sealingKeyFor(bearerToken(req.headers.authorization) ?? credentialId, key);
    const outcome = await this.claim(redisKey, fingerprint);

    if ('completed' in outcome) {
      const { status, headers, body } = unseal(sealingKey, outcome.completed.sealed);
      const own = Reflect.getMetadata(HEADERS_METADATA, handler) as
        { name: string; value: string }[] | undefined;
      for (const h of own ?? []) void reply.header(h.name, h.value);
      throw new ReplayedResponse(status, headers, body);
    }
    const claim: Claim = { redisKey, pending: outcome.pending, fingerprint, sealingKey, settled: false };
    (req as ClaimingRequest)[CLAIM] = claim;
    // A client that drops its connection does not free the key: the request still runs to
    // its answer, which reaches onSend (Nest sends it whether or not anyone listens), and a
    // retry meanwhile must wait for it, never execute a second time. Only a refusal is then
    // released rather than kept (an upload cut off mid-way answers 4xx for a body it never
    // got); a process that dies holds the key for PENDING_TTL_SECONDS at most.
    reply.raw.once('close', () => {
      if (!claim.settled) claim.abandoned = true;
    });
  }

  /** Takes the key (pending), or waits for the request that holds it and returns its answer. */
  private async claim(
    redisKey: string,
    fingerprint: string,
  ): Promise<{ pending: string } | { completed: Completed }> {
    const deadline = Date.now() + DUPLICATE_WAIT_MS;
    for (;;) {
      const pending = JSON.stringify({
        state: 'pending',
        owner: randomUUID(),
        fingerprint,
      } satisfies Pending);
      if (await this.redis.set(redisKey, pending, 'EX', PENDING_TTL_SECONDS, 'NX')) return { pending };
      const raw = await this.redis.get(redisKey);
      if (raw === null) continue; // released (a 5xx) or expired since: try to take it
      const record = JSON.parse(raw) as StoredRecord;
      if (record.fingerprint !== fingerprint)
        throw new IdempotencyKeyMismatchError(
          `${IDEMPOTENCY_HEADER}: this key was already used for a different request (method, path or body); send a new key for a new request`,
        );
      if (record.state === 'completed') return { completed: record };
      if (Date.now() >= deadline)
        throw new ConflictError(
          `${IDEMPOTENCY_HEADER}: a request with this key is still in progress; retry once it has completed`,
        );
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /** Keeps the response for replay, or releases the key for a 5xx or a body it cannot keep. */
  private async settle(claim: Claim, reply: FastifyReply, payload: unknown): Promise<void> {
    claim.settled = true;
    const keepable = payload === undefined || payload === null || typeof payload === 'string';
    if (reply.statusCode >= 500 || !keepable || (claim.abandoned && reply.statusCode >= 400))
      return this.release(claim);
    const headers: Record<string, string> = {};
    for (const name of KEPT_HEADERS) {
      const value = reply.getHeader(name);
      if (value !== undefined) headers[name] = String(value);
    }
    const completed: Completed = {
      state: 'completed',
      fingerprint: claim.fingerprint,
      sealed: seal(claim.sealingKey, {
        status: reply.statusCode,
        headers,
        body: typeof payload === 'string' ? payload : '',
      }),
    };
    await this.redis.eval(
      SETTLE_SCRIPT,
      1,
      claim.redisKey,
      claim.pending,
      JSON.stringify(completed),
      IDEMPOTENCY_TTL_SECONDS,
    );
  }

  private async release(claim: Claim): Promise<void> {
    claim.settled = true;
    await this.redis.eval(SETTLE_SCRIPT, 1, claim.redisKey, claim.pending, '', 0);
  }
}
