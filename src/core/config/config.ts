/**
 * Configuration is read once from the environment and validated before anything
 * else starts. A bad value stops the process with one line that names the variable
 * and says what it expects (see main.ts), so an operator never has to read a stack.
 */
export type Role = 'all' | 'api' | 'worker';
export type EventStoreKind = 'postgres' | 'eventstoredb';
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
export type BlobStorageKind = 'disk' | 's3';

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
  /** Where uploaded bytes (files, recordings) are kept: a local directory or an S3 bucket. */
  fileStorage: BlobStorageKind;
  fileStorageDir: string;
  /** The largest upload accepted, in bytes; larger is 413 and nothing is kept. */
  fileMaxBytes: number;
  s3Endpoint: string | undefined;
  s3Bucket: string | undefined;
  s3Region: string;
  /** Unset: the AWS SDK's default credential chain (environment, profile, instance role). */
  s3AccessKeyId: string | undefined;
  s3SecretAccessKey: string | undefined;
  /** Path-style addressing (bucket in the path), as MinIO and most S3-compatible servers need. */
  s3ForcePathStyle: boolean;
  /** Webhook URLs may be http:// (never in production). */
  webhookAllowHttp: boolean;
  /** Webhook hosts may resolve to loopback, private, link-local or metadata addresses (tests). */
  webhookAllowPrivateNetworks: boolean;
  /** A delivery attempt not answered within this long counts as failed. */
  webhookTimeoutMs: number;
  /** A refresh of an external MCP server's tools (connect, auth, every tools/list page) not done within this long fails. */
  mcpTimeoutMs: number;
  /** A call recording's download from the provider (answer and body) not done within this long fails, and is retried. */
  recordingFetchTimeoutMs: number;
  /** Waits before each retry of a failed delivery (jittered); its length is the number of retries. */
  webhookRetryDelaysMs: number[];
  /** Delivery jobs in progress per worker process. */
  webhookConcurrency: number;
  /** POSTs in flight to one rule's receiver per worker process (and at most twice as many of its jobs), so one slow receiver cannot take every slot. */
  webhookRuleConcurrency: number;
  /** After a secret rotation, deliveries are signed with the old secret too for this long. */
  webhookSecretOverlapHours: number;
  /** A rule whose every delivery failed for this long is disabled. */
  webhookDisableAfterDays: number;
  /** Event rules one workspace may have (enabled or not): one event fans out to at most this many deliveries. */
  eventRulesMaxPerWorkspace: number;
  /** 32-byte key (base64 or hex) that encrypts stored secrets (webhook signing secrets). */
  secretsEncryptionKey: Buffer;
  /** Which SMS provider sends and receives: `log` (development, logs and reports delivery) or `twilio`. */
  smsProvider: 'log' | 'twilio';
  twilioAccountSid: string | undefined;
  /** Signs and checks webhooks (X-Twilio-Signature) and authenticates REST calls; never logged. */
  twilioAuthToken: string | undefined;
  /** The Twilio-compatible REST API (tests point it at a local peer). */
  twilioApiBaseUrl: string;
  /** Outgoing mail (smtp:// or smtps://); unset, email deliveries are logged and reported delivered. */
  smtpUrl: string | undefined;
  /** From address of outgoing mail when the chat has no inbox of its own. */
  smtpFrom: string;
  /** Shared secret the mail gateway sends in X-Inbound-Email-Secret; unset, inbound mail is refused. */
  inboundEmailSecret: string | undefined;
  /** SMS longer than this many segments is refused (400). */
  smsSegmentLimit: number;
  /** Which language model answers `ai` chats and writes summaries: `none` (no model) or `openai`. */
  assistantProvider: 'none' | 'openai';
  /** Base URL of the OpenAI-compatible API (hosted, vLLM, Ollama, LM Studio). */
  openaiBaseUrl: string;
  /** API key of that server; never logged. */
  openaiApiKey: string | undefined;
  /** Model used when the chat's workflow agent names none. */
  assistantModel: string;
  /** Longest wait for one model answer, in milliseconds. */
  assistantTimeoutMs: number;
  /** A chat with no message for this many minutes is summarised. */
  chatSummaryIdleMinutes: number;
  /** Message deliveries in flight per queue (sms, email, web-chat) per worker process. */
  messageDeliveryConcurrency: number;
  /** Wait after a user message before the assistant answers; later messages of the burst restart it. */
  assistantDebounceMs: number;
  /** Budget of the chat history sent to the model, in tokens (estimated at 4 characters each). */
  assistantHistoryTokens: number;
  /** Most model turns with tool calls before the assistant must answer. */
  assistantMaxToolRounds: number;
  /** Most tool calls one reply runs; the model's calls beyond them are refused unrun. */
  assistantMaxToolCalls: number;
  /** Replies worked on at once per worker process. */
  assistantConcurrency: number;
  /** Attempts of one reply (a retryable model error retries with backoff). */
  assistantAttempts: number;
  /** First backoff between attempts of a reply, doubled each time, in milliseconds. */
  assistantBackoffMs: number;
  /** A message older than this when the assistant's reactor reaches it gets no automatic reply. */
  assistantReplyWindowMinutes: number;
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

