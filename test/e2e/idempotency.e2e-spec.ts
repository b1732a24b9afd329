import { Body, Controller, Module, Post } from '@nestjs/common';
import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { SelfAccess } from '../../src/core/auth/auth.decorators';
import type { StoredEvent } from '../../src/core/event-store/event-store.port';
import { startTestApp, TestApp, TestResponse } from '../support/app';
import { TEST_REDIS_URL } from '../support/redis';

/** A route that fails with a 500 the first time each body is sent, and counts its executions. */
const flakyRuns = new Map<string, number>();
@Controller('idempotency-test')
class FlakyController {
  @Post('flaky')
  @SelfAccess()
  flaky(@Body() body: { id: string }): { runs: number } {
    const runs = (flakyRuns.get(body.id) ?? 0) + 1;
    flakyRuns.set(body.id, runs);
    if (runs === 1) throw new Error('first attempt fails');
    return { runs };
  }
}
@Module({ controllers: [FlakyController] })
class FlakyModule {}

/** Idempotency-Key on POST (DESIGN.md, HTTP conventions; README "HTTP conventions"). */
describe('Idempotency-Key (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ extraModules: [FlakyModule] });
  });
  afterAll(() => t.close());

  async function allEvents(app: TestApp = t): Promise<StoredEvent[]> {
    const out: StoredEvent[] = [];
    let after: StoredEvent['position'] | undefined;
    for (;;) {
      const batch = await app.store.readAll({ after, maxCount: 1000 });
      if (!batch.length) return out;
      out.push(...batch);
      after = batch[batch.length - 1].position;
    }
  }

  /** MemberRoleCreated events for roles of this name: one per execution of the POST. */
  const rolesCreated = async (name: string, app: TestApp = t): Promise<number> =>
    (await allEvents(app)).filter(
      (e) => e.type === 'MemberRoleCreated' && (e.data as { name: string }).name === name,
    ).length;

  const createRole = (
    wid: string,
    token: string,
    key: string | undefined,
    name: string,
    permissions = ['chats:read'],
    app: TestApp = t,
  ): Promise<TestResponse> =>
    app.request('POST', `/w/${wid}/member-roles`, {
      token,
      body: { name, permissions },
      headers: key === undefined ? {} : { 'Idempotency-Key': key },
    });

  const signup = (
    wid: string,
    token: string,
    key: string | undefined,
    email: string,
    app: TestApp = t,
  ): Promise<TestResponse> =>
    app.request('POST', `/w/${wid}/create-signup`, {
      token,
      body: { member: { email, name: 'Ann' } },
      headers: key === undefined ? {} : { 'Idempotency-Key': key },
    });

  /**
   * How many of these requests executed: every signup issues a member token (a
   * MemberTokenIssued event carrying the request id), even for a member that exists.
   */
  const executions = async (answers: TestResponse[]): Promise<number> => {
    const ids = new Set(answers.map((r) => r.requestId));
    return (await allEvents()).filter(
      (e) => e.type === 'MemberTokenIssued' && ids.has(e.metadata.correlationId),
    ).length;
  };

  /** What a replay must reproduce: status, body and the headers that describe the result. */
  const answer = (res: TestResponse) => ({
    status: res.status,
    body: res.body as unknown,
    contentType: res.headers.get('content-type'),
    location: res.headers.get('location'),
    etag: res.headers.get('etag'),
  });

  it('creates one API key for a key sent twice, and replays the first answer', async () => {
    const a = await t.bootstrap();
    const key = randomUUID();
    const body = { name: 'ci', scopes: ['members:read'] };
    const send = () =>
      t.request('POST', '/me/api-keys', { token: a.apiKey, body, headers: { 'Idempotency-Key': key } });
    const first = await send();
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const second = await send();
    expect(answer(second)).toEqual(answer(first));
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    // The replay is a request of its own: its own request id, and it appended nothing.
    expect(second.requestId).not.toBe(first.requestId);
    await t.expectEvents(second, []);
    const created = (await allEvents()).filter(
      (e) => e.type === 'ApiKeyCreated' && (e.data as { name: string }).name === 'ci',
    );
    expect(created).toHaveLength(1);
    const list = await t.request('GET', '/me/api-keys', { token: a.apiKey });
    expect((list.body.items as { name: string }[]).filter((k) => k.name === 'ci')).toHaveLength(1);

    // The kept answer holds the new key's secret: Redis must hold it sealed, never readable.
    const redis = new Redis(TEST_REDIS_URL);
    try {
      const keys = await redis.keys(`${t.config.redisPrefix}:idempotency:*`);
      const records = await Promise.all(keys.map((k) => redis.get(k)));
      expect(records.length).toBeGreaterThan(0);
      const secret = first.body.secret as string;
      expect(secret).toMatch(/^wsk_/);
      for (const record of records) expect(record).not.toContain(secret.slice(4));
    } finally {
      redis.disconnect();
    }
  });

  it('refuses the same key with a different body, path or method with 422 naming the header', async () => {
    const a = await t.bootstrap();
    const key = randomUUID();
    expect((await createRole(a.workspaceId, a.apiKey, key, 'Role A')).status).toBe(201);
    // Key order does not matter: the body is compared in canonical form.
    const reordered = await t.request('POST', `/w/${a.workspaceId}/member-roles`, {
      token: a.apiKey,
      raw: JSON.stringify({ permissions: ['chats:read'], name: 'Role A' }),
      headers: { 'Idempotency-Key': key },
    });
    expect(reordered.status).toBe(201);
    expect(reordered.headers.get('idempotent-replayed')).toBe('true');

    const other = await createRole(a.workspaceId, a.apiKey, key, 'Role B');
    expect(other.status).toBe(422);
    expect(other.body.detail).toMatch(/^Idempotency-Key: /);
    await t.expectEvents(other, []);
    const otherPath = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
      token: a.apiKey,
      body: { name: 'Role A', permissions: ['chats:read'] },
      headers: { 'Idempotency-Key': key },
    });
    expect(otherPath.status).toBe(422);
    expect(await rolesCreated('Role B')).toBe(0);
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a non-ASCII character', 'clé'],
    ['a control character', 'a\tb'],
  ])('refuses a key that is %s with 400 naming the header, executing nothing', async (_, key) => {
    const a = await t.bootstrap();
    const res = await createRole(a.workspaceId, a.apiKey, key, `Bad key ${key.length}`);
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^Idempotency-Key: /);
    await t.expectEvents(res, []);
  });

  it('accepts a key of 255 printable characters', async () => {
    const a = await t.bootstrap();
    const key = ' !~'.repeat(85);
    expect((await createRole(a.workspaceId, a.apiKey, key, 'Long key')).status).toBe(201);
    const again = await createRole(a.workspaceId, a.apiKey, key, 'Long key');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await rolesCreated('Long key')).toBe(1);
  });

  it('executes 10 concurrent duplicates once; every other answer is the same or 409', async () => {
    const a = await t.bootstrap();
    const key = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => signup(a.workspaceId, a.apiKey, key, 'concurrent@example.com')),
    );
    expect(await executions(answers)).toBe(1);
    const executed = answers.filter((r) => r.headers.get('idempotent-replayed') === null && r.status === 201);
    expect(executed).toHaveLength(1);
    for (const r of answers) {
      if (r.status === 409) expect(r.body.detail).toMatch(/^Idempotency-Key: .*in progress/);
      else expect(answer(r)).toEqual(answer(executed[0]));
    }
  });

  it('replays a 4xx first answer too, without executing again', async () => {
    const a = await t.bootstrap();
    const key = randomUUID();
    const bad = await createRole(a.workspaceId, a.apiKey, key, 'Bad scopes', ['no_such:read']);
    expect(bad.status).toBe(400);
    const again = await createRole(a.workspaceId, a.apiKey, key, 'Bad scopes', ['no_such:read']);
    expect(answer(again)).toEqual(answer(bad));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('does not keep a 5xx: the key is released and a retry executes', async () => {
    const a = await t.bootstrap();
    const key = randomUUID();
    const id = randomUUID();
    const send = () =>
      t.request('POST', '/idempotency-test/flaky', {
        token: a.apiKey,
        body: { id },
        headers: { 'Idempotency-Key': key },
      });
    expect((await send()).status).toBe(500);
    const retry = await send();
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual({ runs: 2 });
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    const replay = await send();
    expect(replay.body).toEqual({ runs: 2 });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(flakyRuns.get(id)).toBe(2);
  });

  it('keeps keys per credential: another credential with the same key executes separately', async () => {
    const a = await t.bootstrap();
    const second = await t.request('POST', '/me/api-keys', {
      token: a.apiKey,
      body: { name: 'second', scopes: ['members:write'] },
    });
    expect(second.status).toBe(201);
    const key = randomUUID();
    const one = await signup(a.workspaceId, a.apiKey, key, 'per-credential@example.com');
    const two = await signup(a.workspaceId, second.body.secret as string, key, 'per-credential@example.com');
    expect([one.status, two.status]).toEqual([201, 200]);
    expect(two.headers.get('idempotent-replayed')).toBeNull();
    expect(two.body.token).not.toBe(one.body.token);
    expect(await executions([one, two])).toBe(2);
  });

  it('executes every POST without a key', async () => {
    const a = await t.bootstrap();
    const answers = [
      await signup(a.workspaceId, a.apiKey, undefined, 'no-key@example.com'),
      await signup(a.workspaceId, a.apiKey, undefined, 'no-key@example.com'),
    ];
    expect(answers.map((r) => r.status)).toEqual([201, 200]);
    expect(await executions(answers)).toBe(2);
  });

  it('holds across two application instances sharing the database and Redis prefix', async () => {
    const b = await startTestApp({
      env: { DATABASE_URL: t.config.databaseUrl, REDIS_PREFIX: t.config.redisPrefix },
    });
    try {
      const a = await t.bootstrap();
      const key = randomUUID();
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          signup(a.workspaceId, a.apiKey, key, 'two-instances@example.com', i % 2 ? b : t),
        ),
      );
      expect(await executions(answers)).toBe(1);
      const executed = answers.filter((r) => r.status === 201 && !r.headers.get('idempotent-replayed'));
      expect(executed).toHaveLength(1);
      for (const r of answers) if (r.status !== 409) expect(answer(r)).toEqual(answer(executed[0]));
      // Afterwards, either instance replays it.
      const later = await signup(a.workspaceId, a.apiKey, key, 'two-instances@example.com', b);
      expect(answer(later)).toEqual(answer(executed[0]));
      expect(later.headers.get('idempotent-replayed')).toBe('true');
    } finally {
      await b.close();
    }
  });
});
