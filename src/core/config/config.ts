/**
 * Configuration is read once from the environment and validated before anything
 * else starts. A bad value stops the process with one line that names the variable
 * and says what it expects (see main.ts), so an operator never has to read a stack.
 */
export type Role = 'all' | 'api' | 'worker';
export type EventStoreKind = 'postgres' | 'eventstoredb';
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface AppConfig {
  port: number;
  host: string;
  databaseUrl: string;
  /** Connections per PostgreSQL pool (read models and the event store each have one). */
  databasePoolSize: number;
  redisUrl: string;
  /** Prefix of every Redis key (BullMQ queues, rate limits); tests give each file its own. */
  redisPrefix: string;
  role: Role;
  nodeEnv: string;
  logLevel: LogLevel;
  publicBaseUrl: string;
  eventStore: EventStoreKind;
  eventStoreConnectionString: string | undefined;
  /** How long a command's response waits for its projections (read-your-writes). */
  readYourWritesTimeoutMs: number;
  /** How long a resolved credential or membership is reused without an event saying it changed. */
  authCacheTtlMs: number;
  operatorToken: string | undefined;
  /** Failed operator logins on /admin/queues per client address per minute; then 429. */
  operatorLoginAttemptsPerMinute: number;
  rateLimitPerMinute: number;
  rateLimitConcurrency: number;
  /** Password sign-ins per account and per client address per minute; then refused. */
  signInAttemptsPerMinute: number;
  /** Whether RFC 7591 dynamic registration may create confidential clients (else public only). */
  oauthRegistrationConfidential: boolean;
  /** Redis of the rate limiter when not REDIS_URL (unset: REDIS_URL). */
  rateLimitRedisUrl: string | undefined;
  /** Lifetimes in days; fractions allowed (tests use seconds' worth). */
  memberTokenTtlDays: number;
  invitationTtlDays: number;
  shutdownTimeoutMs: number;
  /** Browser origins allowed to call the API (CORS); empty: no CORS headers at all. */
  corsOrigins: string[];
  /** Fastify's trustProxy: false, true, a hop count, or addresses/CIDRs of trusted proxies. */
  trustProxy: boolean | number | string;
  /** Projection batch size when catching up. */
  projectionBatchSize: number;
  /** A queue worker's lock on its job; renewed at half this while the job runs. */
  queueLockDurationMs: number;
  /** How often workers look for jobs whose worker died (lock expired) and put them back. */
  queueStalledIntervalMs: number;
  /** Stalls a job may survive before it is failed (a job that kills its worker every time). */
  queueMaxStalledCount: number;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    expectation: string,
  ) {
    super(`${variable}: ${expectation}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

interface VarSpec<T> {
  name: string;
  default: string | undefined;
  describe: string;
  parse: (raw: string, name: string) => T;
}

function integer(min: number, max: number) {
  return (raw: string, name: string): number => {
    if (!/^\d+$/.test(raw.trim()))
      throw new ConfigError(name, `expected an integer from ${min} to ${max}, got "${raw}"`);
    const n = Number(raw.trim());
    if (n < min || n > max)
      throw new ConfigError(name, `expected an integer from ${min} to ${max}, got "${raw}"`);
    return n;
  };
}

/** A positive number of days, fractions allowed ("0.5" is twelve hours). */
function days(max: number) {
  return (raw: string, name: string): number => {
    const v = raw.trim();
    const n = Number(v);
    if (!/^\d+(\.\d+)?$/.test(v) || n <= 0 || n > max)
      throw new ConfigError(name, `expected a number of days above 0 and at most ${max}, got "${raw}"`);
    return n;
  };
}

function oneOf<T extends string>(values: readonly T[]) {
  return (raw: string, name: string): T => {
    const v = raw.trim().toLowerCase() as T;
    if (!values.includes(v))
      throw new ConfigError(name, `expected one of ${values.join(' | ')}, got "${raw}"`);
    return v;
  };
}

function url(protocols: string[]) {
  return (raw: string, name: string): string => {
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      throw new ConfigError(name, `expected a URL (${protocols.join(' or ')}), got a malformed value`);
    }
    if (!protocols.includes(parsed.protocol.replace(/:$/, ''))) {
      throw new ConfigError(
        name,
        `expected a URL with scheme ${protocols.join(' or ')}, got "${parsed.protocol}"`,
      );
    }
    return raw;
  };
}

const text = (raw: string): string => raw;

/** The client address (rate limits per address, logs) comes from X-Forwarded-For only behind trusted proxies. */
function trustProxy(raw: string, name: string): boolean | number | string {
  const v = raw.trim().toLowerCase();
  if (v === '' || v === 'false') return false;
  if (v === 'true') return true;
  if (/^\d{1,2}$/.test(v)) return Number(v);
  const parts = v.split(',').map((x) => x.trim());
  if (parts.every((x) => /^[0-9a-f.:]+(\/\d{1,3})?$/.test(x))) return parts.join(',');
  throw new ConfigError(name, `expected false, true, a hop count or comma-separated addresses, got "${raw}"`);
}
const optionalText = (raw: string): string | undefined => (raw === '' ? undefined : raw);

/** Exact origins only (scheme://host[:port]): a wildcard would hand every site the API's answers. */
function origins(raw: string, name: string): string[] {
  const list = raw
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  for (const origin of list) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin) {
      throw new ConfigError(
        name,
        `expected comma-separated exact origins such as https://app.example.com (scheme, host and port only, no wildcard, path or trailing slash), got "${origin}"`,
      );
    }
  }
  return list;
}

