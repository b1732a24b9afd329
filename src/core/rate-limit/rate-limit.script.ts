/**
 * One atomic admission per request, shared by every API process through Redis.
 *
 * KEYS[1] the credential's request log (sorted set, score = admission time in ms):
 *         a sliding window, so "100 per minute" holds over any 60 s, not per clock minute.
 * KEYS[2] its requests in flight (sorted set, score = when the entry stops counting):
 *         a process that dies mid-request leaks a slot for the TTL at most.
 * KEYS[3] optional: a key read in the same call, whatever the outcome (the version a kept
 *         read checks, core/http/kept-reads.ts: it rides on the admission's round trip).
 * ARGV    limit, windowMs, concurrency, inflightTtlMs, member (unique per request), then
 *         the members of this credential's requests that have finished since the last
 *         call from this process: released here first, so that a busy credential costs
 *         one call per request rather than an admission and a release.
 *
 * Returns {admitted 0|1, remaining, resetAtMs, nowMs, reason, value of KEYS[3] or nil}.
 * Refused requests are not recorded, so a client that waits is not punished for its
 * refused attempts. Time comes from the Redis server so that processes with skewed
 * clocks agree.
 */
export const ADMIT_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local windowMs = tonumber(ARGV[2])
local concurrency = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
local peeked = false
if KEYS[3] then peeked = redis.call('GET', KEYS[3]) end
for i = 6, #ARGV do redis.call('ZREM', KEYS[2], ARGV[i]) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - windowMs)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local used = redis.call('ZCARD', KEYS[1])
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local resetAt = now + windowMs
if oldest[2] then resetAt = tonumber(oldest[2]) + windowMs end
if used >= limit then
  return {0, 0, resetAt, now, 'rate', peeked}
end
if redis.call('ZCARD', KEYS[2]) >= concurrency then
  return {0, limit - used, resetAt, now, 'concurrency', peeked}
end
redis.call('ZADD', KEYS[1], now, ARGV[5])
redis.call('PEXPIRE', KEYS[1], windowMs)
redis.call('ZADD', KEYS[2], now + ttl, ARGV[5])
redis.call('PEXPIRE', KEYS[2], ttl)
return {1, limit - used - 1, resetAt, now, 'ok', peeked}
`;
