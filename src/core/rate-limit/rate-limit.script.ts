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

/**
 * ADMIT_SCRIPT for several requests of one credential at once, in the order given, with
 * the outcome each would have had in calls of its own at the same instant (the concurrent
 * requests of one turn of a process's event loop: one script run instead of one each).
 *
 * KEYS[1], KEYS[2] as ADMIT_SCRIPT (no peeked key).
 * ARGV    limit, windowMs, concurrency, inflightTtlMs, n, then the n members (one per
 *         request), then the finished members to release first.
 *
 * Returns n entries {admitted 0|1, remaining, resetAtMs, nowMs, reason}.
 */
export const ADMIT_MANY_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local windowMs = tonumber(ARGV[2])
local concurrency = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
local n = tonumber(ARGV[5])
for i = 6 + n, #ARGV do redis.call('ZREM', KEYS[2], ARGV[i]) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - windowMs)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local used = redis.call('ZCARD', KEYS[1])
local inflight = redis.call('ZCARD', KEYS[2])
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local resetAt = now + windowMs
if oldest[2] then resetAt = tonumber(oldest[2]) + windowMs end
local out = {}
local added = false
for j = 1, n do
  local member = ARGV[5 + j]
  if used >= limit then
    out[j] = {0, 0, resetAt, now, 'rate'}
  elseif inflight >= concurrency then
    out[j] = {0, limit - used, resetAt, now, 'concurrency'}
  else
    redis.call('ZADD', KEYS[1], now, member)
    redis.call('ZADD', KEYS[2], now + ttl, member)
    used = used + 1
    inflight = inflight + 1
    added = true
    out[j] = {1, limit - used, resetAt, now, 'ok'}
  end
end
if added then
  redis.call('PEXPIRE', KEYS[1], windowMs)
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return out
`;
