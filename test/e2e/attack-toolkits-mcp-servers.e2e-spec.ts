import { startTestApp, TestApp, TestResponse } from '../support/app';
import { keyWithScopes } from '../support/identity-fixtures';

/**
 * A hostile and a careless client against custom toolkits, tools and MCP servers: another
 * tenant's ids, a read-only key, unstorable and oversized input, a race on one slug, and
 * the OAuth client secret, which no response may ever carry.
 */
describe('attack: custom toolkits, tools and MCP servers (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    // The server URL below is never dialled by these tests except through enable/refresh of
    // another tenant's id, which must be refused before any connection.
    t = await startTestApp({
      env: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', MCP_TIMEOUT_MS: '1000' },
    });
  });
  afterAll(() => t.close());

  const SECRET = 'sup3r-s3cret-client-value-0xDEADBEEF';
  const mcpBody = (slug: string) => ({
    name: 'Server',
    slug,
    mcpUrl: 'http://127.0.0.1:9/mcp',
    supportsDirectAuth: false,
    oauthClientId: 'client-id-1',
    oauthClientSecret: SECRET,
  });

  function created(res: TestResponse): number {
    expect(res.status).toBe(201);
    return res.body.id as number;
  }

  it("another tenant's toolkit, tool and server ids are 404 on every route, and nothing is appended", async () => {
    const a = await t.bootstrap();
    const b = await t.bootstrap();
    const kitId = created(
      await t.request('POST', `/w/${a.workspaceId}/custom-toolkits`, {
        token: a.apiKey,
        body: { name: 'Kit', slug: 'kit' },
      }),
    );
    const toolId = created(
      await t.request('POST', `/w/${a.workspaceId}/custom-toolkits/${kitId}/tools`, {
        token: a.apiKey,
        body: { name: 'lookup' },
      }),
    );
    const serverId = created(
      await t.request('POST', `/w/${a.workspaceId}/mcp-servers`, { token: a.apiKey, body: mcpBody('srv') }),
    );
    // B's own toolkit, so the tool routes under B's workspace reach the tool lookup too.
    const bKit = created(
      await t.request('POST', `/w/${b.workspaceId}/custom-toolkits`, {
        token: b.apiKey,
        body: { name: 'B kit', slug: 'bkit' },
      }),
    );

    const w = `/w/${b.workspaceId}`;
    const attempts: Array<[string, string, unknown?]> = [
      ['GET', `${w}/custom-toolkits/${kitId}`],
      ['PUT', `${w}/custom-toolkits/${kitId}`, { name: 'pwned' }],
      ['POST', `${w}/custom-toolkits/${kitId}/enable`],
      ['POST', `${w}/custom-toolkits/${kitId}/disable`],
      ['GET', `${w}/custom-toolkits/${kitId}/tools`],
      ['POST', `${w}/custom-toolkits/${kitId}/tools`, { name: 'injected' }],
      ['GET', `${w}/custom-toolkits/${kitId}/tools/${toolId}`],
      ['PUT', `${w}/custom-toolkits/${kitId}/tools/${toolId}`, { prompt: 'pwned' }],
      ['DELETE', `${w}/custom-toolkits/${kitId}/tools/${toolId}`],
      // A's tool through B's own toolkit.
      ['GET', `${w}/custom-toolkits/${bKit}/tools/${toolId}`],
      ['PUT', `${w}/custom-toolkits/${bKit}/tools/${toolId}`, { prompt: 'pwned' }],
      ['DELETE', `${w}/custom-toolkits/${bKit}/tools/${toolId}`],
      ['DELETE', `${w}/custom-toolkits/${kitId}`],
      ['GET', `${w}/mcp-servers/${serverId}`],
      ['PUT', `${w}/mcp-servers/${serverId}`, { name: 'pwned' }],
      ['POST', `${w}/mcp-servers/${serverId}/disable`],
      ['POST', `${w}/mcp-servers/${serverId}/enable`],
      ['POST', `${w}/mcp-servers/${serverId}/refresh-tools`],
      ['DELETE', `${w}/mcp-servers/${serverId}`],
    ];
    for (const [method, path, body] of attempts) {
      const res = await t.request(method, path, { token: b.apiKey, body });
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 });
      expect(res.body.detail).toEqual(expect.any(String));
      await t.expectEvents(res, []);
    }
    // B's key on A's workspace is refused as well.
    for (const path of [
      `/w/${a.workspaceId}/custom-toolkits/${kitId}`,
      `/w/${a.workspaceId}/mcp-servers/${serverId}`,
    ]) {
      const res = await t.request('DELETE', path, { token: b.apiKey });
      expect([403, 404]).toContain(res.status);
      await t.expectEvents(res, []);
    }
    // B's toolkit was not given A's tool, and A's resources are as they were.
    const bTools = await t.request('GET', `${w}/custom-toolkits/${bKit}/tools`, { token: b.apiKey });
    expect(bTools.body.total).toBe(0);
    const kit = await t.request('GET', `/w/${a.workspaceId}/custom-toolkits/${kitId}`, { token: a.apiKey });
    expect(kit.body).toMatchObject({ name: 'Kit', enabled: true });
    expect(kit.headers.get('etag')).toBe('"1"');
    const tool = await t.request('GET', `/w/${a.workspaceId}/custom-toolkits/${kitId}/tools/${toolId}`, {
      token: a.apiKey,
    });
    expect(tool.body).toMatchObject({ name: 'lookup', prompt: null });
    const server = await t.request('GET', `/w/${a.workspaceId}/mcp-servers/${serverId}`, { token: a.apiKey });
    expect(server.body).toMatchObject({
      name: 'Server',
      enabled: true,
      toolsFetchedAt: null,
      lastRefreshError: null,
    });
  });

  it('an apps:read key may read but every write is 403 and appends nothing', async () => {
    const a = await t.bootstrap();
    const reader = await keyWithScopes(t, a.apiKey, ['apps:read']);
    const kitId = created(
      await t.request('POST', `/w/${a.workspaceId}/custom-toolkits`, {
        token: a.apiKey,
        body: { name: 'Kit', slug: 'kit' },
      }),
    );
    const toolId = created(
      await t.request('POST', `/w/${a.workspaceId}/custom-toolkits/${kitId}/tools`, {
        token: a.apiKey,
        body: { name: 'lookup' },
      }),
    );
    const serverId = created(
      await t.request('POST', `/w/${a.workspaceId}/mcp-servers`, { token: a.apiKey, body: mcpBody('srv') }),
    );
    const w = `/w/${a.workspaceId}`;
    expect((await t.request('GET', `${w}/custom-toolkits/${kitId}`, { token: reader })).status).toBe(200);
    expect((await t.request('GET', `${w}/mcp-servers/${serverId}`, { token: reader })).status).toBe(200);

    const writes: Array<[string, string, unknown?]> = [
      ['POST', `${w}/custom-toolkits`, { name: 'X', slug: 'x' }],
      ['PUT', `${w}/custom-toolkits/${kitId}`, { name: 'pwned' }],
      ['POST', `${w}/custom-toolkits/${kitId}/disable`],
      ['POST', `${w}/custom-toolkits/${kitId}/enable`],
      ['DELETE', `${w}/custom-toolkits/${kitId}`],
      ['POST', `${w}/custom-toolkits/${kitId}/tools`, { name: 'injected' }],
      ['PUT', `${w}/custom-toolkits/${kitId}/tools/${toolId}`, { prompt: 'pwned' }],
      ['DELETE', `${w}/custom-toolkits/${kitId}/tools/${toolId}`],
      ['POST', `${w}/mcp-servers`, mcpBody('other')],
      ['PUT', `${w}/mcp-servers/${serverId}`, { name: 'pwned' }],
      ['POST', `${w}/mcp-servers/${serverId}/disable`],
      ['POST', `${w}/mcp-servers/${serverId}/enable`],
      ['POST', `${w}/mcp-servers/${serverId}/refresh-tools`],
      ['DELETE', `${w}/mcp-servers/${serverId}`],
    ];
    for (const [method, path, body] of writes) {
      const res = await t.request(method, path, { token: reader, body });
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 403 });
      expect(res.body.detail).toEqual(expect.any(String));
      await t.expectEvents(res, []);
    }
    const list = await t.request('GET', `${w}/custom-toolkits`, { token: a.apiKey });
    expect(list.body.total).toBe(1);
    expect((await t.request('GET', `${w}/mcp-servers`, { token: a.apiKey })).body.total).toBe(1);
    const server = await t.request('GET', `${w}/mcp-servers/${serverId}`, { token: a.apiKey });
    expect(server.body).toMatchObject({
      name: 'Server',
      enabled: true,
      toolsFetchedAt: null,
      lastRefreshError: null,
    });
  });

  it('NUL characters and oversized strings are 400 {detail} naming the field, and append nothing', async () => {
    const a = await t.bootstrap();
    const w = `/w/${a.workspaceId}`;
    const kitId = created(
      await t.request('POST', `${w}/custom-toolkits`, {
        token: a.apiKey,
        body: { name: 'Kit', slug: 'kit' },
      }),
    );
    const toolId = created(
      await t.request('POST', `${w}/custom-toolkits/${kitId}/tools`, {
        token: a.apiKey,
        body: { name: 'lookup' },
      }),
    );
    const serverId = created(
      await t.request('POST', `${w}/mcp-servers`, { token: a.apiKey, body: mcpBody('srv') }),
    );
    const big = (n: number) => 'x'.repeat(n);
    const schemaWith = (description: string) => ({
      type: 'object',
      properties: { id: { type: 'string', description } },
    });
    const cases: Array<[string, string, Record<string, unknown>, string]> = [
      // toolkits
      ['POST', `${w}/custom-toolkits`, { name: 'a\u0000b', slug: 'nul' }, 'name'],
      ['POST', `${w}/custom-toolkits`, { name: 'ok', slug: 'nul2', description: 'd\u0000' }, 'description'],
      ['POST', `${w}/custom-toolkits`, { name: big(201), slug: 'long' }, 'name'],
      [
        'POST',
        `${w}/custom-toolkits`,
        { name: 'ok', slug: 'long2', description: big(10_001) },
        'description',
      ],
      ['PUT', `${w}/custom-toolkits/${kitId}`, { name: '\u0000' }, 'name'],
      ['PUT', `${w}/custom-toolkits/${kitId}`, { description: big(10_001) }, 'description'],
      // tools
      ['POST', `${w}/custom-toolkits/${kitId}/tools`, { name: 'a\u0000' }, 'name'],
      ['POST', `${w}/custom-toolkits/${kitId}/tools`, { name: 'n1', description: 'x\u0000y' }, 'description'],
      ['POST', `${w}/custom-toolkits/${kitId}/tools`, { name: 'n2', prompt: 'do \u0000 it' }, 'prompt'],
      ['POST', `${w}/custom-toolkits/${kitId}/tools`, { name: 'n3', prompt: big(50_001) }, 'prompt'],
      [
        'POST',
        `${w}/custom-toolkits/${kitId}/tools`,
        { name: 'n4', description: big(10_001) },
        'description',
      ],
      ['POST', `${w}/custom-toolkits/${kitId}/tools`, { name: big(65) }, 'name'],
      [
        'POST',
        `${w}/custom-toolkits/${kitId}/tools`,
        { name: 'n5', inputSchema: schemaWith('bad \u0000 description') },
        'inputSchema',
      ],
      [
        'POST',
        `${w}/custom-toolkits/${kitId}/tools`,
        { name: 'n6', inputSchema: schemaWith(big(40_000)) },
        'inputSchema',
      ],
      [
        'POST',
        `${w}/custom-toolkits/${kitId}/tools`,
        { name: 'n7', inputSchema: { type: 'object', properties: { ['k\u0000']: { type: 'string' } } } },
        'inputSchema',
      ],
      ['PUT', `${w}/custom-toolkits/${kitId}/tools/${toolId}`, { prompt: '\u0000' }, 'prompt'],
      ['PUT', `${w}/custom-toolkits/${kitId}/tools/${toolId}`, { prompt: big(50_001) }, 'prompt'],
      [
        'PUT',
        `${w}/custom-toolkits/${kitId}/tools/${toolId}`,
        { inputSchema: schemaWith(big(40_000)) },
        'inputSchema',
      ],
      [
        'PUT',
        `${w}/custom-toolkits/${kitId}/tools/${toolId}`,
        { inputSchema: schemaWith('\u0000') },
        'inputSchema',
      ],
      // MCP servers
      ['POST', `${w}/mcp-servers`, { ...mcpBody('nul-srv'), name: 'S\u0000' }, 'name'],
      ['POST', `${w}/mcp-servers`, { ...mcpBody('nul-srv2'), description: big(10_001) }, 'description'],
      [
        'POST',
        `${w}/mcp-servers`,
        { ...mcpBody('nul-srv3'), oauthClientSecret: `${SECRET}\u0000` },
        'oauthClientSecret',
      ],
      [
        'POST',
        `${w}/mcp-servers`,
        { ...mcpBody('nul-srv4'), oauthClientSecret: big(4097) },
        'oauthClientSecret',
      ],
      ['PUT', `${w}/mcp-servers/${serverId}`, { description: 'd\u0000' }, 'description'],
      ['PUT', `${w}/mcp-servers/${serverId}`, { name: big(201) }, 'name'],
    ];
    for (const [method, path, body, field] of cases) {
      const res = await t.request(method, path, { token: a.apiKey, body });
      const label = `${method} ${path} ${field}`;
      expect({ label, status: res.status }).toEqual({ label, status: 400 });
      expect({ label, detail: res.body.detail }).toEqual({ label, detail: expect.stringContaining(field) });
      // The refusal never echoes the secret (nor megabytes of input).
      expect(JSON.stringify(res.body)).not.toContain(SECRET);
      expect(JSON.stringify(res.body).length).toBeLessThan(2000);
      await t.expectEvents(res, []);
    }
    expect((await t.request('GET', `${w}/custom-toolkits`, { token: a.apiKey })).body.total).toBe(1);
    expect(
      (await t.request('GET', `${w}/custom-toolkits/${kitId}/tools`, { token: a.apiKey })).body.total,
    ).toBe(1);
    expect((await t.request('GET', `${w}/mcp-servers`, { token: a.apiKey })).body.total).toBe(1);
  });

  it('10 concurrent creates of one slug: exactly one 201, the rest 409', async () => {
    const a = await t.bootstrap();
    const w = `/w/${a.workspaceId}`;
    const race = async (path: string, body: (i: number) => Record<string, unknown>) => {
      const all = await Promise.all(
        Array.from({ length: 10 }, (_, i) => t.request('POST', path, { token: a.apiKey, body: body(i) })),
      );
      expect(all.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)]);
      for (const r of all.filter((x) => x.status === 409)) {
        expect(r.body.detail).toMatch(/slug|name/);
        await t.expectEvents(r, []);
      }
    };
    await race(`${w}/custom-toolkits`, (i) => ({ name: `Kit ${i}`, slug: 'same' }));
    expect((await t.request('GET', `${w}/custom-toolkits`, { token: a.apiKey })).body.total).toBe(1);
    const kitId = (await t.request('GET', `${w}/custom-toolkits`, { token: a.apiKey })).body.items[0]
      .id as number;
    // Tool names are unique in the toolkit, whatever the case.
    await race(`${w}/custom-toolkits/${kitId}/tools`, (i) => ({ name: i % 2 ? 'Lookup' : 'lookup' }));
    expect(
      (await t.request('GET', `${w}/custom-toolkits/${kitId}/tools`, { token: a.apiKey })).body.total,
    ).toBe(1);
    await race(`${w}/mcp-servers`, (i) => ({ ...mcpBody('same'), name: `Server ${i}` }));
    expect((await t.request('GET', `${w}/mcp-servers`, { token: a.apiKey })).body.total).toBe(1);
  });

  it('the OAuth client secret is never in a response body, list, replay or refusal', async () => {
    const a = await t.bootstrap();
    const w = `/w/${a.workspaceId}`;
    const bodies: unknown[] = [];
    const keep = (res: TestResponse) => {
      bodies.push({ status: res.status, headers: [...res.headers.entries()], body: res.body });
      return res;
    };
    const first = keep(
      await t.request('POST', `${w}/mcp-servers`, {
        token: a.apiKey,
        headers: { 'idempotency-key': 'secret-replay-1' },
        body: mcpBody('srv'),
      }),
    );
    const id = created(first);
    expect(first.body).toMatchObject({ hasOauthClientId: true, hasOauthClientSecret: true });
    const replay = keep(
      await t.request('POST', `${w}/mcp-servers`, {
        token: a.apiKey,
        headers: { 'idempotency-key': 'secret-replay-1' },
        body: mcpBody('srv'),
      }),
    );
    expect(replay.body.id).toBe(id);
    const path = `${w}/mcp-servers/${id}`;
    keep(await t.request('GET', path, { token: a.apiKey }));
    keep(await t.request('GET', `${w}/mcp-servers`, { token: a.apiKey }));
    keep(
      await t.request('GET', `${w}/mcp-servers?search=${encodeURIComponent(SECRET)}`, { token: a.apiKey }),
    );
    keep(
      await t.request('PUT', path, {
        token: a.apiKey,
        body: { oauthClientSecret: `${SECRET}-2`, name: 'S2' },
      }),
    );
    keep(await t.request('POST', `${path}/disable`, { token: a.apiKey }));
    keep(await t.request('POST', `${path}/refresh-tools`, { token: a.apiKey }));
    // Refusals: the secret on a direct-auth server, a conflicting slug, a bad URL.
    const bad = keep(
      await t.request('POST', `${w}/mcp-servers`, {
        token: a.apiKey,
        body: { ...mcpBody('srv2'), supportsDirectAuth: true, oauthClientId: undefined },
      }),
    );
    expect(bad.status).toBe(400);
    keep(await t.request('POST', `${w}/mcp-servers`, { token: a.apiKey, body: mcpBody('srv') }));
    keep(
      await t.request('POST', `${w}/mcp-servers`, {
        token: a.apiKey,
        body: { ...mcpBody('x'), mcpUrl: 'nope' },
      }),
    );
    keep(
      await t.request('POST', `${w}/mcp-servers`, {
        token: a.apiKey,
        body: { ...mcpBody('y'), bogus: SECRET },
      }),
    );
    const text = JSON.stringify(bodies);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('client-id-1');
    const events = (await t.eventsOf(first)).map((e) => e.data);
    expect(JSON.stringify(events)).not.toContain(SECRET);
  });
});
