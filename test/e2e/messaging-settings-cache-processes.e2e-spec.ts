import { createTestDatabase, TestDatabase } from '../support/database';
import { eventually, killAll, runToCompletion, ServiceProcess, startAllAndApi } from '../support/processes';
import { clearRedisPrefix, TEST_REDIS_URL, testRedisPrefix } from '../support/redis';

/** The wall-clock time `HH:MM:SS` of an instant in UTC. */
function utcTime(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19);
}

/**
 * A send reads its workspace's quiet hours from a per-process cache (messaging's
 * WorkspaceSendSettings, in core's AuthCache). Two processes on one database: A (ROLE=all)
 * takes the settings' PUT and runs the projections, B (ROLE=api) takes the sends. Entries
 * live 60 s here, so B honouring a change within a second comes from the invalidation the
 * WorkspaceUpdated causes (the checkpoint notice of the projection that applied it), not
 * from entries ageing out.
 */
describe('Messaging: quiet hours cached per process, invalidated across processes (e2e)', () => {
  let db: TestDatabase;
  const prefix = testRedisPrefix();
  let urlA: string;
  let urlB: string;
  let apiKey: string;
  let wid: string;
  let processes: ServiceProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    const env = {
      DATABASE_URL: db.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: prefix,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      AUTH_CACHE_TTL_MS: '60000',
      RATE_LIMIT_PER_MINUTE: '100000',
      RATE_LIMIT_CONCURRENCY: '1000',
      SMS_PROVIDER: 'log',
    };
    const { all: a, api: b } = await startAllAndApi(env, ['msg-all-a', 'msg-api-b']);
    urlA = a.url;
    urlB = b.url;
    processes = [a.proc, b.proc];
    const out = await runToCompletion(
      'src/cli.ts',
      ['bootstrap', '--workspace', 'Quiet Cache', '--email', 'quiet-cache@example.com', '--json'],
      { ...env, LOG_LEVEL: 'warn' },
      90_000,
    );
    ({ apiKey, workspaceId: wid } = JSON.parse(out.trim().split('\n').pop()!) as {
      apiKey: string;
      workspaceId: string;
    });
  }, 180_000);

  afterAll(async () => {
    for (const p of processes) {
      const errors = p
        .output()
        .split('\n')
        .filter((l) => l.includes('"level":"error"'));
      if (errors.length) console.error(`${p.name}:\n${errors.slice(0, 5).join('\n')}`);
    }
    await killAll();
    await clearRedisPrefix(prefix);
    await db?.drop();
  });

  async function call(
    base: string,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${base}/w/${wid}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }

  it('a quiet window set and lifted through A holds and frees the next send through B', async () => {
    const phone = await call(urlA, 'POST', '/phone-numbers', { number: '+14155550777' });
    expect(phone.status).toBe(201);
    const member = await call(urlA, 'POST', '/create-signup', {
      member: { phone: '+14155553777', email: 'quiet-member@example.com' },
    });
    expect([200, 201]).toContain(member.status);
    const memberId = (member.body.member as { id: number }).id;
    expect((await call(urlA, 'PUT', `/members/${memberId}`, { notifySms: true })).status).toBe(200);
    const chat = await call(urlA, 'POST', '/chats', {
      channel: 'phone-sms',
      memberId,
      phoneNumberId: phone.body.id,
    });
    expect(chat.status).toBe(201);
    const send = () =>
      call(urlB, 'POST', `/chats/${chat.body.id as number}/send-assistant-message`, { message: 'Hello' });

    // B reads the settings (no quiet hours) and keeps them.
    for (let i = 0; i < 2; i++) {
      const sent = await send();
      expect(sent.status).toBe(201);
      expect(sent.body.scheduledFor ?? null).toBeNull();
    }

    const now = Date.now();
    const window = { start: utcTime(now - 3_600_000), end: utcTime(now + 3_600_000) };
    expect(
      (await call(urlA, 'PUT', '', { settings: { timezone: 'UTC', smsQuietHours: window } })).status,
    ).toBe(200);
    const held = await eventually(
      async () => {
        const sent = await send();
        expect(sent.status).toBe(201);
        return sent.body.scheduledFor ?? undefined;
      },
      'process B to hold a send inside the new quiet window',
      1000,
      20,
    );
    expect(Date.parse(held as string)).toBeGreaterThan(now);
    const again = await send();
    expect(again.body.scheduledFor).toBe(held);

    expect((await call(urlA, 'PUT', '', { settings: { smsQuietHours: null } })).status).toBe(200);
    await eventually(
      async () => {
        const sent = await send();
        expect(sent.status).toBe(201);
        return (sent.body.scheduledFor ?? null) === null;
      },
      'process B to send at once after the window was lifted',
      1000,
      20,
    );
  });
});
