import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/config';
import { CheckpointFeed } from '../projections/checkpoint-feed';

interface Entry {
  value: unknown;
  until: number;
}

/** Entries beyond this are dropped wholesale: a flood of distinct tokens must not grow memory. */
const MAX_ENTRIES = 50_000;

/**
 * Resolved credentials and memberships, reused across requests so that an authenticated
 * request does not read them from PostgreSQL each time. An entry lives until the first of:
 * - a committed projection batch holding an event that changes who may do what (a key or
 *   token revoked, a member archived or given another role, a role's scopes changed, a
 *   role merged or deleted: the features name them through CheckpointFeed.invalidateAuthOn).
 *   The notice comes after the read model's commit, in this process at once and in every
 *   other through NOTIFY, and empties the whole cache (such events are rare);
 * - AUTH_CACHE_TTL_MS (default 1 s), the bound should a notification be lost;
 * - the credential's own expiry (`until` of the caller).
 * Only positive results are kept: an unknown token or a missing membership is asked
 * again, so a new key or membership works at once. Nothing is kept while the LISTEN
 * connection is down, and the cache is emptied when it drops (notices may be lost).
 */
@Injectable()
export class AuthCache implements OnModuleDestroy {
  private readonly entries = new Map<string, Entry>();
  /**
   * Loads under way, by key: the requests that miss one key together (every entry of a
   * busy credential expires at once, each AUTH_CACHE_TTL_MS) share one load instead of
   * each reading the same rows. Only a load of the current generation is joined.
   */
  private readonly loading = new Map<string, { generation: number; value: Promise<unknown> }>();
  /** Bumped by every invalidation: a load that began before it is not stored. */
  private generation = 0;
  private readonly unsubscribe: (() => void)[];
  private failedAt = 0;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly feed: CheckpointFeed,
  ) {
    this.unsubscribe = [
      feed.subscribe((n) => {
        if (n.auth) this.clear();
      }),
      feed.onLost(() => this.clear()),
    ];
  }

  /**
   * The cached value for `key`, else `load()`'s, kept (when defined) until the TTL or
   * `until(value)` (epoch ms), whichever is sooner.
   */
  async get<T>(
    key: string,
    load: () => Promise<T | undefined>,
    until?: (value: T) => number,
  ): Promise<T | undefined> {
    const now = Date.now();
    if (!this.feed.live) {
      // Without the notices of other processes nothing may be kept: connect, and meanwhile
      // read through (a failed connection is retried at most once a second).
      if (this.config.authCacheTtlMs > 0 && now - this.failedAt > 1000)
        this.feed.listen().catch(() => (this.failedAt = Date.now()));
      return load();
    }
    const hit = this.entries.get(key);
    if (hit && hit.until > now) return hit.value as T;
    if (hit) this.entries.delete(key);
    const generation = this.generation;
    const under = this.loading.get(key);
    if (under && under.generation === generation) return under.value as Promise<T | undefined>;
    const loaded = load();
    this.loading.set(key, { generation, value: loaded });
    let value: T | undefined;
    try {
      value = await loaded;
    } finally {
      if (this.loading.get(key)?.value === loaded) this.loading.delete(key);
    }
    const ttl = this.config.authCacheTtlMs;
    if (value === undefined || ttl <= 0 || generation !== this.generation) return value;
    const expires = Math.min(now + ttl, until ? until(value) : Infinity);
    if (expires > Date.now()) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(key, { value, until: expires });
    }
    return value;
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
    this.loading.clear();
  }

  onModuleDestroy(): void {
    this.unsubscribe.forEach((u) => u());
  }
}
