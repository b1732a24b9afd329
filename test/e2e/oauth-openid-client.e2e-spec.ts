import { createServer, Server, connect } from 'node:net';
import { generators, Issuer } from 'openid-client';
import { startTestApp, TestApp } from '../support/app';
import { freePort } from '../support/processes';
import { createApp, OAuthBrowser, Owner, ownerWithPassword, PASSWORD } from '../support/oauth-browser';

/**
 * The code flow with openid-client (a certified relying party) as the client: discovery
 * from the RFC 8414 metadata, PKCE, the callback with iss, refresh, revocation and
 * introspection. PUBLIC_BASE_URL must be the address the client reaches, so the app is
 * fronted by a TCP relay on a port known before it starts.
 */
describe('OAuth with openid-client', () => {
  let t: TestApp;
  let owner: Owner;
  let relay: Server;
  let base: string;
  const sockets = new Set<import('node:net').Socket>();

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}/api/v2`;
    t = await startTestApp({ env: { PUBLIC_BASE_URL: base } });
    const target = Number(new URL(t.baseUrl).port);
    relay = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      const upstream = connect(target, '127.0.0.1');
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(port, '127.0.0.1', resolve));
    owner = await ownerWithPassword(t, 'Interop');
  });
  afterAll(async () => {
    sockets.forEach((s) => s.destroy());
    await new Promise((resolve) => relay.close(resolve));
    await t.close();
  });

  it('discovers, authorizes with PKCE, exchanges, refreshes, introspects and revokes', async () => {
    const origin = new URL(base).origin;
    const issuer = await Issuer.discover(`${origin}/.well-known/oauth-authorization-server/api/v2`);
    expect(issuer.metadata.issuer).toBe(base);
    const app = await createApp(t, owner.apiKey, { redirectUris: ['http://127.0.0.1/callback'] });
    const client = new issuer.Client({
      client_id: app.clientId,
      client_secret: app.clientSecret!,
      redirect_uris: ['http://127.0.0.1:43210/callback'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    });
    const verifier = generators.codeVerifier();
    const state = generators.state();
    const url = client.authorizationUrl({
      scope: 'workspace:read members:read',
      state,
      code_challenge: generators.codeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const browser = new OAuthBrowser();
    let page = await browser.get(url);
    page = await browser.submit(page.form(), { email: owner.email, password: PASSWORD });
    page = await browser.get(page.location!);
    page = await browser.submit(page.form(), { decision: 'approve', workspace_id: owner.workspaceId });
    expect(page.status).toBe(303);
    const params = client.callbackParams(page.location!);
    const tokens = await client.oauthCallback('http://127.0.0.1:43210/callback', params, {
      state,
      code_verifier: verifier,
    });
    expect(tokens.access_token).toMatch(/^wso_/);
    expect(tokens.token_type).toBe('Bearer');
    expect(tokens.scope).toBe('workspace:read members:read');
    expect((await t.request('GET', `/w/${owner.workspaceId}`, { token: tokens.access_token })).status).toBe(
      200,
    );

    const refreshed = await client.refresh(tokens.refresh_token!);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    const info = await client.introspect(refreshed.access_token!);
    expect(info).toMatchObject({
      active: true,
      client_id: app.clientId,
      scope: 'workspace:read members:read',
    });
    await client.revoke(refreshed.refresh_token!, 'refresh_token');
    expect((await client.introspect(refreshed.access_token!)).active).toBe(false);
    await expect(client.refresh(refreshed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });
});
