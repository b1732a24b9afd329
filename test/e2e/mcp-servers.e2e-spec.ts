import { QueryBus } from '@nestjs/cqrs';
import { ListEnabledMcpServerToolsQuery } from '../../src/modules/mcp-servers';
import { startTestApp, TestApp } from '../support/app';
import { keyWithScopes } from '../support/identity-fixtures';
import {
  PeerTool,
  startAuthServer,
  startSilentServer,
  startSseOnlyMcp,
  startStreamableMcp,
} from '../support/mcp-peers';

const tool = (name: string, description = `does ${name}`): PeerTool => ({
  name,
  description,
  inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
});

const stored = (t: PeerTool) => ({
  name: t.name,
  title: null,
  description: t.description ?? null,
  inputSchema: t.inputSchema,
});

describe('external MCP servers (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Test peers listen on 127.0.0.1 over http: allowed here only through configuration.
    t = await startTestApp({
      env: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', MCP_TIMEOUT_MS: '1500' },
    });
  });
  afterAll(() => t.close());

  const create = async (wid: string, token: string, body: Record<string, unknown>) => {
    const res = await t.request('POST', `/w/${wid}/mcp-servers`, { token, body });
    expect(res.status).toBe(201);
    return res;
  };

  it('refreshes the tools of a Streamable HTTP server, pages through them, and follows a change', async () => {
    let tools = [tool('lookup'), tool('create_order'), tool('cancel')];
    const peer = await startStreamableMcp(() => tools);
    try {
      const a = await t.bootstrap();
      const res = await create(a.workspaceId, a.apiKey, {
        name: ' CRM ',
        slug: 'crm',
        mcpUrl: peer.url,
        supportsDirectAuth: true,
        description: 'orders',
      });
      const id = res.body.id as number;
      expect(res.body).toMatchObject({
        id,
        name: 'CRM',
        slug: 'crm',
        mcpUrl: peer.url,
        supportsDirectAuth: true,
        hasDirectAuthToken: false,
        enabled: true,
        tools: [],
        toolsFetchedAt: null,
        lastRefreshError: null,
      });
      expect(res.headers.get('location')).toBe(`/api/v2/w/${a.workspaceId}/mcp-servers/${id}`);
      await t.expectEvents(res, [
        {
          type: 'McpServerCreated',
          stream: `mcpserver-${id}`,
          data: {
            serverId: id,
            workspaceId: a.workspaceId,
            slug: 'crm',
            supportsDirectAuth: true,
            enabled: true,
          },
        },
      ]);

      const path = `/w/${a.workspaceId}/mcp-servers/${id}`;
      const refresh = await t.request('POST', `${path}/refresh-tools`, { token: a.apiKey });
      expect(refresh.status).toBe(200);
      expect(refresh.body.tools).toEqual(tools.map(stored));
      expect(refresh.body).toMatchObject({
        transport: 'streamable-http',
        toolCount: 3,
        lastRefreshError: null,
      });
      expect(Date.parse(refresh.body.toolsFetchedAt)).not.toBeNaN();
      await t.expectEvents(refresh, [
        {
          type: 'McpServerToolsFetched',
          stream: `mcpserver-${id}`,
          data: { serverId: id, transport: 'streamable-http', tools: tools.map(stored) },
        },
      ]);
      expect(peer.authorizations.every((h) => h === undefined)).toBe(true);

      tools = [tool('lookup', 'finds an order'), tool('refund')];
      const again = await t.request('POST', `${path}/refresh-tools`, { token: a.apiKey });
      expect(again.body.tools).toEqual(tools.map(stored));
      expect(again.body.toolsFetchedAt >= refresh.body.toolsFetchedAt).toBe(true);

      const get = await t.request('GET', path, { token: a.apiKey });
      expect(get.body.tools.map((x: PeerTool) => x.name)).toEqual(['lookup', 'refund']);
      expect(get.headers.get('etag')).toBe(`"${3}"`);
    } finally {
      await peer.close();
    }
  });

  it('falls back to HTTP+SSE for a server that speaks only that, sending the configured bearer', async () => {
    const peer = await startSseOnlyMcp(() => [tool('old_style')]);
    try {
      const a = await t.bootstrap();
      const res = await create(a.workspaceId, a.apiKey, {
        name: 'Legacy',
        slug: 'legacy',
        mcpUrl: peer.url,
        supportsDirectAuth: true,
        directAuthToken: 'direct-bearer-123',
      });
      expect(res.body.hasDirectAuthToken).toBe(true);
      expect(JSON.stringify(res.body)).not.toContain('direct-bearer-123');
      const refresh = await t.request(
        'POST',
        `/w/${a.workspaceId}/mcp-servers/${res.body.id}/refresh-tools`,
        {
          token: a.apiKey,
        },
      );
      expect(refresh.body).toMatchObject({ transport: 'sse', tools: [stored(tool('old_style'))] });
      expect(peer.authorizations).toContain('Bearer direct-bearer-123');
      const events = (await t.eventsOf(res)).map((e) => e.data);
      expect(JSON.stringify(events)).not.toContain('direct-bearer-123');
    } finally {
      await peer.close();
    }
  });

  it('records a 401 and a timeout with their reasons and keeps the previous tools', async () => {
    let requireBearer = false;
    const peer = await startStreamableMcp(() => [tool('kept')], {
      get requiredBearer() {
        return requireBearer ? 'never-given' : undefined;
      },
    });
    const silent = await startSilentServer();
    try {
      const a = await t.bootstrap();
      const res = await create(a.workspaceId, a.apiKey, {
        name: 'Flaky',
        slug: 'flaky',
        mcpUrl: peer.url,
        supportsDirectAuth: true,
      });
      const path = `/w/${a.workspaceId}/mcp-servers/${res.body.id}`;
      const ok = await t.request('POST', `${path}/refresh-tools`, { token: a.apiKey });
      expect(ok.body.tools).toEqual([stored(tool('kept'))]);

      requireBearer = true;
      const denied = await t.request('POST', `${path}/refresh-tools`, { token: a.apiKey });
      expect(denied.status).toBe(200);
      expect(denied.body.lastRefreshError).toEqual({
        reason: 'unauthorized',
        detail: expect.stringMatching(/401/),
        at: expect.any(String),
      });
      expect(denied.body.tools).toEqual([stored(tool('kept'))]);
      expect(denied.body.toolsFetchedAt).toBe(ok.body.toolsFetchedAt);
      await t.expectEvents(denied, [
        {
          type: 'McpServerToolsFetchFailed',
          stream: `mcpserver-${res.body.id}`,
          data: { reason: 'unauthorized' },
        },
      ]);

      const moved = await t.request('PUT', path, { token: a.apiKey, body: { mcpUrl: silent.url } });
      expect(moved.status).toBe(200);
      const started = Date.now();
      const slow = await t.request('POST', `${path}/refresh-tools`, { token: a.apiKey });
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(slow.body.lastRefreshError).toMatchObject({
        reason: 'timeout',
        detail: expect.stringMatching(/1500 ms/),
      });
      expect(slow.body.tools).toEqual([stored(tool('kept'))]);

      await silent.close();
      const gone = await t.request('POST', `${path}/refresh-tools`, { token: a.apiKey });
      expect(gone.body.lastRefreshError).toMatchObject({
        reason: 'unreachable',
        detail: expect.stringMatching(/ECONNREFUSED/),
      });
    } finally {
      await peer.close();
      await silent.close().catch(() => undefined);
    }
  });

  it('authenticates with OAuth client credentials against the advertised authorization server', async () => {
    const auth = await startAuthServer({ id: 'client-1', secret: 'client-secret-xyz' }, 'issued-token-789');
    const peer = await startStreamableMcp(() => [tool('secured')], {
      requiredBearer: 'issued-token-789',
      authorizationServer: auth.origin,
    });
    try {
      const a = await t.bootstrap();
      const missing = await t.request('POST', `/w/${a.workspaceId}/mcp-servers`, {
        token: a.apiKey,
        body: { name: 'S', slug: 's', mcpUrl: peer.url, supportsDirectAuth: false },
      });
      expect(missing.status).toBe(400);
      expect(missing.body.detail).toMatch(/^oauthClientId: required when supportsDirectAuth is false/);

      const res = await create(a.workspaceId, a.apiKey, {
        name: 'Secured',
        slug: 'secured',
        mcpUrl: peer.url,
        supportsDirectAuth: false,
        oauthClientId: 'client-1',
        oauthClientSecret: 'client-secret-xyz',
      });
      expect(res.body).toMatchObject({ hasOauthClientId: true, hasOauthClientSecret: true });
      expect(JSON.stringify(res.body)).not.toMatch(/client-secret-xyz|client-1/);
      const path = `/w/${a.workspaceId}/mcp-servers/${res.body.id}`;
      const refresh = await t.request('POST', `${path}/refresh-tools`, { token: a.apiKey });
      expect(refresh.body.lastRefreshError).toBeNull();
      expect(refresh.body.tools).toEqual([stored(tool('secured'))]);
      expect(auth.tokenRequests).toEqual([
        { clientId: 'client-1', grantType: 'client_credentials', resource: peer.url },
      ]);
      expect(peer.authorizations.at(-1)).toBe('Bearer issued-token-789');

      const list = await t.request('GET', `/w/${a.workspaceId}/mcp-servers`, { token: a.apiKey });
      const get = await t.request('GET', path, { token: a.apiKey });
      const events = [...(await t.eventsOf(res)), ...(await t.eventsOf(refresh))].map((e) => e.data);
      for (const text of [JSON.stringify(list.body), JSON.stringify(get.body), JSON.stringify(events)])
        expect(text).not.toContain('client-secret-xyz');

      const wrong = await t.request('PUT', path, { token: a.apiKey, body: { oauthClientSecret: 'wrong' } });
      expect(wrong.status).toBe(200);
      const refused = await t.request('POST', `${path}/refresh-tools`, { token: a.apiKey });
      expect(refused.body.lastRefreshError).toMatchObject({
        reason: 'oauth',
        detail: expect.stringMatching(/401/),
      });
      expect(refused.body.tools).toEqual([stored(tool('secured'))]);
    } finally {
      await peer.close();
      await auth.close();
    }
  });

  it('enabling refreshes; a disabled server offers its tools to nobody', async () => {
    let tools = [tool('one')];
    const peer = await startStreamableMcp(() => tools);
    try {
      const a = await t.bootstrap();
      const res = await create(a.workspaceId, a.apiKey, {
        name: 'E',
        slug: 'e',
        mcpUrl: peer.url,
        supportsDirectAuth: true,
      });
      const path = `/w/${a.workspaceId}/mcp-servers/${res.body.id}`;
      await t.request('POST', `${path}/refresh-tools`, { token: a.apiKey });
      const offered = () => t.app.get(QueryBus).execute(new ListEnabledMcpServerToolsQuery(a.workspaceId));
      expect(
        (await offered()).map((x: { name: string; serverSlug: string }) => `${x.serverSlug}/${x.name}`),
      ).toEqual(['e/one']);

      const off = await t.request('POST', `${path}/disable`, { token: a.apiKey });
      expect(off.body.enabled).toBe(false);
      await t.expectEvents(off, [
        { type: 'McpServerDisabled', stream: `mcpserver-${res.body.id}`, data: {} },
      ]);
      expect(await offered()).toEqual([]);
      const again = await t.request('POST', `${path}/disable`, { token: a.apiKey });
      await t.expectEvents(again, []);

      tools = [tool('one'), tool('two')];
      const on = await t.request('POST', `${path}/enable`, { token: a.apiKey });
      expect(on.body).toMatchObject({ enabled: true, toolCount: 2 });
      await t.expectEvents(on, [
        { type: 'McpServerEnabled', stream: `mcpserver-${res.body.id}`, data: {} },
        {
          type: 'McpServerToolsFetched',
          stream: `mcpserver-${res.body.id}`,
          data: { tools: tools.map(stored) },
        },
      ]);
      expect((await offered()).map((x: { name: string }) => x.name)).toEqual(['one', 'two']);

      const dup = await t.request('POST', `/w/${a.workspaceId}/mcp-servers`, {
        token: a.apiKey,
        body: { name: 'E2', slug: 'e', mcpUrl: peer.url, supportsDirectAuth: true },
      });
      expect(dup.status).toBe(409);
      expect(dup.body.detail).toMatch(/^slug: MCP server \d+ of this workspace already has the slug "e"/);

      const del = await t.request('DELETE', path, { token: a.apiKey, headers: { 'if-match': '"1"' } });
      expect(del.status).toBe(412);
      const gone = await t.request('DELETE', path, { token: a.apiKey });
      expect(gone.status).toBe(204);
      await t.expectEvents(gone, [
        { type: 'McpServerDeleted', stream: `mcpserver-${res.body.id}`, data: { slug: 'e' } },
      ]);
      expect((await t.request('GET', path, { token: a.apiKey })).status).toBe(404);
      expect(await offered()).toEqual([]);
    } finally {
      await peer.close();
    }
  });

  it('validates input naming the field, and checks scopes and tenants', async () => {
    const a = await t.bootstrap();
    const b = await t.bootstrap();
    const base = `/w/${a.workspaceId}/mcp-servers`;
    const bad = async (body: Record<string, unknown>, detail: RegExp) => {
      const res = await t.request('POST', base, { token: a.apiKey, body });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(detail);
    };
    const ok = { name: 'N', slug: 'n', mcpUrl: 'http://127.0.0.1:9/mcp', supportsDirectAuth: true };
    await bad({ ...ok, mcpUrl: 'ftp://x/y' }, /^mcpUrl: must be an https:\/\/ URL/);
    await bad({ slug: 'n', mcpUrl: ok.mcpUrl, supportsDirectAuth: true }, /name/);
    await bad({ name: 'N', slug: 'n', supportsDirectAuth: true }, /mcpUrl/);
    await bad({ ...ok, mcpUrl: 'https://u:p@example.com/' }, /^mcpUrl: must not carry credentials/);
    await bad({ ...ok, slug: 'Bad Slug' }, /^slug:/);
    await bad({ ...ok, supportsDirectAuth: 'yes' }, /supportsDirectAuth/);
    await bad({ ...ok, oauthClientId: 'x' }, /^oauthClientId: only when supportsDirectAuth is false/);
    expect((await t.request('GET', base, { token: a.apiKey })).body.total).toBe(0);

    const created = await create(a.workspaceId, a.apiKey, ok);
    const path = `${base}/${created.body.id}`;
    const reader = await keyWithScopes(t, a.apiKey, ['apps:read']);
    const writer = await keyWithScopes(t, a.apiKey, ['apps:write']);
    expect((await t.request('GET', path, { token: reader })).status).toBe(200);
    expect((await t.request('POST', base, { token: reader, body: { ...ok, slug: 'r' } })).status).toBe(403);
    expect((await t.request('POST', `${path}/disable`, { token: reader })).status).toBe(403);
    expect((await t.request('POST', `${path}/refresh-tools`, { token: reader })).status).toBe(403);
    expect((await t.request('DELETE', path, { token: writer })).status).toBe(403);
    expect((await t.request('POST', `${path}/disable`, { token: writer })).status).toBe(200);

    const foreign = `/w/${b.workspaceId}/mcp-servers/${created.body.id}`;
    expect((await t.request('GET', foreign, { token: b.apiKey })).status).toBe(404);
    expect((await t.request('PUT', foreign, { token: b.apiKey, body: { name: 'x' } })).status).toBe(404);
    expect((await t.request('POST', `${foreign}/refresh-tools`, { token: b.apiKey })).status).toBe(404);
    expect((await t.request('DELETE', foreign, { token: b.apiKey })).status).toBe(404);
    expect((await t.request('GET', path, { token: b.apiKey })).status).toBe(404);
    expect((await t.request('GET', `/w/${b.workspaceId}/mcp-servers`, { token: b.apiKey })).body.total).toBe(
      0,
    );
    expect((await t.request('GET', `${base}/abc`, { token: a.apiKey })).status).toBe(404);
  });
});

describe('external MCP servers under the production address rules (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('refuses loopback, private and metadata addresses and plain http', async () => {
    const a = await t.bootstrap();
    const post = (mcpUrl: string) =>
      t.request('POST', `/w/${a.workspaceId}/mcp-servers`, {
        token: a.apiKey,
        body: { name: 'X', slug: 'x', mcpUrl, supportsDirectAuth: true },
      });
    for (const [url, detail] of [
      ['https://127.0.0.1:8443/mcp', /^mcpUrl: the host resolves to a loopback/],
      ['https://localhost/mcp', /^mcpUrl: the host resolves to a loopback/],
      ['https://10.1.2.3/mcp', /^mcpUrl: the host resolves to a loopback, private/],
      ['https://169.254.169.254/latest', /metadata address/],
      ['https://[::1]/mcp', /^mcpUrl: the host resolves to a loopback/],
      ['http://example.com/mcp', /^mcpUrl: must be an https:\/\/ URL/],
    ] as const) {
      const res = await post(url);
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(detail);
      await t.expectEvents(res, []);
    }
  });
});
