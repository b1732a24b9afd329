import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type Redis from 'ioredis';

/**
 * Answers of a hot single-row read kept in each process, served again without asking
 * PostgreSQL while Redis says that no newer version of the row was ever about to commit.
 *
 * The row carries a version that moves with every change its answer shows (the ETag's).
 * The projection writing the row announces each version it is about to commit, inside its
 * transaction and before the commit (`announceVersion`: Redis keeps the highest announced;
 * a failure fails the batch, which is retried). A read asks Redis for the highest announced
 * version first, then:
 * - the kept answer is served only when its version is exactly that one;
 * - otherwise the row is read from PostgreSQL, and kept only when its version is exactly
 *   that one (a higher announced version is a commit under way or rolled back: served from
 *   PostgreSQL, kept by nobody, until a read finds it committed).
 * A write answered to its client has passed its projection (read-your-writes), whose
 * announcement came before its commit: any read that starts after the answer, in any
 * process, sees an announced version at least the write's, so no answer kept from before
 * it can match. Nothing is kept or served from memory while the announced version is
 * unknown (no key, as after a Redis flush: until the row's next change; Redis not ready,
 * or an error): the read goes to PostgreSQL, as without this cache.
 *
 * A kept answer also lives at most `maxAgeMs` (default 1 s): a change that moves no version
 * (a projection rebuilt with new code, whose replay repeats the versions; a migration
 * rewriting rows) shows within that bound, as a revocation does in the auth cache.
 *
 * On a route marked @KeptRead the announced version rides on the rate limiter's admission
 * (the guard passes its key to the same script call) and reaches the handler through
 * @PeekedVersion: no round trip of its own.
 */
export class KeptReads<T> {
  private readonly entries = new Map<string, { version: number; value: T; until: number }>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly kind: string,
    private readonly maxAgeMs = 1000,
    private readonly maxEntries = 10_000,
  ) {}

  /**
   * `peeked`: the announced version as the guard read it with the admission (a string, or
   * null when none is announced); undefined to read it here.
   */
  async read(
    id: string,
    load: () => Promise<{ value: T; version: number } | undefined>,
    peeked?: string | null,
  ): Promise<T | undefined> {
    const announced =
      peeked === undefined
        ? await announcedVersion(this.redis, this.prefix, this.kind, id)
        : parseVersion(peeked);
    if (announced !== undefined) {
      const kept = this.entries.get(id);
      if (kept && kept.version === announced && kept.until > Date.now()) return kept.value;
    }
    const started = Date.now();
    const loaded = await load();
    if (loaded && announced !== undefined && loaded.version === announced && this.maxAgeMs > 0) {
      if (!this.entries.has(id) && this.entries.size >= this.maxEntries) this.entries.clear();
      this.entries.set(id, { ...loaded, until: started + this.maxAgeMs });
    } else {
      this.entries.delete(id);
    }
    return loaded?.value;
  }
}

/** The Redis key holding the highest version announced for row `id` of `kind`. */
export const versionKey = (prefix: string, kind: string, id: string): string =>
  `${prefix}:read-version:${kind}:${id}`;

function parseVersion(held: string | null): number | undefined {
  if (held === null) return undefined;
  const version = Number(held);
  return Number.isSafeInteger(version) ? version : undefined;
}

export const KEPT_READ = 'http:kept-read';

/** What a @KeptRead route declares: its KeptReads kind, and the path parameter naming the row. */
export interface KeptReadRoute {
  kind: string;
  param: string;
}

/**
 * A read-only route whose handler reads the row named by path parameter `param` through
 * KeptReads of `kind`: the guard reads the row's announced version in the rate limiter's
 * call, and @PeekedVersion gives it to the handler. Only on routes that append nothing
 * before that read: a version read at admission predates the request's own writes.
 */
export const KeptRead = (kind: string, param: string): MethodDecorator =>
  SetMetadata(KEPT_READ, { kind, param } satisfies KeptReadRoute);

/** Set by the guard on a @KeptRead route when the admission read the version (see KeptReads.read). */
export interface PeekingRequest {
  peekedVersion?: string | null;
}

/** The announced version the guard read with the admission, or undefined (not read: read it yourself). */
export const PeekedVersion = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): string | null | undefined =>
    ctx.switchToHttp().getRequest<PeekingRequest>().peekedVersion,
);

/** Keeps the higher of the stored and the given version (a replay or a retry never lowers it). */
const ANNOUNCE_SCRIPT = `
local held = tonumber(redis.call('GET', KEYS[1]))
if held == nil or tonumber(ARGV[1]) > held then redis.call('SET', KEYS[1], ARGV[1]) end
return 1`;

/**
 * For the projection writing a kept row: call inside its transaction, before the row at
 * `version` commits. Throws when Redis does not take it, so that the batch fails and is
 * retried rather than committing a version no process would know it has to reload.
 */
export async function announceVersion(
  redis: Redis,
  prefix: string,
  kind: string,
  id: string,
  version: number,
): Promise<void> {
  await redis.eval(ANNOUNCE_SCRIPT, 1, versionKey(prefix, kind, id), String(version));
}

/** The highest version announced for the row, or undefined when unknown (see KeptReads). */
export async function announcedVersion(
  redis: Redis,
  prefix: string,
  kind: string,
  id: string,
): Promise<number | undefined> {
  // Not ready: a command would wait in the offline queue; PostgreSQL answers meanwhile.
  if (redis.status !== 'ready') return undefined;
  try {
    return parseVersion(await redis.get(versionKey(prefix, kind, id)));
  } catch {
    return undefined;
  }
}
