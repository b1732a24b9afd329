import { startTestApp, TestApp } from '../support/app';
import {
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

/**
 * The authorization-code flow of issue 13 driven over HTTP through the server-rendered
 * pages (RFC 6749 §4.1, RFC 7636, RFC 9207), then the access token used on the API.
 */
describe('OAuth authorization code flow', () => {
  let t: TestApp;
  let owner: Owner;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await ownerWithPassword(t, 'Acme');
  });
  afterAll(() => t.close());

  it('signs in, asks consent with the scopes in words and a workspace choice, and issues tokens that act in that workspace', async () => {
    const app = await createApp(t, owner.apiKey);
    const browser = new OAuthBrowser();
    const { verifier, challenge } = pkcePair();
    const params = {
      response_type: 'code',
      client_id: app.clientId,
      redirect_uri: REDIRECT,
      scope: 'workspace:read data:write',
      state: 'xyz-123',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    };
    let page = await browser.get(authorizeUrl(t, params));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.text).toContain('Sign in');
    expect(page.text).toContain('CRM assistant');
    const signIn = page.form();
    expect(signIn.hidden).toMatchObject({
      client_id: app.clientId,
      state: 'xyz-123',
      code_challenge: challenge,
    });

    // A form without the CSRF field (another site posting it) is refused.
    const forged = await browser.submit(
      { ...signIn, hidden: { ...signIn.hidden, csrf_token: 'forged' } },
      {
        email: owner.email,
        password: PASSWORD,
      },
    );
    expect(forged.status).toBe(403);

    // A wrong password and an unknown email read the same.
    const wrong = await browser.submit(signIn, { email: owner.email, password: 'not the password at all' });
    const unknown = await browser.submit(signIn, { email: 'nobody-here@example.com', password: PASSWORD });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.text.match(/The email or password is not correct/)).toBeTruthy();
    expect(unknown.text.match(/The email or password is not correct/)).toBeTruthy();

    page = await browser.submit(signIn, { email: owner.email, password: PASSWORD });
    expect(page.status).toBe(303);
    expect(page.headers.getSetCookie().join(';')).toMatch(/ws_oauth_session=[^;]+;.*HttpOnly; SameSite=Lax/);
    page = await browser.get(page.location!);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Authorize CRM assistant');
    expect(page.text).toContain('See the workspace and its settings');
    expect(page.text).toContain('See and change data types and records');
    const consent = page.form();
    expect(consent.options).toEqual({ [owner.workspaceId]: 'Acme' });

    page = await browser.submit(consent, { decision: 'approve', workspace_id: owner.workspaceId });
    expect(page.status).toBe(303);
    const back = new URL(page.location!);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('state')).toBe('xyz-123');
    expect(back.searchParams.get('iss')).toBe(t.config.publicBaseUrl);
    const code = back.searchParams.get('code')!;
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const res = await postForm(t, '/oauth/token', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      client_id: app.clientId,
      client_secret: app.clientSecret!,
      code_verifier: verifier,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({
      access_token: expect.stringMatching(/^wso_/),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^wsr_/),
      scope: 'workspace:read data:write',
    });

    // The token acts in the workspace chosen at consent, with what was granted.
    const ws = await t.request('GET', `/w/${owner.workspaceId}`, { token: res.body.access_token });
    expect(ws.status).toBe(200);
    const members = await t.request('GET', `/w/${owner.workspaceId}/members`, {
      token: res.body.access_token,
    });
    expect(members.status).toBe(403);
    expect(members.body.detail).toBe('This credential lacks the scope members:read');
    // Not an account credential: the account's own routes are closed to it.
    const apps = await t.request('GET', '/me/apps', { token: res.body.access_token });
    expect(apps.status).toBe(403);
  });

  it('signs in as the account registered with the email that has the password; an address set later with PUT /me does not sign in', async () => {
    const email = `shared-${process.pid}@example.com`;
    const first = await ownerWithPassword(t, 'First Co', 'first co password 1234');
    // A signup in First Co registers another account with the address, without a password.
    const signup = await t.request('POST', `/w/${first.workspaceId}/create-signup`, {
      token: first.apiKey,
      body: { member: { email } },
    });
    expect(signup.status).toBe(201);
    // Bootstrap finds the account registered with the address and gives it a workspace.
    const alpha = await t.bootstrap('Alpha Co', email);
    const set = await t.request('PUT', '/me/password', {
      token: alpha.apiKey,
      body: { newPassword: 'alpha co password 1234' },
    });
    expect(set.status).toBe(204);
    // The first owner moves its own address to the shared one: unproven, it signs nobody in.
    const moved = await t.request('PUT', '/me', { token: first.apiKey, body: { email } });
    expect(moved.status).toBe(200);
    const app = await createApp(t, owner.apiKey);
    const signedInAs = async (password: string) => {
      const browser = new OAuthBrowser();
      const { challenge } = pkcePair();
      const page = await browser.get(
        authorizeUrl(t, {
          response_type: 'code',
          client_id: app.clientId,
          redirect_uri: REDIRECT,
          scope: 'workspace:read',
          state: 's',
          code_challenge: challenge,
          code_challenge_method: 'S256',
        }),
      );
      const after = await browser.submit(page.form(), { email: email.toUpperCase(), password });
      if (after.status !== 303) return after.status;
      return (await browser.get(after.location!)).text;
    };
    const signedIn = await signedInAs('alpha co password 1234');
    expect(signedIn).toEqual(expect.stringContaining('Alpha Co'));
    expect(await signedInAs('first co password 1234')).toBe(401);
  });

  it("acts as the person through the app: the events it appends name the OAuth app as the actor's client", async () => {
    const app = await createApp(t, owner.apiKey, { scopes: ['members:write'] });
    const tokens = await tokensFor(t, owner, app, 'members:write');
    const res = await t.request('PUT', `/w/${owner.workspaceId}/members/${owner.memberId}`, {
      token: tokens.access_token,
      body: { name: 'Renamed by the app' },
    });
    expect(res.status).toBe(200);
    const [event] = await t.expectEvents(res, [
      { type: 'MemberUpdated', data: { changes: { name: 'Renamed by the app' } } },
    ]);
    expect(event.metadata.actor).toMatchObject({
      kind: 'oauth',
      accountUuid: owner.accountUuid,
      memberId: owner.memberId,
      clientId: app.clientId,
      tokenId: expect.any(String),
    });
  });

  it('records the consent as OAuthGrantApproved in the chosen workspace', async () => {
    const app = await createApp(t, owner.apiKey);
    const browser = new OAuthBrowser();
    const { challenge } = pkcePair();
    let page = await browser.get(
      authorizeUrl(t, {
        response_type: 'code',
        client_id: app.clientId,
        redirect_uri: REDIRECT,
        scope: 'members:read',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }),
    );
    page = await browser.submit(page.form(), { email: owner.email, password: PASSWORD });
    page = await browser.get(page.location!);
    // The same form from a browser without the session (another site posting it) grants
    // nothing: it is asked to sign in again.
    const elsewhere = await new OAuthBrowser().submit(page.form(), {
      decision: 'approve',
      workspace_id: owner.workspaceId,
    });
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.location).toBeNull();
    expect(elsewhere.text).toContain('Please sign in again');
    expect(
      await t.eventsOf({ ...elsewhere, body: {}, requestId: elsewhere.headers.get('x-request-id')! }),
    ).toEqual([]);

    const approved = await browser.submit(page.form(), {
      decision: 'approve',
      workspace_id: owner.workspaceId,
    });
    const res = {
      status: approved.status,
      headers: approved.headers,
      body: {},
      requestId: approved.headers.get('x-request-id')!,
    };
    await t.expectEvents(res, [
      {
        type: 'OAuthGrantApproved',
        stream: /^oauth-grant-/,
        data: {
          appId: app.id,
          clientId: app.clientId,
          accountUuid: owner.accountUuid,
          workspaceId: owner.workspaceId,
          scopes: ['members:read'],
        },
      },
    ]);
    const [event] = await t.eventsOf(res);
    expect(event.metadata.workspaceId).toBe(owner.workspaceId);
  });

  it('redirects a denial as access_denied with state and iss', async () => {
    const app = await createApp(t, owner.apiKey);
    const back = await authorizeThroughPages(
      t,
      owner,
      { client_id: app.clientId, redirect_uri: REDIRECT, scope: 'workspace:read', state: 'st' },
      { decision: 'deny' },
    );
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('st');
    expect(back.searchParams.get('iss')).toBe(t.config.publicBaseUrl);
    expect(back.searchParams.get('code')).toBeNull();
  });

  it('never redirects for an unknown client or a redirect URI that is not registered', async () => {
    const app = await createApp(t, owner.apiKey);
    const browser = new OAuthBrowser();
    for (const params of [
      { client_id: 'app_unknown', redirect_uri: REDIRECT },
      { client_id: app.clientId, redirect_uri: 'https://evil.example.com/callback' },
      { client_id: app.clientId, redirect_uri: `${REDIRECT}/more` },
      { client_id: app.clientId, redirect_uri: `${REDIRECT}?x=1` },
      { client_id: app.clientId },
    ]) {
      const html = await browser.get(authorizeUrl(t, { response_type: 'code', ...params }));
      expect({ params, status: html.status, location: html.location }).toEqual({
        params,
        status: 400,
        location: null,
      });
      expect(html.text).toContain('This request cannot be completed');
      // An API client (no text/html) gets the same refusal as JSON {detail}.
      const json = await t.request(
        'GET',
        `/oauth/authorize?${new URL(authorizeUrl(t, params)).searchParams}`,
      );
      expect(json.status).toBe(400);
      expect(json.headers.get('location')).toBeNull();
      expect(typeof json.body.detail).toBe('string');
    }
  });

  it('sends other problems back to the registered redirect URI with state and iss', async () => {
    const app = await createApp(t, owner.apiKey);
    const browser = new OAuthBrowser();
    const cases: [Record<string, string>, string][] = [
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ scope: 'chats:write' }, 'invalid_scope'],
      [{ scope: 'nonsense:read' }, 'invalid_scope'],
    ];
    for (const [params, error] of cases) {
      const page = await browser.get(
        authorizeUrl(t, {
          response_type: 'code',
          client_id: app.clientId,
          redirect_uri: REDIRECT,
          state: 'q',
          ...params,
        }),
      );
      expect(page.status).toBe(302);
      const back = new URL(page.location!);
      expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
      expect(back.searchParams.get('error')).toBe(error);
      expect(back.searchParams.get('state')).toBe('q');
      expect(back.searchParams.get('iss')).toBe(t.config.publicBaseUrl);
    }
  });

  it('matches loopback redirect URIs on any port (RFC 8252) and everything else exactly', async () => {
    const app = await createApp(t, owner.apiKey, {
      clientType: 'public',
      redirectUris: ['http://127.0.0.1/callback', 'http://[::1]:8080/cb'],
    });
    const { challenge } = pkcePair();
    const base = {
      response_type: 'code',
      client_id: app.clientId,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    };
    const browser = new OAuthBrowser();
    for (const uri of [
      'http://127.0.0.1:51234/callback',
      'http://127.0.0.1/callback',
      'http://[::1]:9999/cb',
    ])
      expect((await browser.get(authorizeUrl(t, { ...base, redirect_uri: uri }))).status).toBe(200);
    for (const uri of [
      'http://127.0.0.1:51234/other',
      'http://localhost:51234/callback',
      'https://127.0.0.1/callback',
    ])
      expect((await browser.get(authorizeUrl(t, { ...base, redirect_uri: uri }))).status).toBe(400);
    // localhost is a loopback host of its own: any port for a registered localhost URI, and
    // it never stands in for 127.0.0.1 (above) nor the reverse.
    const local = await createApp(t, owner.apiKey, {
      clientType: 'public',
      redirectUris: ['http://localhost/callback'],
    });
    const localBase = { ...base, client_id: local.clientId };
    for (const uri of ['http://localhost:51234/callback', 'http://localhost/callback'])
      expect((await browser.get(authorizeUrl(t, { ...localBase, redirect_uri: uri }))).status).toBe(200);
    for (const uri of [
      'http://127.0.0.1:51234/callback',
      'http://localhost:51234/callback/',
      'http://app.localhost:51234/callback',
      'https://localhost:51234/callback',
    ])
      expect((await browser.get(authorizeUrl(t, { ...localBase, redirect_uri: uri }))).status).toBe(400);
    // The code is bound to the exact URI used, port included.
    const { verifier, challenge: c2 } = pkcePair();
    const back = await authorizeThroughPages(t, owner, {
      client_id: app.clientId,
      redirect_uri: 'http://127.0.0.1:40000/callback',
      scope: 'workspace:read',
      code_challenge: c2,
      code_challenge_method: 'S256',
    });
    expect(back.origin).toBe('http://127.0.0.1:40000');
    const code = back.searchParams.get('code')!;
    const other = await postForm(t, '/oauth/token', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'http://127.0.0.1:40001/callback',
      client_id: app.clientId,
      code_verifier: verifier,
    });
    expect(other.status).toBe(400);
    expect(other.body.error).toBe('invalid_grant');
    const ok = await postForm(t, '/oauth/token', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'http://127.0.0.1:40000/callback',
      client_id: app.clientId,
      code_verifier: verifier,
    });
    expect(ok.status).toBe(200);
  });

  it('serves the RFC 8414 metadata at the issuer location and under the API prefix', async () => {
    const issuer = t.config.publicBaseUrl;
    const origin = new URL(t.baseUrl).origin;
    const atRoot = await fetch(`${origin}/.well-known/oauth-authorization-server/api/v2`);
    expect(atRoot.status).toBe(200);
    const doc = (await atRoot.json()) as Record<string, unknown>;
    expect(doc).toMatchObject({
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      revocation_endpoint: `${issuer}/oauth/revoke`,
      introspection_endpoint: `${issuer}/oauth/introspect`,
      registration_endpoint: `${issuer}/oauth/register`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
    });
    expect(doc.scopes_supported).toEqual(
      expect.arrayContaining(['data:read', 'task:write', 'records:admin']),
    );
    expect(doc.scopes_supported).not.toContain('account:admin');
    const prefixed = await t.request('GET', '/.well-known/oauth-authorization-server');
    expect(prefixed.status).toBe(200);
    expect(prefixed.body).toEqual(doc);
  });

  it('reads form bodies only on the OAuth routes; the rest of the API stays JSON-only', async () => {
    const res = await fetch(`${t.baseUrl}/me/apps`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${owner.apiKey}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'name=x',
    });
    expect(res.status).toBe(415);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/application\/json/);
  });
});
