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
 */
export class KeptReads<T> {
  private readonly entries = new Map<string, { version: number; value: T }>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly kind: string,
    private readonly maxEntries = 10_000,
  ) {}

  async read(
    id: string,
    load: () => Promise<{ value: T; version: number } | undefined>,
  ): Promise<T | undefined> {
    const announced = await announcedVersion(this.redis, this.prefix, this.kind, id);
    if (announced !== undefined) {
      const kept = this.entries.get(id);
      if (kept && kept.version === announced) return kept.value;
    }
    const loaded = await load();
    if (loaded && announced !== undefined && loaded.version === announced) {
      if (!this.entries.has(id) && this.entries.size >= this.maxEntries) this.entries.clear();
      this.entries.set(id, loaded);
    } else {
      this.entries.delete(id);
    }
    return loaded?.value;
  }
}

const keyOf = (prefix: string, kind: string, id: string): string => `${prefix}:read-version:${kind}:${id}`;

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
  await redis.eval(ANNOUNCE_SCRIPT, 1, keyOf(prefix, kind, id), String(version));
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
    const held = await redis.get(keyOf(prefix, kind, id));
    if (held === null) return undefined;
    const version = Number(held);
    return Number.isSafeInteger(version) ? version : undefined;
  } catch {
    return undefined;
  }
}