/** `true` or `false`; empty: undefined (the caller's default). */
function optionalBoolean(raw: string, name: string): boolean | undefined {
  const v = raw.trim().toLowerCase();
  if (v === '') return undefined;
  if (v === 'true' || v === 'false') return v === 'true';
  throw new ConfigError(name, `expected true or false, got "${raw}"`);
}

function bool(raw: string, name: string): boolean {
  const v = raw.trim().toLowerCase();
  if (v === '' || v === 'false' || v === '0') return false;
  if (v === 'true' || v === '1') return true;
  throw new ConfigError(name, `expected true or false, got "${raw}"`);
}

/** Comma-separated milliseconds, e.g. "0,10000,60000". */
function delays(raw: string, name: string): number[] {
  const parts = raw.split(',').map((x) => x.trim());
  if (!parts.length || parts.length > 50 || parts.some((x) => !/^\d{1,9}$/.test(x)))
    throw new ConfigError(name, `expected comma-separated milliseconds such as 0,10000,60000, got "${raw}"`);
  return parts.map(Number);
}

/**
 * Publicly known key for development and tests only: loadConfig refuses it in production,
 * where a leaked default would decrypt every stored secret.
 */
export const DEV_SECRETS_ENCRYPTION_KEY = 'ZGV2ZWxvcG1lbnQtb25seS1rZXktMzItYnl0ZXMhISE=';

function encryptionKey(raw: string, name: string): Buffer {
  const v = raw.trim();
  const key = /^[0-9a-f]{64}$/i.test(v) ? Buffer.from(v, 'hex') : Buffer.from(v, 'base64');
  if (key.length !== 32 || (!/^[0-9a-f]{64}$/i.test(v) && key.toString('base64') !== v))
    throw new ConfigError(name, 'expected 32 bytes, as 64 hex digits or base64 (openssl rand -base64 32)');
  return key;
}

