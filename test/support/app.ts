import type { DynamicModule } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createHttpApp } from '../../src/bootstrap';
import { AppConfig, loadConfig } from '../../src/core/config/config';
import { ConsistencyWaiter } from '../../src/core/projections/consistency';
import { requestContext, SYSTEM_ACTOR } from '../../src/core/cqrs/request-context';
import { EVENT_STORE, EventStore, StoredEvent } from '../../src/core/event-store/event-store.port';
import { JsonLogger } from '../../src/core/logging/json-logger';
import { BootstrapResult, BootstrapService } from '../../src/modules/identity/bootstrap/bootstrap.service';
import { createTestDatabase, TestDatabase } from './database';
import { startEventStoreDbStandIn } from './esdb-standin';
import { clearRedisPrefix, TEST_REDIS_URL, testRedisPrefix } from './redis';

export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  requestId: string;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** Raw body, sent as is (for malformed-JSON tests). */
  raw?: string;
  headers?: Record<string, string>;
}

export interface ExpectedEvent {
  type: string;
  stream?: string | RegExp;
  /** Matched with toMatchObject: list only the fields the test cares about. */
  data?: Record<string, unknown>;
}

export interface TestApp {
  app: NestFastifyApplication;
  config: AppConfig;
  database: TestDatabase;
  baseUrl: string;
  store: EventStore;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<TestResponse<T>>;
  /** A workspace with its first member (Manager) and an API key for that member. */
  bootstrap(workspaceName?: string, email?: string): Promise<BootstrapResult>;
  /** Events a request appended: those whose correlation id is its X-Request-Id. */
  eventsOf(response: TestResponse): Promise<StoredEvent[]>;
  /** Asserts a request appended exactly these events, in order (by type, stream and data). */
  expectEvents(response: TestResponse, expected: ExpectedEvent[]): Promise<StoredEvent[]>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  env?: Record<string, string>;
  /** Run on EventStoreDB: its in-process stand-in over the real client, stopped by close(). */
  eventStoreDb?: boolean;
  extraModules?: DynamicModule['imports'];
}

let emailCounter = 0;

/**
 * Boots the real application (HTTP on an ephemeral port) against a fresh PostgreSQL
 * database and a unique Redis key prefix, so test files run in parallel.
 */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const esdb = options.eventStoreDb ? await startEventStoreDbStandIn() : undefined;
  const database = await createTestDatabase();
  const redisPrefix = testRedisPrefix();
  const config = loadConfig({
    DATABASE_URL: database.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: redisPrefix,
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    PORT: '0',
    // Specs send bursts far beyond the production limits (100/min, 10 in flight per
    // credential); the rate-limit spec sets those values itself.
    RATE_LIMIT_PER_MINUTE: '1000000',
    RATE_LIMIT_CONCURRENCY: '10000',
    // Read-your-writes is a soft limit (a write answers without its projections after
    // this long); under load the 5 s default can pass, and a read after it be stale.
    READ_YOUR_WRITES_TIMEOUT_MS: '30000',
    // Two jest workers, some files with extra app processes, all on one PostgreSQL whose
    // max_connections is 100: small pools keep the suite far from it.
    DATABASE_POOL_SIZE: '5',
    ...(esdb ? { EVENT_STORE: 'eventstoredb', EVENTSTORE_CONNECTION_STRING: esdb.connectionString } : {}),
    ...options.env,
  });
  const app = await createHttpApp(config, new JsonLogger(config.logLevel), options.extraModules);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.getHttpServer().address() as { port: number };
  const baseUrl = `http://127.0.0.1:${address.port}/api/v2`;
  const store = app.get<EventStore>(EVENT_STORE);

  const harness: TestApp = {
    app,
    config,
    database,
    baseUrl,
    store,
    async request(method, path, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      let body: string | undefined;
      if (opts.raw !== undefined) {
        body = opts.raw;
        headers['content-type'] ??= 'application/json';
      } else if (opts.body !== undefined) {
        body = JSON.stringify(opts.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
      return {
        status: res.status,
        headers: res.headers,
        body: parsed as any,
        requestId: res.headers.get('x-request-id') ?? '',
      };
    },
    async bootstrap(
      workspaceName = 'Test workspace',
      email = `owner${++emailCounter}-${process.pid}@example.com`,
    ) {
      const ctx = { requestId: `test-bootstrap-${emailCounter}`, actor: SYSTEM_ACTOR, appended: [] };
      const result = await requestContext.run(ctx, () =>
        app.get(BootstrapService).bootstrap({ workspaceName, email }),
      );
      if (!(await app.get(ConsistencyWaiter).waitFor(ctx.appended, 15_000)))
        throw new Error('bootstrap fixture: the projections did not catch up within 15 s');
      return result;
    },
    async eventsOf(response) {
      expect(response.requestId).toBeTruthy();
      const all: StoredEvent[] = [];
      let after: StoredEvent['position'] | undefined;
      for (;;) {
        const batch = await store.readAll({ after, maxCount: 1000 });
        if (!batch.length) break;
        all.push(...batch);
        after = batch[batch.length - 1].position;
      }
      return all.filter((e) => e.metadata.correlationId === response.requestId);
    },
    async expectEvents(response, expected) {
      const events = await harness.eventsOf(response);
      expect(events.map((e) => e.type)).toEqual(expected.map((e) => e.type));
      expected.forEach((exp, i) => {
        if (exp.stream instanceof RegExp) expect(events[i].streamName).toMatch(exp.stream);
        else if (exp.stream) expect(events[i].streamName).toBe(exp.stream);
        if (exp.data) expect(events[i].data).toMatchObject(exp.data);
      });
      return events;
    },
    async close() {
      await app.close();
      await clearRedisPrefix(redisPrefix);
      await database.drop();
      await esdb?.stop();
    },
  };
  return harness;
}
