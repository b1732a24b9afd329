import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestApp, TestApp } from '../support/app';
import {
  App,
  authorizeThroughPages,
  authorizeUrl,
  createApp,
  OAuthBrowser,
  Owner,
  ownerWithPassword,
  PASSWORD,
  pkcePair,
  postForm,
  REDIRECT,
  tokensFor,
} from '../support/oauth-browser';
import { startStreamableMcp } from '../support/mcp-peers';

/**
 * A hostile client, fifth round: what the earlier attack specs left out of the
 * authorization-code flow (https redirect look-alikes, resource indicators, PKCE verifier
 * shapes, client authentication edge cases), dynamic registration, the pages' framing
 * headers, JSON-RPC robustness of /mcp, and hostile external MCP servers.
 */
describe('attack: OAuth, MCP and MCP servers, fifth round (e2e)', () => {
  let t: TestApp;
  let owner: Owner;
  let app: App;

  beforeAll(async () => {
    t = await startTestApp({
      env: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', MCP_TIMEOUT_MS: '3000' },
    });
    owner = await ownerWithPassword(t, 'Fifth round');
    app = await createApp(t, owner.apiKey);
  });
  afterAll(() => t.close());

  const mcp = (token: string | undefined, body: unknown, headers: Record<string, string> = {}) =>
    t.request('POST', '/mcp', {
      token,
      body,
      headers: { accept: 'application/json, text/event-stream', ...headers },
    });

  describe('the authorization endpoint', () => {
    it.each([
      'https://client.example.com/callback/',
      'https://CLIENT.example.com/callback',
      'https://client.example.com/Callback',
      'https://client.example.com/callback?x=1',
      'https://client.example.com/callback#f',
      'https://client.example.com@evil.example/callback',
      'https://client.example.com:443/callback',
      'https://client.example.com./callback',
      'https://client.example.com/callback/../callback',
      'https://client.example.com/%63allback',
      'https://evil.example/?https://client.example.com/callback',
      'http://client.example.com/callback',
      'javascript://client.example.com/callback',
    ])('never redirects to the https look-alike %j', async (redirectUri) => {
      const page = await new OAuthBrowser().get(
        authorizeUrl(t, {
          response_type: 'code',
          client_id: app.clientId,
          redirect_uri: redirectUri,
          scope: 'nonsense',
          state: 's',
        }),
      );
      expect({ status: page.status, location: page.location }).toEqual({ status: 400, location: null });
    });

    it('refuses a sign-in form posted without the cookie its CSRF field came from', async () => {
      const browser = new OAuthBrowser();
      const page = await browser.get(
        authorizeUrl(t, {
          response_type: 'code',
          client_id: app.clientId,
          redirect_uri: REDIRECT,
          scope: 'workspace:read',
        }),
      );
      const form = page.form();
      browser.forgetCookies();
      const forged = await browser.submit(form, { email: owner.email, password: PASSWORD });
      expect(forged.status).toBe(403);
      expect(forged.headers.get('set-cookie') ?? '').not.toMatch(/ws_oauth_session=/);
    });

    it('frames none of its pages: sign-in, consent and error pages forbid framing', async () => {
      const browser = new OAuthBrowser();
      const params = {
        response_type: 'code',
        client_id: app.clientId,
        redirect_uri: REDIRECT,
        scope: 'workspace:read',
        state: 's',
      };
      const signIn = await browser.get(authorizeUrl(t, params));
      const error = await browser.get(authorizeUrl(t, { ...params, redirect_uri: 'https://evil.example/' }));
      for (const page of [signIn, error]) {
        expect(page.headers.get('x-frame-options')).toBe('DENY');
        expect(page.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
        expect(page.headers.get('cache-control')).toBe('no-store');
      }
    });
  });

  describe('resource indicators (RFC 8707)', () => {
    const mcpResource = () => `${t.config.publicBaseUrl}/mcp`;

    it.each([
      () => 'https://evil.example/mcp',
      (base: string) => `${base}evil/mcp`,
      (base: string) => `${base}/../../elsewhere`,
      (base: string) => `${base}/mcp#fragment`,
      (base: string) => base.replace('://', '://user@evil.example/?'),
      () => 'not a uri',
    ])('sends an authorization request for another resource back as invalid_target (%#)', async (of) => {
      const page = await new OAuthBrowser().get(
        authorizeUrl(t, {
          response_type: 'code',
          client_id: app.clientId,
          redirect_uri: REDIRECT,
          scope: 'workspace:read',
          state: 'st',
          resource: of(t.config.publicBaseUrl),
        }),
      );
      expect(page.status).toBe(302);
      const back = new URL(page.location!);
      expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
      expect(back.searchParams.get('error')).toBe('invalid_target');
      expect(back.searchParams.get('state')).toBe('st');
      expect(back.searchParams.get('code')).toBeNull();
    });

    it('issues tokens for its own MCP resource, and refuses another at the token endpoint', async () => {
      const { verifier, challenge } = pkcePair();
      const redirect = await authorizeThroughPages(t, owner, {
        client_id: app.clientId,
        redirect_uri: REDIRECT,
        scope: 'workspace:read',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        resource: mcpResource(),
      });
      const code = redirect.searchParams.get('code')!;
      expect(code).toBeTruthy();
      const form = {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        client_id: app.clientId,
        client_secret: app.clientSecret!,
        code_verifier: verifier,
      };
      const foreign = await postForm(t, '/oauth/token', { ...form, resource: 'https://evil.example/mcp' });
      expect(foreign.status).toBe(400);
      expect(foreign.body.error).toBe('invalid_target');
      const ok = await postForm(t, '/oauth/token', { ...form, resource: mcpResource() });
      expect(ok.status).toBe(200);
      const refreshForm = {
        grant_type: 'refresh_token',
        refresh_token: ok.body.refresh_token,
        client_id: app.clientId,
        client_secret: app.clientSecret!,
      };
      const foreignRefresh = await postForm(t, '/oauth/token', {
        ...refreshForm,
        resource: 'https://evil.example/mcp',
      });
      expect(foreignRefresh.body.error).toBe('invalid_target');
      const refreshed = await postForm(t, '/oauth/token', { ...refreshForm, resource: mcpResource() });
      expect(refreshed.status).toBe(200);
    });
  });

  describe('the token endpoint', () => {
    const codeWithVerifier = async () => {
      const { verifier, challenge } = pkcePair();
      const redirect = await authorizeThroughPages(t, owner, {
        client_id: app.clientId,
        redirect_uri: REDIRECT,
        scope: 'workspace:read',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      return { code: redirect.searchParams.get('code')!, verifier };
    };
    const exchange = (code: string, extra: Record<string, string | undefined>) =>
      postForm(t, '/oauth/token', {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        client_id: app.clientId,
        client_secret: app.clientSecret!,
        ...extra,
      });

    it('refuses verifiers of the wrong length or charset, and a confidential client without its secret', async () => {
      const { code, verifier } = await codeWithVerifier();
      for (const bad of [
        verifier.slice(0, 42),
        `${verifier}${'a'.repeat(129 - verifier.length)}`,
        `${verifier.slice(0, -1)}+`,
        `${verifier.slice(0, -1)}=`,
        ` ${verifier}`,
      ]) {
        const res = await exchange(code, { code_verifier: bad });
        expect({ bad, status: res.status, error: res.body.error }).toEqual({
          bad,
          status: 400,
          error: 'invalid_grant',
        });
      }
      const noSecret = await exchange(code, { code_verifier: verifier, client_secret: undefined });
      expect(noSecret.status).toBe(401);
      expect(noSecret.body.error).toBe('invalid_client');
      const ok = await exchange(code, { code_verifier: verifier });
      expect(ok.status).toBe(200);
    });

    it('lets one of two racing exchanges of a code win, and then revokes what it got', async () => {
      const { code, verifier } = await codeWithVerifier();
      const both = await Promise.all([
        exchange(code, { code_verifier: verifier }),
        exchange(code, { code_verifier: verifier }),
      ]);
      expect(both.map((r) => r.status).sort()).toEqual([200, 400]);
      const won = both.find((r) => r.status === 200)!.body;
      expect(both.find((r) => r.status === 400)!.body.error).toBe('invalid_grant');
      expect((await t.request('GET', `/w/${owner.workspaceId}`, { token: won.access_token })).status).toBe(
        401,
      );
      const refresh = await postForm(t, '/oauth/token', {
        grant_type: 'refresh_token',
        refresh_token: won.refresh_token,
        client_id: app.clientId,
        client_secret: app.clientSecret!,
      });
      expect(refresh.body.error).toBe('invalid_grant');
    });

    it('lets one of two racing refreshes of a token win, and then revokes the family', async () => {
      const tokens = await tokensFor(t, owner, app, 'workspace:read');
      const refresh = () =>
        postForm(t, '/oauth/token', {
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token,
          client_id: app.clientId,
          client_secret: app.clientSecret!,
        });
      const both = await Promise.all([refresh(), refresh()]);
      expect(both.map((r) => r.status).sort()).toEqual([200, 400]);
      const won = both.find((r) => r.status === 200)!.body;
      for (const token of [won.access_token, tokens.access_token])
        expect((await t.request('GET', `/w/${owner.workspaceId}`, { token })).status).toBe(401);
      const auth = { id: app.clientId, secret: app.clientSecret! };
      expect((await postForm(t, '/oauth/introspect', { token: won.refresh_token }, auth)).body).toEqual({
        active: false,
      });
    });

    it('kills a pending code bound to a redirect URI the app has since dropped', async () => {
      const retired = 'https://old.client.example.com/callback';
      const two = await createApp(t, owner.apiKey, { redirectUris: [REDIRECT, retired] });
      const { verifier, challenge } = pkcePair();
      const back = await authorizeThroughPages(t, owner, {
        client_id: two.clientId,
        redirect_uri: retired,
        scope: 'workspace:read',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      expect(`${back.origin}${back.pathname}`).toBe(retired);
      const put = await t.request('PUT', `/me/apps/${two.id}`, {
        token: owner.apiKey,
        body: { redirectUris: [REDIRECT] },
      });
      expect(put.status).toBe(200);
      const res = await postForm(t, '/oauth/token', {
        grant_type: 'authorization_code',
        code: back.searchParams.get('code')!,
        redirect_uri: retired,
        client_id: two.clientId,
        client_secret: two.clientSecret!,
        code_verifier: verifier,
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_grant');
      expect(res.body.access_token).toBeUndefined();
    });

    it('refuses a whitespace-only scope at refresh instead of issuing a token with no scope', async () => {
      const tokens = await tokensFor(t, owner, app, 'workspace:read');
      const res = await postForm(t, '/oauth/token', {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: app.clientId,
        client_secret: app.clientSecret!,
        scope: '   ',
      });
      expect(res.body.error).toBe('invalid_scope');
    });

    it('does not let a public client claim a secret, nor a stranger authenticate with a Basic header naming no client', async () => {
      const pub = await createApp(t, owner.apiKey, { clientType: 'public' });
      const withSecret = await postForm(t, '/oauth/revoke', {
        token: 'x',
        client_id: pub.clientId,
        client_secret: 'anything',
      });
      expect(withSecret.status).toBe(401);
      const emptyBasic = await fetch(`${t.baseUrl}/oauth/revoke`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(':').toString('base64')}`,
        },
        body: 'token=x',
      });
      expect(emptyBasic.status).toBe(401);
    });
  });

  describe('dynamic client registration', () => {
    it.each([
      'javascript:alert(1)//',
      'data:text/html,<script>alert(1)</script>',
      'http://client.example.com/cb',
      'https://client.example.com@evil.example/cb',
      'file:///etc/passwd',
      'https:///client.example.com/cb',
      'https:/client.example.com/cb',
      'https:\\\\client.example.com/cb',
    ])('refuses the redirect URI %j', async (uri) => {
      const res = await t.request('POST', '/oauth/register', {
        body: { client_name: 'x', redirect_uris: [uri], token_endpoint_auth_method: 'none' },
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_redirect_uri');
      expect(await t.eventsOf(res)).toEqual([]);
    });

    it('refuses a name with a NUL or of 100,000 characters, and account scopes', async () => {
      for (const body of [
        { client_name: 'a\u0000b' },
        { client_name: 'n'.repeat(100_000) },
        { scope: 'account:admin' },
        { scope: 'account:read' },
      ]) {
        const res = await t.request('POST', '/oauth/register', {
          body: { redirect_uris: ['http://localhost:3000/cb'], ...body },
        });
        expect({ body: JSON.stringify(body).slice(0, 40), status: res.status }).toEqual({
          body: JSON.stringify(body).slice(0, 40),
          status: 400,
        });
        expect(await t.eventsOf(res)).toEqual([]);
      }
    });
  });

  describe('the MCP endpoint as JSON-RPC', () => {
    let token: string;
    beforeAll(async () => {
      const mcpApp = await createApp(t, owner.apiKey, { scopes: ['members:read'] });
      token = (await tokensFor(t, owner, mcpApp, 'members:read')).access_token;
    });

    it('answers malformed messages with JSON-RPC errors, never a 500', async () => {
      const cases: unknown[] = [
        { jsonrpc: '1.0', id: 1, method: 'tools/list' },
        { id: 1, method: 'tools/list' },
        { jsonrpc: '2.0', id: { a: 1 }, method: 'tools/list' },
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'members.search', arguments: [1] } },
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'members.search', arguments: 'x' } },
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} },
        { jsonrpc: '2.0', id: 1, method: 'tools/call' },
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x'.repeat(100_000) } },
        'just a string',
        42,
        null,
      ];
      for (const body of cases) {
        const res = await mcp(token, body);
        expect({ body: JSON.stringify(body)?.slice(0, 60), ok: res.status < 500 }).toEqual({
          body: JSON.stringify(body)?.slice(0, 60),
          ok: true,
        });
        expect(res.body).toBeDefined();
      }
    });

    it('answers an unknown method with -32601, a notification with 202 and no body, and echoes a huge id', async () => {
      const unknown = await mcp(token, { jsonrpc: '2.0', id: 7, method: 'nope/nothing' });
      expect(unknown.status).toBe(200);
      expect(unknown.body.error.code).toBe(-32601);
      const note = await mcp(token, { jsonrpc: '2.0', method: 'notifications/initialized' });
      expect(note.status).toBe(202);
      const huge = await mcp(token, { jsonrpc: '2.0', id: 'i'.repeat(10_000), method: 'tools/list' });
      expect(huge.status).toBe(200);
      expect(huge.body.id).toBe('i'.repeat(10_000));
      const big = await mcp(token, { jsonrpc: '2.0', id: Number.MAX_SAFE_INTEGER, method: 'tools/list' });
      expect(big.body.id).toBe(Number.MAX_SAFE_INTEGER);
      const session = await mcp(
        token,
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        { 'mcp-session-id': 'someone-elses-session' },
      );
      expect(session.status).toBe(200);
      expect(session.body.result.tools.map((x: { name: string }) => x.name)).toEqual(
        expect.arrayContaining(['members.search']),
      );
    });
  });

  describe('custom tool schemas', () => {
    it('refuses patterns a near miss would backtrack on for minutes: alternatives beginning alike, four long repetitions', async () => {
      const kit = await t.request('POST', `/w/${owner.workspaceId}/custom-toolkits`, {
        token: owner.apiKey,
        body: { name: 'Patterns', slug: 'patterns' },
      });
      expect(kit.status).toBe(201);
      const tools = `/w/${owner.workspaceId}/custom-toolkits/${kit.body.id}/tools`;
      const alike =
        /^inputSchema\.properties\.code\.pattern: must not repeat a group whose alternatives can begin alike/;
      const long = /^inputSchema\.properties\.code\.pattern: must not have more than 3 unbounded repetitions/;
      for (const [pattern, detail] of [
        ['^(\\w|\\d)+$', alike],
        ['^(a|aa)+$', alike],
        ['^(?:[a-z]|-)*$', alike],
        ['^\\d*\\d*\\d*\\d*x$', long],
        ['^a*a*a*a*a*b$', long],
        ['^.+.+.+.+$', long],
      ] as const) {
        const res = await t.request('POST', tools, {
          token: owner.apiKey,
          body: {
            name: 'lookup',
            inputSchema: { type: 'object', properties: { code: { type: 'string', pattern } } },
          },
        });
        expect({ pattern, status: res.status }).toEqual({ pattern, status: 400 });
        expect(res.body.detail).toMatch(detail);
        expect(await t.eventsOf(res)).toEqual([]);
      }
      const safe = await t.request('POST', tools, {
        token: owner.apiKey,
        body: {
          name: 'lookup',
          inputSchema: { type: 'object', properties: { code: { type: 'string', pattern: '^(foo|bar)+$' } } },
        },
      });
      expect(safe.status).toBe(201);
    });
  });

  describe('hostile external MCP servers', () => {
    const tool = (name: string, description = `does ${name}`) => ({
      name,
      description,
      inputSchema: { type: 'object' as const, properties: { id: { type: 'string' } } },
    });

    it('refuses a tool list too large to store, or an answer too large to read, keeping the old one', async () => {
      let tools = [tool('small')];
      const peer = await startStreamableMcp(() => tools);
      try {
        const res = await t.request('POST', `/w/${owner.workspaceId}/mcp-servers`, {
          token: owner.apiKey,
          body: { name: 'Hostile', slug: 'hostile', mcpUrl: peer.url, supportsDirectAuth: true },
        });
        expect(res.status).toBe(201);
        const path = `/w/${owner.workspaceId}/mcp-servers/${res.body.id}`;
        const ok = await t.request('POST', `${path}/refresh-tools`, { token: owner.apiKey });
        expect(ok.body.tools.map((x: { name: string }) => x.name)).toEqual(['small']);

        const cases: [ReturnType<typeof tool>[], RegExp][] = [
          [[tool('huge', 'd'.repeat(1_000_000))], /description of tool "huge" exceeds 16384 characters/],
          [[tool('n'.repeat(100_000))], /name of tool "n+…" exceeds 128 characters/],
          [
            Array.from({ length: 700 }, (_, i) => tool(`t${i}`, 'd'.repeat(8_000))),
            /tool list exceeds 4194304 characters/,
          ],
          [
            Array.from({ length: 1_200 }, (_, i) => tool(`t${i}`, 'd'.repeat(8_000))),
            /answer of the server exceeds 8388608 bytes/,
          ],
        ];
        for (const [hostile, detail] of cases) {
          tools = hostile;
          const refused = await t.request('POST', `${path}/refresh-tools`, { token: owner.apiKey });
          expect(refused.status).toBe(200);
          expect(refused.body.lastRefreshError).toMatchObject({ reason: 'protocol_error', detail });
          expect(refused.body.tools.map((x: { name: string }) => x.name)).toEqual(['small']);
          await t.expectEvents(refused, [
            { type: 'McpServerToolsFetchFailed', data: { reason: 'protocol_error' } },
          ]);
        }
      } finally {
        await peer.close();
      }
    });

    it('records a server answering invalid JSON as a protocol error', async () => {
      const http = createServer((req, res) => {
        req.resume();
        req.on('end', () =>
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0",'),
        );
      });
      await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
        const res = await t.request('POST', `/w/${owner.workspaceId}/mcp-servers`, {
          token: owner.apiKey,
          body: { name: 'Garbled', slug: 'garbled', mcpUrl: url, supportsDirectAuth: true },
        });
        expect(res.status).toBe(201);
        const refreshed = await t.request(
          'POST',
          `/w/${owner.workspaceId}/mcp-servers/${res.body.id}/refresh-tools`,
          {
            token: owner.apiKey,
          },
        );
        expect(refreshed.status).toBe(200);
        expect(refreshed.body.lastRefreshError).toMatchObject({ reason: 'protocol_error' });
        expect(refreshed.body.tools).toEqual([]);
      } finally {
        await new Promise((resolve) => http.close(resolve));
      }
    });
  });
});