function positiveNumber(max: number) {
  return (raw: string, name: string): number => {
    const v = raw.trim();
    const n = Number(v);
    if (!/^\d+(\.\d+)?$/.test(v) || n <= 0 || n > max)
      throw new ConfigError(name, `expected a number above 0 and at most ${max}, got "${raw}"`);
    return n;
  };
}

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
  fileStorage: {
    name: 'FILE_STORAGE',
    default: 'disk',
    describe: 'where uploaded files are kept: disk (FILE_STORAGE_DIR) | s3 (S3_BUCKET)',
    parse: oneOf(['disk', 's3'] as const),
  },
  fileStorageDir: {
    name: 'FILE_STORAGE_DIR',
    default: 'data/files',
    describe: 'directory of uploaded files with FILE_STORAGE=disk (created when missing)',
    parse: (raw: string, name: string) => {
      if (!raw.trim()) throw new ConfigError(name, 'expected a directory path, got an empty value');
      return raw;
    },
  },
  fileMaxBytes: {
    name: 'FILE_MAX_BYTES',
    default: String(50 * 1024 * 1024),
    describe: 'largest upload accepted, in bytes (larger: 413, nothing kept)',
    // S3 copies objects of up to 5 GiB in one request (the commit of a staged upload).
    parse: integer(1, 5 * 1024 * 1024 * 1024),
  },
  s3Endpoint: {
    name: 'S3_ENDPOINT',
    default: '',
    describe: 'S3-compatible endpoint URL (MinIO, R2, ...); unset: AWS S3 of S3_REGION',
    parse: (raw: string, name: string) => (raw === '' ? undefined : url(['http', 'https'])(raw, name)),
  },
  s3Bucket: {
    name: 'S3_BUCKET',
    default: '',
    describe: 'bucket of uploaded files, required with FILE_STORAGE=s3',
    parse: optionalText,
  },
  s3Region: { name: 'S3_REGION', default: 'us-east-1', describe: 'S3 region', parse: text },
  s3AccessKeyId: {
    name: 'S3_ACCESS_KEY_ID',
    default: '',
    describe: "S3 access key id; unset: the AWS SDK's default credential chain",
    parse: optionalText,
  },
  s3SecretAccessKey: {
    name: 'S3_SECRET_ACCESS_KEY',
    default: '',
    describe: 'S3 secret access key, with S3_ACCESS_KEY_ID',
    parse: optionalText,
  },
  s3ForcePathStyle: {
    name: 'S3_FORCE_PATH_STYLE',
    default: '',
    describe:
      'true | false: bucket in the path rather than the host name; unset: true when S3_ENDPOINT is set',
    // Resolved against S3_ENDPOINT in loadConfig.
    parse: (raw: string, name: string) => optionalBoolean(raw, name) as boolean,
  },
  webhookAllowHttp: {
    name: 'WEBHOOK_ALLOW_HTTP',
    default: 'false',
    describe: 'accept http:// webhook URLs (refused with NODE_ENV=production)',
    parse: bool,
  },
  webhookAllowPrivateNetworks: {
    name: 'WEBHOOK_ALLOW_PRIVATE_NETWORKS',
    default: 'false',
    describe: 'deliver to hosts resolving to loopback, private, link-local or metadata addresses',
    parse: bool,
  },
  webhookTimeoutMs: {
    name: 'WEBHOOK_TIMEOUT_MS',
    default: '15000',
    describe: 'time a webhook receiver has to answer, in ms',
    parse: integer(100, 600_000),
  },
  recordingFetchTimeoutMs: {
    name: 'RECORDING_FETCH_TIMEOUT_MS',
    default: '120000',
    describe: "time a call recording's download from the provider may take (answer and body), in ms",
    parse: integer(100, 3_600_000),
  },
  mcpTimeoutMs: {
    name: 'MCP_TIMEOUT_MS',
    default: '15000',
    describe: 'time an external MCP server has to list its tools (OAuth and every page included), in ms',
    parse: integer(100, 600_000),
  },
  webhookRetryDelaysMs: {
    name: 'WEBHOOK_RETRY_DELAYS_MS',
    default: '0,10000,60000,300000,1800000,7200000,21600000,43200000',
    describe: 'waits before each retry of a failed delivery, in ms, comma-separated (jittered)',
    parse: delays,
  },
  webhookConcurrency: {
    name: 'WEBHOOK_CONCURRENCY',
    default: '50',
    describe:
      'webhook delivery jobs in progress per worker process (sending, or waiting on their log writes or for a POST slot)',
    parse: integer(1, 10_000),
  },
  webhookRuleConcurrency: {
    name: 'WEBHOOK_RULE_CONCURRENCY',
    default: '10',
    describe:
      "POSTs in flight to one rule's receiver per worker process; one rule holds at most twice as many jobs",
    parse: integer(1, 10_000),
  },
  webhookSecretOverlapHours: {
    name: 'WEBHOOK_SECRET_OVERLAP_HOURS',
    default: '24',
    describe: 'how long deliveries also carry the signature of a rotated-out secret, in hours',
    parse: positiveNumber(24 * 365),
  },
  eventRulesMaxPerWorkspace: {
    name: 'EVENT_RULES_MAX_PER_WORKSPACE',
    default: '100',
    describe: 'event rules one workspace may have, enabled or not; creating one more is 409',
    parse: integer(1, 100_000),
  },
  webhookDisableAfterDays: {
    name: 'WEBHOOK_DISABLE_AFTER_DAYS',
    default: '5',
    describe: 'a rule whose every delivery failed for this long (fractions allowed) is disabled',
    parse: days(3650),
  },
  secretsEncryptionKey: {
    name: 'SECRETS_ENCRYPTION_KEY',
    default: DEV_SECRETS_ENCRYPTION_KEY,
    describe: '32 bytes (base64 or hex) encrypting stored secrets; the default is refused in production',
    parse: encryptionKey,
  },
  smsProvider: {
    name: 'SMS_PROVIDER',
    default: 'log',
    describe: 'log | twilio',
    parse: oneOf(['log', 'twilio'] as const),
  },
  twilioAccountSid: {
    name: 'TWILIO_ACCOUNT_SID',
    default: '',
    describe: 'Twilio account SID; required with SMS_PROVIDER=twilio',
    parse: optionalText,
  },
  twilioAuthToken: {
    name: 'TWILIO_AUTH_TOKEN',
    default: '',
    describe: 'Twilio auth token (REST calls and webhook signatures); required with SMS_PROVIDER=twilio',
    parse: optionalText,
  },
  twilioApiBaseUrl: {
    name: 'TWILIO_API_BASE_URL',
    default: 'https://api.twilio.com',
    describe: 'base URL of the Twilio-compatible REST API',
    parse: url(['http', 'https']),
  },
  smtpUrl: {
    name: 'SMTP_URL',
    default: '',
    describe: 'SMTP server for outgoing mail (smtp:// or smtps://); unset: mail is logged, not sent',
    parse: (raw: string, name: string) => (raw === '' ? undefined : url(['smtp', 'smtps'])(raw, name)),
  },
  smtpFrom: {
    name: 'SMTP_FROM',
    default: 'no-reply@localhost',
    describe: "From address of outgoing mail when the chat's workspace has no inbox",
    parse: text,
  },
  inboundEmailSecret: {
    name: 'INBOUND_EMAIL_SECRET',
    default: '',
    describe:
      'shared secret the mail gateway sends in X-Inbound-Email-Secret; unset: inbound mail is refused',
    parse: optionalText,
  },
  smsSegmentLimit: {
    name: 'SMS_SEGMENT_LIMIT',
    default: '10',
    describe: 'most segments one SMS may take; longer messages are refused with 400',
    parse: integer(1, 100),
  },
  assistantProvider: {
    name: 'ASSISTANT_PROVIDER',
    default: 'none',
    describe: 'none | openai: the language model behind `ai` chats and summaries',
    parse: oneOf(['none', 'openai'] as const),
  },
  openaiBaseUrl: {
    name: 'OPENAI_BASE_URL',
    default: 'https://api.openai.com/v1',
    describe: 'base URL of the OpenAI-compatible API (hosted, vLLM, Ollama, LM Studio)',
    parse: url(['http', 'https']),
  },
  openaiApiKey: {
    name: 'OPENAI_API_KEY',
    default: '',
    describe: 'API key of the OpenAI-compatible server (local servers may need none); never logged',
    parse: optionalText,
  },
  assistantModel: {
    name: 'ASSISTANT_MODEL',
    default: 'gpt-4o-mini',
    describe: "model used when the chat's workflow agent names none",
    parse: text,
  },
  assistantTimeoutMs: {
    name: 'ASSISTANT_TIMEOUT_MS',
    default: '60000',
    describe: 'longest wait for one model answer, in milliseconds',
    parse: integer(100, 600000),
  },
  chatSummaryIdleMinutes: {
    name: 'CHAT_SUMMARY_IDLE_MINUTES',
    default: '30',
    describe: 'a chat with no message for this many minutes (fractions allowed) is summarised',
    parse: positiveNumber(7 * 24 * 60),
  },
  messageDeliveryConcurrency: {
    name: 'MESSAGE_DELIVERY_CONCURRENCY',
    default: '16',
    describe: 'message deliveries in flight per queue (sms, email, web-chat) per worker process',
    parse: integer(1, 1_000),
  },
  assistantDebounceMs: {
    name: 'ASSISTANT_DEBOUNCE_MS',
    default: '1000',
    describe: 'wait after a user message before the assistant answers; a burst of messages gets one reply',
    parse: integer(0, 600000),
  },
  assistantHistoryTokens: {
    name: 'ASSISTANT_HISTORY_TOKENS',
    default: '6000',
    describe: 'budget of chat history sent to the model, in tokens (about 4 characters each)',
    parse: integer(100, 1000000),
  },
  assistantMaxToolRounds: {
    name: 'ASSISTANT_MAX_TOOL_ROUNDS',
    default: '5',
    describe: 'most model turns with tool calls in one reply',
    parse: integer(0, 50),
  },
  assistantMaxToolCalls: {
    name: 'ASSISTANT_MAX_TOOL_CALLS',
    default: '20',
    describe: 'most tool calls one reply runs, across its rounds; further calls are refused unrun',
    parse: integer(0, 500),
  },
  assistantConcurrency: {
    name: 'ASSISTANT_CONCURRENCY',
    default: '20',
    describe: 'replies worked on at once per worker process',
    parse: integer(1, 1000),
  },
  assistantAttempts: {
    name: 'ASSISTANT_ATTEMPTS',
    default: '4',
    describe: 'attempts of one reply; a retryable model error (429, 5xx, timeout) retries with backoff',
    parse: integer(1, 20),
  },
  assistantBackoffMs: {
    name: 'ASSISTANT_BACKOFF_MS',
    default: '2000',
    describe: 'first wait between attempts of a reply, doubled each time, in milliseconds',
    parse: integer(1, 3600000),
  },
  assistantReplyWindowMinutes: {
    name: 'ASSISTANT_REPLY_WINDOW_MINUTES',
    default: '60',
    describe:
      'a user message older than this when the assistant first sees it (history replayed, a long outage) gets no automatic reply',
    parse: positiveNumber(7 * 24 * 60),
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
  config.s3ForcePathStyle ??= config.s3Endpoint !== undefined;
  if (config.fileStorage === 's3' && !config.s3Bucket) {
    throw new ConfigError('S3_BUCKET', 'required when FILE_STORAGE=s3');
  }
  if (!config.s3AccessKeyId !== !config.s3SecretAccessKey) {
    throw new ConfigError(
      config.s3AccessKeyId ? 'S3_SECRET_ACCESS_KEY' : 'S3_ACCESS_KEY_ID',
      'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are set together',
    );
  }
  if (config.eventStore === 'eventstoredb' && !config.eventStoreConnectionString) {
    throw new ConfigError('EVENTSTORE_CONNECTION_STRING', 'required when EVENT_STORE=eventstoredb');
  }
  if (config.nodeEnv === 'production') {
    if (config.webhookAllowHttp)
      throw new ConfigError('WEBHOOK_ALLOW_HTTP', 'must not be true with NODE_ENV=production');
    if (config.secretsEncryptionKey.equals(Buffer.from(DEV_SECRETS_ENCRYPTION_KEY, 'base64')))
      throw new ConfigError(
        'SECRETS_ENCRYPTION_KEY',
        'required with NODE_ENV=production (the default is a public development key)',
      );
  }
  if (config.smsProvider === 'twilio') {
    if (!config.twilioAccountSid)
      throw new ConfigError('TWILIO_ACCOUNT_SID', 'required when SMS_PROVIDER=twilio');
    if (!config.twilioAuthToken)
      throw new ConfigError('TWILIO_AUTH_TOKEN', 'required when SMS_PROVIDER=twilio');
  }
  return config;
}

export const APP_CONFIG = Symbol('APP_CONFIG');
