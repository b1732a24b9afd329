import { CONFIG_VARIABLES, ConfigError, loadConfig } from './config';

describe('loadConfig', () => {
  it('gives the documented defaults on an empty environment', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 3000,
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/workspace',
      redisUrl: 'redis://127.0.0.1:6379',
      role: 'all',
      nodeEnv: 'development',
      logLevel: 'info',
      eventStore: 'postgres',
      readYourWritesTimeoutMs: 5000,
      rateLimitPerMinute: 100,
      rateLimitConcurrency: 10,
      memberTokenTtlDays: 30,
      invitationTtlDays: 14,
    });
  });

  it('takes lifetimes in days, fractions included (tests use a few seconds)', () => {
    expect(loadConfig({ INVITATION_TTL_DAYS: '7', MEMBER_TOKEN_TTL_DAYS: '0.5' })).toMatchObject({
      invitationTtlDays: 7,
      memberTokenTtlDays: 0.5,
    });
  });

  it.each([
    ['PORT', 'abc', /^PORT: expected an integer/],
    ['PORT', '70000', /^PORT: expected an integer from 0 to 65535/],
    ['ROLE', 'boss', /^ROLE: expected one of all \| api \| worker/],
    ['DATABASE_URL', 'not a url', /^DATABASE_URL: expected a URL/],
    ['DATABASE_URL', 'mysql://x/y', /^DATABASE_URL: expected a URL with scheme postgres/],
    ['REDIS_URL', 'http://x', /^REDIS_URL:/],
    ['LOG_LEVEL', 'loud', /^LOG_LEVEL:/],
    ['PUBLIC_BASE_URL', '::', /^PUBLIC_BASE_URL:/],
    ['TRUST_PROXY', 'everyone', /^TRUST_PROXY: expected false, true, a hop count/],
    ['INVITATION_TTL_DAYS', '0', /^INVITATION_TTL_DAYS: expected a number of days above 0/],
    ['INVITATION_TTL_DAYS', '-1', /^INVITATION_TTL_DAYS: expected a number of days/],
    ['MEMBER_TOKEN_TTL_DAYS', '1e3', /^MEMBER_TOKEN_TTL_DAYS: expected a number of days/],
    [
      'MEMBER_TOKEN_TTL_DAYS',
      '4000',
      /^MEMBER_TOKEN_TTL_DAYS: expected a number of days above 0 and at most 3650/,
    ],
  ])('refuses %s=%s with one line naming the variable', (name, value, message) => {
    let err: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).not.toContain('\n');
  });

  it('refuses http webhooks and the development encryption key in production', () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    expect(() =>
      loadConfig({ NODE_ENV: 'production', SECRETS_ENCRYPTION_KEY: key, WEBHOOK_ALLOW_HTTP: 'true' }),
    ).toThrow(/^WEBHOOK_ALLOW_HTTP: must not be true with NODE_ENV=production/);
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(
      /^SECRETS_ENCRYPTION_KEY: required with NODE_ENV=production/,
    );
    expect(
      loadConfig({ NODE_ENV: 'production', SECRETS_ENCRYPTION_KEY: key }).secretsEncryptionKey,
    ).toHaveLength(32);
    expect(() => loadConfig({ SECRETS_ENCRYPTION_KEY: 'short' })).toThrow(
      /^SECRETS_ENCRYPTION_KEY: expected 32 bytes/,
    );
    expect(loadConfig({ WEBHOOK_RETRY_DELAYS_MS: '0, 50,100' }).webhookRetryDelaysMs).toEqual([0, 50, 100]);
    expect(() => loadConfig({ WEBHOOK_RETRY_DELAYS_MS: '1s' })).toThrow(/^WEBHOOK_RETRY_DELAYS_MS:/);
  });

  it('reads TRUST_PROXY as false, true, a hop count or trusted addresses', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy).toBe('10.0.0.0/8,127.0.0.1');
  });

  it('points PUBLIC_BASE_URL at this server on PORT when it is unset', () => {
    expect(loadConfig({}).publicBaseUrl).toBe('http://localhost:3000/api/v2');
    expect(loadConfig({ PORT: '8080' }).publicBaseUrl).toBe('http://localhost:8080/api/v2');
    expect(loadConfig({ PORT: '8080', PUBLIC_BASE_URL: '' }).publicBaseUrl).toBe(
      'http://localhost:8080/api/v2',
    );
    expect(
      loadConfig({ PORT: '8080', PUBLIC_BASE_URL: 'https://api.example.com/api/v2' }).publicBaseUrl,
    ).toBe('https://api.example.com/api/v2');
  });

  it('requires a connection string for EventStoreDB', () => {
    expect(() => loadConfig({ EVENT_STORE: 'eventstoredb' })).toThrow(
      /^EVENTSTORE_CONNECTION_STRING: required/,
    );
    expect(
      loadConfig({ EVENT_STORE: 'eventstoredb', EVENTSTORE_CONNECTION_STRING: 'esdb://h:2113?tls=false' })
        .eventStore,
    ).toBe('eventstoredb');
  });

  it('reads CORS_ORIGINS as exact origins, none by default, and refuses wildcards and paths', () => {
    expect(loadConfig({}).corsOrigins).toEqual([]);
    expect(
      loadConfig({ CORS_ORIGINS: 'https://app.example.com, http://localhost:5173' }).corsOrigins,
    ).toEqual(['https://app.example.com', 'http://localhost:5173']);
    for (const bad of [
      '*',
      'https://app.example.com/',
      'https://app.example.com/path',
      'ftp://x.example',
      'app',
    ]) {
      expect(() => loadConfig({ CORS_ORIGINS: bad })).toThrow(
        /^CORS_ORIGINS: expected comma-separated exact origins/,
      );
    }
  });

  it('keeps uploads on disk by default, and on S3 only with a bucket and whole credentials', () => {
    expect(loadConfig({})).toMatchObject({
      fileStorage: 'disk',
      fileStorageDir: 'data/files',
      fileMaxBytes: 50 * 1024 * 1024,
      s3ForcePathStyle: false,
    });
    expect(
      loadConfig({ FILE_STORAGE: 's3', S3_BUCKET: 'b', S3_ENDPOINT: 'http://127.0.0.1:9000' }),
    ).toMatchObject({ fileStorage: 's3', s3Bucket: 'b', s3ForcePathStyle: true, s3Region: 'us-east-1' });
    expect(
      loadConfig({ S3_ENDPOINT: 'http://127.0.0.1:9000', S3_FORCE_PATH_STYLE: 'false' }).s3ForcePathStyle,
    ).toBe(false);
    expect(() => loadConfig({ FILE_STORAGE: 's3' })).toThrow(/^S3_BUCKET: required when FILE_STORAGE=s3/);
    expect(() => loadConfig({ S3_ACCESS_KEY_ID: 'k' })).toThrow(/^S3_SECRET_ACCESS_KEY: /);
    expect(() => loadConfig({ FILE_MAX_BYTES: '0' })).toThrow(/^FILE_MAX_BYTES: expected an integer/);
    expect(() => loadConfig({ FILE_STORAGE: 'ftp' })).toThrow(/^FILE_STORAGE: expected one of disk \| s3/);
    expect(() => loadConfig({ S3_FORCE_PATH_STYLE: 'yes' })).toThrow(
      /^S3_FORCE_PATH_STYLE: expected true or false/,
    );
  });

  it('documents every variable with a description', () => {
    for (const spec of Object.values(CONFIG_VARIABLES)) expect(spec.describe.length).toBeGreaterThan(3);
  });
});
