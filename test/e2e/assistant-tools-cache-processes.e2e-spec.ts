import { createTestDatabase, TestDatabase } from '../support/database';
import { lastUserText, OpenAiPeer, PeerChatRequest, startOpenAiPeer } from '../support/openai-peer';
import {
  bootstrapWithCli,
  eventually,
  reportErrorsAndKillAll,
  serviceEnv,
  ServiceProcess,
  spawnOnFreePort,
  spawnService,
} from '../support/processes';
import { clearRedisPrefix, testRedisPrefix } from '../support/redis';

/**
 * The reply job keeps a workspace's enabled toolkit and MCP server tools in an in-process
 * cache (core AuthCache). Two processes on one database: A (ROLE=all) runs the projections
 * and takes the HTTP writes, B (ROLE=worker) runs reply jobs beside A's. Each asks its own
 * model peer, so a request at peer B was made by a job in B. Entries live up to 60 s
 * here, so a change that B's replies see comes from the invalidation the toolkit's events
 * cause in B (A's checkpoint notice), not from entries ageing out.
 */
describe('assistant: the tools on offer, cached across processes (e2e)', () => {
  let db: TestDatabase;
  const prefix = testRedisPrefix();
  let modelA: OpenAiPeer;
  let modelB: OpenAiPeer;
  let url: string;
  let apiKey: string;
  let wid: string;
  let processes: ServiceProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    // Slow enough answers that both processes' workers take jobs of a batch.
    [modelA, modelB] = await Promise.all([startOpenAiPeer(150), startOpenAiPeer(150)]);
    for (const m of [modelA, modelB]) m.script = (r) => ({ content: `echo: ${lastUserText(r)}` });
    const env = serviceEnv(db.url, prefix, {
      AUTH_CACHE_TTL_MS: '60000',
      ASSISTANT_PROVIDER: 'openai',
      ASSISTANT_MODEL: 'test-model',
      ASSISTANT_DEBOUNCE_MS: '0',
      ASSISTANT_CONCURRENCY: '1',
    });
    const a = await spawnOnFreePort(
      'all-a',
      'src/main.ts',
      (port) => ({ ...env, OPENAI_BASE_URL: modelA.url, ROLE: 'all', PORT: String(port), HOST: '127.0.0.1' }),
      /"msg":"listening"/,
    );
    url = `http://127.0.0.1:${a.port}/api/v2`;
    // Started once A holds the projections: B only runs jobs and hears A's notices.
    const b = spawnService('worker-b', 'src/worker.ts', { ...env, OPENAI_BASE_URL: modelB.url });
    processes = [a.proc, b];
    await b.waitForLine(/"msg":"worker started"/, 90_000);
    ({ apiKey, workspaceId: wid } = await bootstrapWithCli(env, 'Tools', 'tools@example.com'));
  }, 180_000);

  afterAll(async () => {
    await reportErrorsAndKillAll(processes);
    await Promise.all([modelA?.close(), modelB?.close()]);
    await clearRedisPrefix(prefix);
    await db?.drop();
  });

  async function post(
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${url}/w/${wid}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }

  let n = 0;
  /** One new member and chat, and a message into it; resolves with the message's text. */
  async function ask(label: string): Promise<string> {
    const i = ++n;
    const m = await post('/create-signup', { member: { name: `Member ${i}`, email: `m${i}@example.com` } });
    expect([200, 201]).toContain(m.status);
    const memberId = (m.body.member as { id: number }).id;
    const c = await post('/chats', { channel: 'web-chat', memberId });
    expect(c.status).toBe(201);
    const text = `${label} ${i}`;
    expect((await post(`/chats/${c.body.id as number}/messages`, { content: text })).status).toBe(201);
    return text;
  }

  const offered = (r: PeerChatRequest) => (r.tools ?? []).map((t) => t.function.name);
  const asked = (texts: string[]) =>
    [modelA, modelB].flatMap((m, i) =>
      m.requests.filter((r) => texts.includes(lastUserText(r))).map((r) => ({ by: 'AB'[i], r })),
    );

  /** Batches of messages until every one was answered and B's worker answered some of them. */
  async function untilBothAnswer(label: string): Promise<{ by: string; r: PeerChatRequest }[]> {
    const texts: string[] = [];
    for (let batch = 0; batch < 8; batch++) {
      texts.push(...(await Promise.all([1, 2, 3, 4].map(() => ask(label)))));
      const seen = await eventually(async () => {
        const got = asked(texts);
        return got.length >= texts.length ? got : undefined;
      }, `the model to be asked for every ${label} message`);
      if (seen.some((s) => s.by === 'B') && seen.some((s) => s.by === 'A')) return seen;
    }
    throw new Error(`process B's worker answered none of ${texts.length} ${label} messages`);
  }

  it("offers what a toolkit's change left enabled, in the process that did not apply it too", async () => {
    const kit = await post('/custom-toolkits', { name: 'CRM', slug: 'crm' });
    expect(kit.status).toBe(201);
    const tool = await post(`/custom-toolkits/${kit.body.id as number}/tools`, {
      name: 'lookup',
      displayName: 'Look up',
      description: 'Finds a record',
      prompt: 'Look it up.',
      inputSchema: { type: 'object', properties: { ref: { type: 'string' } } },
    });
    expect(tool.status).toBe(201);

    // Both processes now hold the workspace's tools: the toolkit's tool is offered.
    for (const { r } of await untilBothAnswer('before')) expect(offered(r)).toEqual(['crm__lookup']);

    // Disabled through A (it answers once A's projections have it): B's cached list must go.
    expect((await post(`/custom-toolkits/${kit.body.id as number}/disable`)).status).toBe(200);
    for (const { r } of await untilBothAnswer('disabled')) expect(offered(r)).toEqual([]);

    // And enabled again, with a second tool: both offer both at once.
    expect((await post(`/custom-toolkits/${kit.body.id as number}/enable`)).status).toBe(200);
    const second = await post(`/custom-toolkits/${kit.body.id as number}/tools`, {
      name: 'notes',
      displayName: 'Notes',
      description: 'Reads notes',
      prompt: 'Read them.',
      inputSchema: { type: 'object' },
    });
    expect(second.status).toBe(201);
    for (const { r } of await untilBothAnswer('enabled'))
      expect(offered(r)).toEqual(['crm__lookup', 'crm__notes']);
  }, 180_000);
});