/** Every variable the service reads; the README's configuration table mirrors this list. */
export const CONFIG_VARIABLES = {
  port: { name: 'PORT', default: '3000', describe: 'HTTP port', parse: integer(0, 65535) },
  host: { name: 'HOST', default: '0.0.0.0', describe: 'HTTP bind address', parse: text },
  databaseUrl: {
    name: 'DATABASE_URL',
    default: 'postgres://postgres@127.0.0.1:5432/workspace',
    describe: 'PostgreSQL URL; the database is created at start when missing',
    parse: url(['postgres', 'postgresql']),
  },
  databasePoolSize: {
    name: 'DATABASE_POOL_SIZE',
    default: '10',
    describe: 'connections per PostgreSQL pool (read models and the PostgreSQL event store each have one)',
    parse: integer(1, 200),
  },
  redisUrl: {
    name: 'REDIS_URL',
    default: 'redis://127.0.0.1:6379',
    describe: 'Redis URL',
    parse: url(['redis', 'rediss']),
  },
  redisPrefix: { name: 'REDIS_PREFIX', default: 'ws', describe: 'prefix of every Redis key', parse: text },
  role: {
    name: 'ROLE',
    default: 'all',
    describe: 'all | api | worker',
    parse: oneOf(['all', 'api', 'worker'] as const),
  },
  nodeEnv: {
    name: 'NODE_ENV',
    default: 'development',
    describe: 'development | production | test',
    parse: oneOf(['development', 'production', 'test'] as const),
  },
  logLevel: {
    name: 'LOG_LEVEL',
    default: 'info',
    describe: 'debug | info | warn | error | silent',
    parse: oneOf(['debug', 'info', 'warn', 'error', 'silent'] as const),
  },
  publicBaseUrl: {
    name: 'PUBLIC_BASE_URL',
    // Unset, it follows PORT (see loadConfig), so the docs page's "Try it out" reaches this server.
    default: '',
    describe: 'the address clients use, including /api/v2; unset: http://localhost:<PORT>/api/v2',
    parse: (raw: string, name: string) => (raw === '' ? '' : url(['http', 'https'])(raw, name)),
  },
  eventStore: {
    name: 'EVENT_STORE',
    default: 'postgres',
    describe: 'postgres | eventstoredb',
    parse: oneOf(['postgres', 'eventstoredb'] as const),
  },
  eventStoreConnectionString: {
    name: 'EVENTSTORE_CONNECTION_STRING',
    default: '',
    describe: 'esdb:// connection string, required when EVENT_STORE=eventstoredb',
    parse: optionalText,
  },
  readYourWritesTimeoutMs: {
    name: 'READ_YOUR_WRITES_TIMEOUT_MS',
    default: '5000',
    describe: 'how long a write waits for its projections, in ms',
    parse: integer(0, 600_000),
  },
  authCacheTtlMs: {
    name: 'AUTH_CACHE_TTL_MS',
    default: '1000',
    describe:
      'how long a resolved credential or membership is reused, in ms, unless an event changes it sooner (0: not cached)',
    parse: integer(0, 60_000),
  },
  operatorToken: {
    name: 'OPERATOR_TOKEN',
    default: '',
    describe: 'bearer token for /admin/queues; unset disables the board',
    parse: optionalText,
  },
  operatorLoginAttemptsPerMinute: {
    name: 'OPERATOR_LOGIN_ATTEMPTS_PER_MINUTE',
    default: '10',
    describe: 'failed operator logins on /admin/queues per client address per minute, then 429',
    parse: integer(1, 10_000),
  },
  rateLimitPerMinute: {
    name: 'RATE_LIMIT_PER_MINUTE',
    default: '100',
    describe: 'requests per minute per credential',
    parse: integer(1, 1_000_000),
  },
  rateLimitConcurrency: {
    name: 'RATE_LIMIT_CONCURRENCY',
    default: '10',
    describe: 'requests in flight per credential',
    parse: integer(1, 10_000),
  },
  signInAttemptsPerMinute: {
    name: 'SIGN_IN_ATTEMPTS_PER_MINUTE',
    default: '10',
    describe: 'failed password sign-ins per account and per client address per minute, then refused',
    parse: integer(1, 10_000),
  },
  oauthRegistrationConfidential: {
    name: 'OAUTH_REGISTRATION_CONFIDENTIAL',
    default: 'false',
    describe: 'true: POST /oauth/register may create confidential clients; false: public clients only',
    parse: (raw: string, name: string) => oneOf(['true', 'false'] as const)(raw, name) === 'true',
  },
  rateLimitRedisUrl: {
    name: 'RATE_LIMIT_REDIS_URL',
    default: '',
    describe: 'Redis URL of the rate limiter; unset: REDIS_URL',
    parse: (raw: string, name: string) => (raw === '' ? undefined : url(['redis', 'rediss'])(raw, name)),
  },
  memberTokenTtlDays: {
    name: 'MEMBER_TOKEN_TTL_DAYS',
    default: '30',
    describe: 'lifetime of signup member tokens, in days (fractions allowed)',
    parse: days(3650),
  },
  invitationTtlDays: {
    name: 'INVITATION_TTL_DAYS',
    default: '14',
    describe: 'lifetime of invitations, in days (fractions allowed); a worker records each lapse',
    parse: days(3650),
  },
  trustProxy: {
    name: 'TRUST_PROXY',
    default: 'false',
    describe:
      'which proxies X-Forwarded-For is believed from: false, true, a hop count, or comma-separated addresses/CIDRs',
    parse: trustProxy,
  },
  corsOrigins: {
    name: 'CORS_ORIGINS',
    default: '',
    describe: 'comma-separated browser origins allowed by CORS; unset: no CORS headers',
    parse: origins,
  },
  shutdownTimeoutMs: {
    name: 'SHUTDOWN_TIMEOUT_MS',
    default: '10000',
    describe: 'grace period for in-flight work on SIGTERM',
    parse: integer(0, 600_000),
  },
  projectionBatchSize: {
    name: 'PROJECTION_BATCH_SIZE',
    default: '500',
    describe: 'events per projection transaction',
    parse: integer(1, 100_000),
  },
  queueLockDurationMs: {
    name: 'QUEUE_LOCK_DURATION_MS',
    default: '30000',
    describe:
      "job lock of a queue worker, in ms; a dead worker's job is retried after at most this plus the stalled interval",
    parse: integer(1000, 3_600_000),
  },
  queueStalledIntervalMs: {
    name: 'QUEUE_STALLED_INTERVAL_MS',
    default: '30000',
    describe: 'how often queue workers recover jobs of dead workers, in ms',
    parse: integer(500, 3_600_000),
  },
  queueMaxStalledCount: {
    name: 'QUEUE_MAX_STALLED_COUNT',
    default: '2',
    describe: 'times a job may lose its worker before it is failed',
    parse: integer(0, 1000),
  },
} satisfies { [K in keyof AppConfig]: VarSpec<AppConfig[K]> };

export function loadConfig(env: Env = process.env): AppConfig {
  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(CONFIG_VARIABLES) as [keyof AppConfig, VarSpec<unknown>][]) {
    const raw = env[spec.name];
    const value = raw === undefined ? spec.default : raw;
    out[key] = value === undefined ? undefined : spec.parse(value, spec.name);
  }
  const config = out as unknown as AppConfig;
  config.publicBaseUrl ||= `http://localhost:${config.port}/api/v2`;
  if (config.eventStore === 'eventstoredb' && !config.eventStoreConnectionString) {
    throw new ConfigError('EVENTSTORE_CONNECTION_STRING', 'required when EVENT_STORE=eventstoredb');
  }
  return config;
}

export const APP_CONFIG = Symbol('APP_CONFIG');
