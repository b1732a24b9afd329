import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { startTestApp, TestApp } from '../support/app';
import { keyWithScopes } from '../support/identity-fixtures';
import { TEST_REDIS_URL } from '../support/redis';
import {
  authorizeThroughPages,
  authorizeUrl,
  createApp,
  OAuthBrowser,
  Owner,
  Page,
  ownerWithPassword,
  PASSWORD,
  pkcePair,
  postForm,
  REDIRECT,
  tokensFor,
} from '../support/oauth-browser';

/** OAuth apps under /me/apps, dynamic registration (RFC 7591), and account passwords. */
describe('OAuth apps, registration and passwords', () => {
  let t: TestApp;
  let owner: Owner;

  beforeAll(async () => {
    // A proxy is trusted so that sign-in attempts can come from several addresses (X-Forwarded-For).
    t = await startTestApp({ env: { SIGN_IN_ATTEMPTS_PER_MINUTE: '3', TRUST_PROXY: 'true' } });
    owner = await ownerWithPassword(t, 'Apps');
  });
  afterAll(() => t.close());

  describe('/me/apps', () => {
    it('creates an app with its secret shown once and stored hashed, and emits OAuthAppCreated', async () => {
      const res = await t.request('POST', '/me/apps', {
        token: owner.apiKey,
        body: {
          name: ' Claude connector ',
          redirectUris: ['https://claude.example.com/cb', 'http://127.0.0.1/cb', 'http://[::1]/cb'],
          scopes: ['data:read', 'task:write', 'calendars:read'],
          mcpServerUrl: 'https://mcp.example.com/mcp',
        },
      });
      expect(res.status).toBe(201);
      expect(res.headers.get('location')).toBe(`/api/v2/me/apps/${res.body.id}`);
      expect(res.body).toMatchObject({
        clientId: expect.stringMatching(/^app_[0-9a-f]{32}$/),
        clientSecret: expect.stringMatching(/^wss_/),
        name: 'Claude connector',
        clientType: 'confidential',
        mcpServerUrl: 'https://mcp.example.com/mcp',
        scopes: ['data:read', 'task:write', 'calendars:read'],
      });
      const [event] = await t.expectEvents(res, [
        {
          type: 'OAuthAppCreated',
          stream: `oauth-app-${res.body.id}`,
          data: { clientId: res.body.clientId },
        },
      ]);
      expect(JSON.stringify(event.data)).not.toContain(res.body.clientSecret);
      expect((event.data as { secretHash: string }).secretHash).toMatch(/^[0-9a-f]{64}$/);
      const got = await t.request('GET', `/me/apps/${res.body.id}`, { token: owner.apiKey });
      expect(got.status).toBe(200);
      expect(got.headers.get('etag')).toBe('"1"');
      expect(got.body.clientSecret).toBeUndefined();
      expect(JSON.stringify(got.body)).not.toContain(res.body.clientSecret);
      const list = await t.request('GET', '/me/apps?search=claude', { token: owner.apiKey });
      expect(list.body).toMatchObject({ total: 1, page: 1, pageSize: 50 });
      expect(list.body.items[0].id).toBe(res.body.id);
    });

    it('creates public clients without a secret', async () => {
      const res = await t.request('POST', '/me/apps', {
        token: owner.apiKey,
        body: {
          name: 'CLI',
          redirectUris: ['http://127.0.0.1/cb'],
          scopes: ['members:read'],
          clientType: 'public',
        },
      });
      expect(res.status).toBe(201);
      expect(res.body.clientSecret).toBeNull();
      const rotate = await t.request('POST', `/me/apps/${res.body.id}/rotate-secret`, {
        token: owner.apiKey,
      });
      expect(rotate.status).toBe(400);
    });

    it('refuses redirect URIs that are not https or loopback, and unknown scopes, naming the field', async () => {
      const bad: [Record<string, unknown>, RegExp][] = [
        [
          { redirectUris: ['http://client.example.com/cb'] },
          /^redirectUris\.0: http is allowed only for the loopback/,
        ],
        [
          { redirectUris: ['http://app.localhost:8080/cb'] },
          /^redirectUris\.0: http is allowed only for the loopback hosts 127\.0\.0\.1, \[::1\] and localhost/,
        ],
        [
          { redirectUris: ['http://localhost.example.com/cb'] },
          /^redirectUris\.0: http is allowed only for the loopback/,
        ],
        [
          { redirectUris: ['https://client.example.com/cb#frag'] },
          /^redirectUris\.0: must not contain a fragment/,
        ],
        [{ redirectUris: ['/relative'] }, /^redirectUris\.0: must be an absolute URL/],
        [
          { redirectUris: ['https://ok.example.com/cb', 'ftp://x.example.com/'] },
          /^redirectUris\.1: must use https/,
        ],
        [
          { redirectUris: ['https://user:pw@client.example.com/cb'] },
          /^redirectUris\.0: must not contain credentials/,
        ],
        [{ redirectUris: [] }, /^redirectUris: must list at least one URI/],
        [{ scopes: ['account:admin'] }, /^scopes\.0: unknown scope/],
        [{ scopes: ['data:delete'] }, /^scopes\.0: unknown scope/],
        [{ clientType: 'secret' }, /^clientType/],
        [{ name: '' }, /^name/],
      ];
      for (const [patch, detail] of bad) {
        const res = await t.request('POST', '/me/apps', {
          token: owner.apiKey,
          body: { name: 'X', redirectUris: [REDIRECT], scopes: ['data:read'], ...patch },
        });
        expect({ patch, status: res.status, detail: res.body.detail }).toEqual({
          patch,
          status: 400,
          detail: expect.stringMatching(detail),
        });
      }
    });

    it('updates with If-Match, rotates the secret, and needs account:admin', async () => {
      const app = await createApp(t, owner.apiKey);
      const stale = await t.request('PUT', `/me/apps/${app.id}`, {
        token: owner.apiKey,
        headers: { 'if-match': '"7"' },
        body: { name: 'Renamed' },
      });
      expect(stale.status).toBe(412);
      const put = await t.request('PUT', `/me/apps/${app.id}`, {
        token: owner.apiKey,
        headers: { 'if-match': '"1"' },
        body: { name: 'Renamed', scopes: ['workspace:read'] },
      });
      expect(put.status).toBe(200);
      expect(put.headers.get('etag')).toBe('"2"');
      expect(put.body).toMatchObject({ name: 'Renamed', scopes: ['workspace:read'] });
      await t.expectEvents(put, [
        { type: 'OAuthAppUpdated', data: { name: 'Renamed', scopes: ['workspace:read'] } },
      ]);

      const rotated = await t.request('POST', `/me/apps/${app.id}/rotate-secret`, { token: owner.apiKey });
      expect(rotated.status).toBe(200);
      expect(rotated.body).toEqual({ clientId: app.clientId, clientSecret: expect.stringMatching(/^wss_/) });
      await t.expectEvents(rotated, [{ type: 'OAuthAppSecretRotated' }]);
      const oldSecret = await postForm(
        t,
        '/oauth/introspect',
        { token: 'x' },
        { id: app.clientId, secret: app.clientSecret! },
      );
      expect(oldSecret.status).toBe(401);
      const newSecret = await postForm(
        t,
        '/oauth/introspect',
        { token: 'x' },
        {
          id: app.clientId,
          secret: rotated.body.clientSecret,
        },
      );
      expect(newSecret.status).toBe(200);

      const limited = await keyWithScopes(t, owner.apiKey, ['workspace:read']);
      for (const [method, path] of [
        ['GET', '/me/apps'],
        ['GET', `/me/apps/${app.id}`],
        ['POST', `/me/apps/${app.id}/rotate-secret`],
        ['DELETE', `/me/apps/${app.id}`],
      ] as const) {
        const res = await t.request(method, path, { token: limited });
        expect({ path, status: res.status, detail: res.body.detail }).toEqual({
          path,
          status: 403,
          detail: 'This credential lacks the scope account:admin',
        });
      }
      // Another account's app reads as absent.
      const stranger = await t.bootstrap('Other');
      expect((await t.request('GET', `/me/apps/${app.id}`, { token: stranger.apiKey })).status).toBe(404);
      expect((await t.request('DELETE', `/me/apps/${app.id}`, { token: stranger.apiKey })).status).toBe(404);
    });

    it('deletes an app and with it every grant and token', async () => {
      const app = await createApp(t, owner.apiKey);
      const tokens = await tokensFor(t, owner, app, 'workspace:read');
      expect((await t.request('GET', `/w/${owner.workspaceId}`, { token: tokens.access_token })).status).toBe(
        200,
      );
      const del = await t.request('DELETE', `/me/apps/${app.id}`, { token: owner.apiKey });
      expect(del.status).toBe(204);
      await t.expectEvents(del, [
        { type: 'OAuthAppDeleted', data: { appId: app.id, clientId: app.clientId } },
      ]);
      expect((await t.request('GET', `/w/${owner.workspaceId}`, { token: tokens.access_token })).status).toBe(
        401,
      );
      const refresh = await postForm(t, '/oauth/token', {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: app.clientId,
        client_secret: app.clientSecret!,
      });
      expect(refresh.status).toBe(401);
      expect(refresh.body.error).toBe('invalid_client');
      expect((await t.request('GET', `/me/apps/${app.id}`, { token: owner.apiKey })).status).toBe(404);
      const page = await new OAuthBrowser().get(
        authorizeUrl(t, { response_type: 'code', client_id: app.clientId, redirect_uri: REDIRECT }),
      );
      expect(page.status).toBe(400);
      expect(page.location).toBeNull();
    });

    it('accepts http://localhost redirect URIs (RFC 8252 §7.3), on create and on PUT, as MCP clients register them', async () => {
      const created = await t.request('POST', '/me/apps', {
        token: owner.apiKey,
        body: {
          name: 'Desktop client',
          redirectUris: ['http://localhost:6274/oauth/callback'],
          scopes: ['data:read'],
          clientType: 'public',
        },
      });
      expect(created.status).toBe(201);
      expect(created.body.redirectUris).toEqual(['http://localhost:6274/oauth/callback']);
      await t.expectEvents(created, [
        { type: 'OAuthAppCreated', data: { redirectUris: ['http://localhost:6274/oauth/callback'] } },
      ]);
      const put = await t.request('PUT', `/me/apps/${created.body.id}`, {
        token: owner.apiKey,
        body: { redirectUris: ['http://localhost/callback', 'http://127.0.0.1/callback'] },
      });
      expect(put.status).toBe(200);
      expect(put.body.redirectUris).toEqual(['http://localhost/callback', 'http://127.0.0.1/callback']);
      await t.expectEvents(put, [
        {
          type: 'OAuthAppUpdated',
          data: { redirectUris: ['http://localhost/callback', 'http://127.0.0.1/callback'] },
        },
      ]);
    });
  });

  describe('POST /oauth/register (RFC 7591)', () => {
    it('registers a public client that can then run the whole flow', async () => {
      const res = await t.request('POST', '/oauth/register', {
        body: {
          client_name: 'MCP Inspector',
          redirect_uris: ['http://127.0.0.1:6274/oauth/callback'],
          scope: 'data:read task:read',
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
        },
      });
      expect(res.status).toBe(201);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.body).toEqual({
        client_id: expect.stringMatching(/^app_/),
        client_id_issued_at: expect.any(Number),
        client_name: 'MCP Inspector',
        redirect_uris: ['http://127.0.0.1:6274/oauth/callback'],
        scope: 'data:read task:read',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      });
      await t.expectEvents(res, [
        {
          type: 'OAuthAppCreated',
          data: { accountUuid: null, registeredDynamically: true, clientType: 'public' },
        },
      ]);
      const { verifier, challenge } = pkcePair();
      const redirectUri = 'http://127.0.0.1:50000/oauth/callback';
      const back = await authorizeThroughPages(t, owner, {
        client_id: res.body.client_id,
        redirect_uri: redirectUri,
        scope: 'data:read',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      const tokens = await postForm(t, '/oauth/token', {
        grant_type: 'authorization_code',
        code: back.searchParams.get('code')!,
        redirect_uri: redirectUri,
        client_id: res.body.client_id,
        code_verifier: verifier,
      });
      expect(tokens.status).toBe(200);
      expect(tokens.body.scope).toBe('data:read');
    });

    it('registers an MCP client’s http://localhost callback, and authorizes it on another port (RFC 8252 §7.3)', async () => {
      const res = await t.request('POST', '/oauth/register', {
        body: {
          client_name: 'Claude Desktop',
          redirect_uris: ['http://localhost:6274/oauth/callback'],
          token_endpoint_auth_method: 'none',
        },
      });
      expect(res.status).toBe(201);
      expect(res.body.redirect_uris).toEqual(['http://localhost:6274/oauth/callback']);
      const { verifier, challenge } = pkcePair();
      // The client listens on another ephemeral port this time: the port may vary, nothing else.
      const redirectUri = 'http://localhost:53111/oauth/callback';
      const back = await authorizeThroughPages(t, owner, {
        client_id: res.body.client_id,
        redirect_uri: redirectUri,
        scope: 'data:read',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      expect(`${back.origin}${back.pathname}`).toBe(redirectUri);
      const code = back.searchParams.get('code')!;
      // The code is bound to the URI used, port included (RFC 6749 §4.1.3).
      const otherPort = await postForm(t, '/oauth/token', {
        grant_type: 'authorization_code',
        code,
        redirect_uri: 'http://localhost:6274/oauth/callback',
        client_id: res.body.client_id,
        code_verifier: verifier,
      });
      expect(otherPort.status).toBe(400);
      expect(otherPort.body.error).toBe('invalid_grant');
      const tokens = await postForm(t, '/oauth/token', {
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        client_id: res.body.client_id,
        code_verifier: verifier,
      });
      // A refused redirect_uri does not spend the code: the exact one still redeems it.
      expect(tokens.status).toBe(200);
      expect(tokens.body.access_token).toMatch(/^wso_/);
    });

    it('refuses confidential clients unless configured, and bad metadata with RFC 7591 errors', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [
          { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' },
          'invalid_client_metadata',
        ],
        [{ redirect_uris: ['http://client.example.com/cb'] }, 'invalid_redirect_uri'],
        [{ redirect_uris: [] }, 'invalid_redirect_uri'],
        [{}, 'invalid_redirect_uri'],
        [{ redirect_uris: [REDIRECT], grant_types: ['implicit'] }, 'invalid_client_metadata'],
        [{ redirect_uris: [REDIRECT], response_types: ['token'] }, 'invalid_client_metadata'],
        [{ redirect_uris: [REDIRECT], scope: 'account:admin' }, 'invalid_client_metadata'],
      ];
      for (const [body, error] of cases) {
        const res = await t.request('POST', '/oauth/register', { body });
        expect({ body, status: res.status, error: res.body.error }).toEqual({ body, status: 400, error });
        expect(typeof res.body.detail).toBe('string');
      }
      const configured = await startTestApp({ env: { OAUTH_REGISTRATION_CONFIDENTIAL: 'true' } });
      try {
        const res = await configured.request('POST', '/oauth/register', {
          body: { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' },
        });
        expect(res.status).toBe(201);
        expect(res.body).toMatchObject({
          client_secret: expect.stringMatching(/^wss_/),
          client_secret_expires_at: 0,
        });
      } finally {
        await configured.close();
      }
    });
  });

  describe('passwords', () => {
    it('sets a password with PUT /me/password (AccountPasswordSet, hash only), then needs the current one to change it', async () => {
      const b = await t.bootstrap('Pw', `pw-${process.pid}@example.com`);
      const short = await t.request('PUT', '/me/password', {
        token: b.apiKey,
        body: { newPassword: 'short' },
      });
      expect(short.status).toBe(400);
      expect(short.body.detail).toBe('newPassword: must be at least 12 characters');
      const set = await t.request('PUT', '/me/password', {
        token: b.apiKey,
        body: { newPassword: 'first password 1' },
      });
      expect(set.status).toBe(204);
      const [event] = await t.expectEvents(set, [
        { type: 'AccountPasswordSet', stream: `account-password-${b.accountUuid}` },
      ]);
      expect(JSON.stringify(event.data)).not.toContain('first password 1');
      expect((event.data as { passwordHash: string }).passwordHash).toMatch(/^scrypt\$32768\$8\$1\$/);

      const missing = await t.request('PUT', '/me/password', {
        token: b.apiKey,
        body: { newPassword: 'second password 2' },
      });
      expect(missing.status).toBe(400);
      expect(missing.body.detail).toMatch(/^currentPassword: required/);
      const wrong = await t.request('PUT', '/me/password', {
        token: b.apiKey,
        body: { currentPassword: 'not it at all', newPassword: 'second password 2' },
      });
      expect(wrong.status).toBe(403);
      expect(wrong.body.detail).toBe('currentPassword: does not match the current password');
      const ok = await t.request('PUT', '/me/password', {
        token: b.apiKey,
        body: { currentPassword: 'first password 1', newPassword: 'second password 2' },
      });
      expect(ok.status).toBe(204);
      const limited = await keyWithScopes(t, b.apiKey, ['workspace:read']);
      const denied = await t.request('PUT', '/me/password', {
        token: limited,
        body: { newPassword: 'third password 3' },
      });
      expect(denied.status).toBe(403);
    });

    it('limits sign-in attempts per account and per address, answering unknown emails the same', async () => {
      const app = await createApp(t, owner.apiKey);
      const victim = await ownerWithPassword(t, 'Victim');
      const { challenge } = pkcePair();
      const url = authorizeUrl(t, {
        response_type: 'code',
        client_id: app.clientId,
        redirect_uri: REDIRECT,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      const attempt = async (email: string, password: string, address: string): Promise<Page> => {
        const browser = new OAuthBrowser({ 'x-forwarded-for': address });
        const page = await browser.get(url);
        return browser.submit(page.form(), { email, password });
      };
      // Per account: three failures from three addresses, then the account is refused from any.
      const perAccount: number[] = [];
      for (let i = 1; i <= 4; i++)
        perAccount.push((await attempt(victim.email, 'wrong password!!', `10.0.1.${i}`)).status);
      expect(perAccount).toEqual([401, 401, 401, 429]);
      // Even the right password is refused for this account until the window frees.
      const right = await attempt(victim.email, PASSWORD, '10.0.1.9');
      expect(right.status).toBe(429);
      expect(right.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(right.text).toContain('Too many sign-in attempts');
      // An unknown email is limited the same way, so the limit reveals no accounts.
      const unknown: number[] = [];
      for (let i = 1; i <= 4; i++)
        unknown.push(
          (await attempt(`ghost-${process.pid}@example.com`, 'whatever pass', `10.0.2.${i}`)).status,
        );
      expect(unknown).toEqual([401, 401, 401, 429]);
      // Per address: three failures on different emails, then that address is refused for any.
      const perAddress: number[] = [];
      for (let i = 1; i <= 4; i++)
        perAddress.push(
          (await attempt(`spray${i}-${process.pid}@example.com`, 'guess guess', '10.0.3.1')).status,
        );
      expect(perAddress).toEqual([401, 401, 401, 429]);
      expect((await attempt(owner.email, PASSWORD, '10.0.3.1')).status).toBe(429);
      // Elsewhere the owner signs in as usual, and a success does not count.
      expect((await attempt(owner.email, PASSWORD, '10.0.4.1')).status).toBe(303);
    });

    it('bootstrap --password-stdin sets the password the sign-in page accepts', async () => {
      const email = `cli-${process.pid}@example.com`;
      const out = await new Promise<string>((resolve, reject) => {
        const child = spawn(
          process.execPath,
          [
            '-r',
            '@swc-node/register',
            join(__dirname, '../../src/cli.ts'),
            'bootstrap',
            '--workspace',
            'CLI',
            '--email',
            email,
            '--password-stdin',
            '--json',
          ],
          {
            env: {
              ...process.env,
              DATABASE_URL: t.database.url,
              REDIS_URL: TEST_REDIS_URL,
              REDIS_PREFIX: t.config.redisPrefix,
              LOG_LEVEL: 'silent',
              DATABASE_POOL_SIZE: '2',
            },
            stdio: ['pipe', 'pipe', 'pipe'],
          },
        );
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
        child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
        child.on('exit', (code) =>
          code === 0 ? resolve(stdout) : reject(new Error(`cli ${code}: ${stderr}`)),
        );
        child.stdin.end('piped password 42\n');
      });
      const created = JSON.parse(out.trim().split('\n').pop()!) as {
        workspaceId: string;
        accountUuid: string;
        apiKey: string;
      };
      const cliOwner: Owner = { ...created, memberId: 0, email };
      const app = await createApp(t, created.apiKey);
      const browser = new OAuthBrowser({ 'x-forwarded-for': '10.0.5.1' });
      let page = await browser.get(
        authorizeUrl(t, {
          response_type: 'code',
          client_id: app.clientId,
          redirect_uri: REDIRECT,
          scope: 'workspace:read',
        }),
      );
      page = await browser.submit(page.form(), { email, password: 'piped password 42' });
      expect(page.status).toBe(303);
      page = await browser.get(page.location!);
      expect(Object.keys(page.form().options)).toEqual([cliOwner.workspaceId]);
    });
  });
});
