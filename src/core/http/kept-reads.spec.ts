import Redis from 'ioredis';
import { clearRedisPrefix, TEST_REDIS_URL, testRedisPrefix } from '../../../test/support/redis';
import { announcedVersion, announceVersion, KeptReads } from './kept-reads';

/** KeptReads against the real Redis: what is served from memory, and when PostgreSQL is asked. */
describe('KeptReads', () => {
  const prefix = testRedisPrefix();
  let redis: Redis;

  beforeAll(async () => {
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 2 });
    await new Promise<void>((resolve) => redis.once('ready', () => resolve()));
  });

  afterAll(async () => {
    await clearRedisPrefix(prefix);
    redis.disconnect();
  });

  /** A row in "PostgreSQL": its loads are counted. */
  function row(initial: { name: string; version: number }) {
    const state = { ...initial, loads: 0 };
    const load = () => {
      state.loads++;
      return Promise.resolve({ value: { name: state.name }, version: state.version });
    };
    return { state, load };
  }

  it('serves the kept answer while the announced version is the one it was read at', async () => {
    const reads = new KeptReads<{ name: string }>(redis, prefix, 'thing');
    const { state, load } = row({ name: 'a', version: 1 });
    await announceVersion(redis, prefix, 'thing', 'k1', 1);
    expect(await reads.read('k1', load)).toEqual({ name: 'a' });
    expect(await reads.read('k1', load)).toEqual({ name: 'a' });
    expect(state.loads).toBe(1);

    // The projection announces version 2 before its commit: the kept answer is stale at once.
    await announceVersion(redis, prefix, 'thing', 'k1', 2);
    state.name = 'b';
    state.version = 2;
    expect(await reads.read('k1', load)).toEqual({ name: 'b' });
    expect(await reads.read('k1', load)).toEqual({ name: 'b' });
    expect(state.loads).toBe(2);
  });

  it('keeps nothing read below the announced version (a commit under way or rolled back)', async () => {
    const reads = new KeptReads<{ name: string }>(redis, prefix, 'thing');
    const { state, load } = row({ name: 'old', version: 4 });
    await announceVersion(redis, prefix, 'thing', 'k2', 5); // version 5 not committed (yet)
    expect(await reads.read('k2', load)).toEqual({ name: 'old' });
    expect(await reads.read('k2', load)).toEqual({ name: 'old' });
    expect(state.loads).toBe(2);
    state.name = 'new';
    state.version = 5; // committed
    expect(await reads.read('k2', load)).toEqual({ name: 'new' });
    expect(await reads.read('k2', load)).toEqual({ name: 'new' });
    expect(state.loads).toBe(3);
  });

  it('reads through while no version is announced (a row never announced, a flushed Redis)', async () => {
    const reads = new KeptReads<{ name: string }>(redis, prefix, 'thing');
    const { state, load } = row({ name: 'a', version: 3 });
    await reads.read('k3', load);
    await reads.read('k3', load);
    expect(state.loads).toBe(2);

    await announceVersion(redis, prefix, 'thing', 'k3', 3);
    await reads.read('k3', load);
    await reads.read('k3', load);
    expect(state.loads).toBe(3);
    await redis.del(`${prefix}:read-version:thing:k3`);
    await reads.read('k3', load);
    await reads.read('k3', load);
    expect(state.loads).toBe(5);
  });

  it('serves a kept answer for at most its age, whatever the version (a rebuild repeats versions)', async () => {
    const reads = new KeptReads<{ name: string }>(redis, prefix, 'thing', 100);
    const { state, load } = row({ name: 'a', version: 1 });
    await announceVersion(redis, prefix, 'thing', 'k7', 1);
    await reads.read('k7', load);
    await reads.read('k7', load);
    expect(state.loads).toBe(1);
    state.name = 'rebuilt'; // same version, new content
    await new Promise((r) => setTimeout(r, 150));
    expect(await reads.read('k7', load)).toEqual({ name: 'rebuilt' });
    expect(state.loads).toBe(2);
    // An age of 0 keeps nothing.
    const none = new KeptReads<{ name: string }>(redis, prefix, 'thing', 0);
    await none.read('k7', load);
    await none.read('k7', load);
    expect(state.loads).toBe(4);
  });

  it('takes the version read with the admission when given one (null: none announced)', async () => {
    const reads = new KeptReads<{ name: string }>(redis, prefix, 'thing');
    const { state, load } = row({ name: 'a', version: 2 });
    // What Redis holds does not matter then: the peeked version is the one read.
    await announceVersion(redis, prefix, 'thing', 'k6', 9);
    await reads.read('k6', load, '2');
    expect(await reads.read('k6', load, '2')).toEqual({ name: 'a' });
    expect(state.loads).toBe(1);
    await reads.read('k6', load, '3');
    await reads.read('k6', load, null);
    await reads.read('k6', load, 'not a number');
    expect(state.loads).toBe(4);
    // Undefined: not peeked, so Redis is asked (9, above what PostgreSQL holds: read through).
    await reads.read('k6', load);
    expect(state.loads).toBe(5);
  });

  it('keeps the highest version announced: a replay or a retry never lowers it', async () => {
    await announceVersion(redis, prefix, 'thing', 'k4', 7);
    await announceVersion(redis, prefix, 'thing', 'k4', 3);
    expect(await announcedVersion(redis, prefix, 'thing', 'k4')).toBe(7);
    await announceVersion(redis, prefix, 'thing', 'k4', 8);
    expect(await announcedVersion(redis, prefix, 'thing', 'k4')).toBe(8);
    // Kinds and ids apart.
    expect(await announcedVersion(redis, prefix, 'other', 'k4')).toBeUndefined();
  });

  it('reads through without a ready connection, and an announcement then fails', async () => {
    const offline = new Redis(TEST_REDIS_URL, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
    });
    try {
      const reads = new KeptReads<{ name: string }>(offline, prefix, 'thing');
      const { state, load } = row({ name: 'a', version: 1 });
      await announceVersion(redis, prefix, 'thing', 'k5', 1);
      await reads.read('k5', load);
      await reads.read('k5', load);
      expect(state.loads).toBe(2);
      await expect(announceVersion(offline, prefix, 'thing', 'k5', 2)).rejects.toThrow();
    } finally {
      offline.disconnect();
    }
  });
});
