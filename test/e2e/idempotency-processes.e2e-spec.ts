import { randomUUID } from 'node:crypto';
import { startTestApp, TestApp } from '../support/app';
import { killAll, ServiceProcess, spawnOnFreePort } from '../support/processes';

/**
 * Idempotency-Key across operating-system processes: the test's own application and a
 * separate `ROLE=api` process share the database and the Redis prefix, and duplicates sent
 * to both at once execute once.
 */
describe('Idempotency-Key across processes (e2e)', () => {
  let t: TestApp;
  let api: ServiceProcess;
  let otherBase: string;

  beforeAll(async () => {
    t = await startTestApp();
    const started = await spawnOnFreePort(
      'api',
      'src/main.ts',
      (port) => ({
        DATABASE_URL: t.config.databaseUrl,
        REDIS_URL: t.config.redisUrl,
        REDIS_PREFIX: t.config.redisPrefix,
        NODE_ENV: 'test',
        LOG_LEVEL: 'info',
        ROLE: 'api',
        PORT: String(port),
        HOST: '127.0.0.1',
        RATE_LIMIT_PER_MINUTE: '1000000',
        RATE_LIMIT_CONCURRENCY: '10000',
        READ_YOUR_WRITES_TIMEOUT_MS: '30000',
      }),
      /"msg":"listening"/,
    );
    api = started.proc;
    otherBase = `http://127.0.0.1:${started.port}/api/v2`;
  }, 180_000);

  afterAll(async () => {
    await killAll();
    await t.close();
  });

  it('executes concurrent duplicates sent to two processes once, and either replays it', async () => {
    const a = await t.bootstrap();
    const key = randomUUID();
    const body = JSON.stringify({ member: { email: 'two-processes@example.com', name: 'Ann' } });
    const send = async (base: string) => {
      const res = await fetch(`${base}/w/${a.workspaceId}/create-signup`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${a.apiKey}`,
          'content-type': 'application/json',
          'idempotency-key': key,
        },
        body,
      });
      return {
        status: res.status,
        replayed: res.headers.get('idempotent-replayed'),
        requestId: res.headers.get('x-request-id')!,
        body: (await res.json()) as unknown,
      };
    };
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => send(i % 2 ? otherBase : t.baseUrl)),
    );
    const ids = new Set(answers.map((r) => r.requestId));
    const events = [];
    let after;
    for (;;) {
      const batch = await t.store.readAll({ after, maxCount: 1000 });
      if (!batch.length) break;
      events.push(...batch);
      after = batch[batch.length - 1].position;
    }
    // Every executed signup issues a member token under its request id: exactly one did.
    expect(
      events.filter((e) => e.type === 'MemberTokenIssued' && ids.has(e.metadata.correlationId)),
    ).toHaveLength(1);
    const executed = answers.filter((r) => r.status === 201 && !r.replayed);
    expect(executed).toHaveLength(1);
    for (const r of answers) if (r.status !== 409) expect(r.body).toEqual(executed[0].body);
    for (const base of [t.baseUrl, otherBase]) {
      const later = await send(base);
      expect({ status: later.status, replayed: later.replayed, body: later.body }).toEqual({
        status: 201,
        replayed: 'true',
        body: executed[0].body,
      });
    }
    expect(api.output()).not.toMatch(/"level":"error"/);
  });
});
