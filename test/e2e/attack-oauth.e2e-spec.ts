import { startTestApp, TestApp } from '../support/app';
import { createDataType, recordsPath } from '../support/records-fixtures';
import {
  App,
  authorizeThroughPages,
  authorizeUrl,
  createApp,
  OAuthBrowser,
  Owner,
  ownerWithPassword,
  pkcePair,
  postForm,
  REDIRECT,
  tokensFor,
} from '../support/oauth-browser';

/**
 * A hostile OAuth client: redirect_uri look-alikes, another client's refresh token, an
 * access token reaching account-level routes, scope widening at authorization.
 */
describe('attack: OAuth (e2e)', () => {
  let t: TestApp;
  let owner: Owner;
  let app: App;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await ownerWithPassword(t, 'Attacked');
    app = await createApp(t, owner.apiKey, {
      redirectUris: [REDIRECT, 'http://127.0.0.1/native'],
    });
  });
  afterAll(() => t.close());

  it.each([
    'https://client.example.com/callback/',
    'https://CLIENT.example.com/callback',
    'https://client.example.com/callback/../evil',
    'https://client.example.com/Callback',
    'https://client.example.com:443/callback',
    'https://client.example.com/callback#frag',
    'https://client.example.com.evil.com/callback',
    'https://evil.com@client.example.com/callback',
    'https://client.example.com%2F@evil.com/callback',
    'http://client.example.com/callback',
    'http://127.0.0.1@evil.com/native',
    'http://evil@127.0.0.1:4000/native',
    'http://localhost/native',
    'http://127.0.0.1/native/../other',
  ])('never redirects to the look-alike redirect_uri %s', async (redirectUri) => {
    const page = await new OAuthBrowser().get(
      authorizeUrl(t, { response_type: 'code', client_id: app.clientId, redirect_uri: redirectUri }),
    );
    expect({ redirectUri, status: page.status, location: page.location }).toEqual({
      redirectUri,
      status: 400,
      location: null,
    });
  });

  it('does not let an app ask for more than it registered, or for account:admin', async () => {
    for (const scope of ['records:admin', 'data:admin', 'account:admin', 'workspace:read account:admin']) {
      const page = await new OAuthBrowser().get(
        authorizeUrl(t, { response_type: 'code', client_id: app.clientId, redirect_uri: REDIRECT, scope }),
      );
      expect([302, 303]).toContain(page.status);
      const back = new URL(page.location!);
      expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
      expect({ scope, error: back.searchParams.get('error'), code: back.searchParams.get('code') }).toEqual({
        scope,
        error: 'invalid_scope',
        code: null,
      });
    }
  });

  it("refuses client B the refresh token of client A, and leaves A's token working", async () => {
    const other = await createApp(t, owner.apiKey, { name: 'Other client' });
    const tokens = await tokensFor(t, owner, app);
    const stolen = await postForm(t, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token as string,
      client_id: other.clientId,
      client_secret: other.clientSecret!,
    });
    expect(stolen.status).toBe(400);
    expect(stolen.body.error).toBe('invalid_grant');
    expect(stolen.body.access_token).toBeUndefined();
    const own = await postForm(t, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token as string,
      client_id: app.clientId,
      client_secret: app.clientSecret!,
    });
    expect(own.status).toBe(200);
    // And B cannot revoke A's token nor see it through introspection.
    const introspected = await postForm(
      t,
      '/oauth/introspect',
      { token: own.body.access_token as string },
      { id: other.clientId, secret: other.clientSecret! },
    );
    expect(introspected.body).toEqual({ active: false });
  });

  it('keeps an access token away from the account: its apps, keys, password and profile', async () => {
    const { access_token: token } = await tokensFor(t, owner, app, 'workspace:read members:read data:write');
    for (const [method, path, body] of [
      ['GET', '/me/apps', undefined],
      ['POST', '/me/apps', { name: 'x', redirectUris: [REDIRECT], scopes: ['workspace:read'] }],
      ['GET', `/me/apps/${app.id}`, undefined],
      ['POST', `/me/apps/${app.id}/rotate-secret`, undefined],
      ['DELETE', `/me/apps/${app.id}`, undefined],
      ['PUT', '/me/password', { newPassword: 'taken over by an app 123' }],
      ['GET', '/me/api-keys', undefined],
      ['POST', '/me/api-keys', { name: 'backdoor', scopes: ['records:admin'] }],
      ['PUT', '/me', { email: 'attacker@example.com' }],
      ['GET', '/me/invitations', undefined],
    ] as const) {
      const res = await t.request(method, path, { token: token as string, body });
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 403 });
      expect(await t.eventsOf(res)).toEqual([]);
    }
  });

  it("does not let a token without a records scope reach the person's own records through the self rule", async () => {
    const type = await createDataType(t, owner.workspaceId, owner.apiKey, {
      slug: 'health',
      isCollection: true,
      fields: [{ slug: 'note', fieldType: 'text' }],
    });
    const base = recordsPath(owner.workspaceId, type.id);
    const own = await t.request('POST', base, {
      token: owner.apiKey,
      body: { memberId: owner.memberId, fieldValues: { note: 'private health note' } },
    });
    expect(own.status).toBe(201);
    const { access_token: narrow } = await tokensFor(t, owner, app, 'workspace:read');
    for (const [method, path, body] of [
      ['GET', `${base}/${own.body.id}`, undefined],
      ['PUT', `${base}/${own.body.id}`, { fieldValues: { note: 'changed by an app' } }],
      ['POST', base, { memberId: owner.memberId, fieldValues: { note: 'planted' } }],
      [
        'POST',
        `/w/${owner.workspaceId}/data-types/${type.id}/upsert/x1`,
        { memberId: owner.memberId, fieldValues: { note: 'x' } },
      ],
      [
        'POST',
        `/w/${owner.workspaceId}/record-grants`,
        { granteeMemberId: owner.memberId, ownerMemberId: owner.memberId, access: 'read' },
      ],
    ] as const) {
      const res = await t.request(method, path, { token: narrow as string, body });
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 403 });
      expect(JSON.stringify(res.body)).not.toContain('private health note');
      expect(await t.eventsOf(res)).toEqual([]);
    }
    const list = await t.request('GET', base, { token: narrow as string });
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(0);
    // With data:write consented (data:X covers records:X) the same person's records are reachable.
    const { access_token: wide } = await tokensFor(t, owner, app, 'data:write');
    const got = await t.request('GET', `${base}/${own.body.id}`, { token: wide as string });
    expect(got.status).toBe(200);
    expect(got.body.fieldValues).toEqual({ note: 'private health note' });
  });

  it("does not let a token without a chats scope read the person's own chats through the self rule", async () => {
    const chat = await t.request('POST', `/w/${owner.workspaceId}/chats`, {
      token: owner.apiKey,
      body: { channel: 'web-chat', memberId: owner.memberId, title: 'about my diagnosis' },
    });
    expect(chat.status).toBe(201);
    const both = await createApp(t, owner.apiKey, { scopes: ['workspace:read', 'chats:read'] });
    const { access_token: narrow } = await tokensFor(t, owner, both, 'workspace:read');
    const list = await t.request('GET', `/w/${owner.workspaceId}/chats`, { token: narrow as string });
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(0);
    for (const path of [
      `/w/${owner.workspaceId}/chats/${chat.body.id}`,
      `/w/${owner.workspaceId}/chats/${chat.body.id}/messages`,
    ]) {
      const res = await t.request('GET', path, { token: narrow as string });
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
    }
    const created = await t.request('POST', `/w/${owner.workspaceId}/chats`, {
      token: narrow as string,
      body: { channel: 'web-chat', memberId: owner.memberId },
    });
    expect(created.status).toBe(403);
    expect(await t.eventsOf(created)).toEqual([]);
    const { access_token: chats } = await tokensFor(t, owner, both, 'chats:read');
    const seen = await t.request('GET', `/w/${owner.workspaceId}/chats/${chat.body.id}`, {
      token: chats as string,
    });
    expect(seen.status).toBe(200);
  });

  it('narrows the tokens an app already issued when its scopes are narrowed, and their refresh and introspection', async () => {
    const narrowed = await createApp(t, owner.apiKey, { name: 'To be narrowed' });
    const wid = owner.workspaceId;
    const tokens = await tokensFor(t, owner, narrowed, 'workspace:read members:read data:write');
    // A code approved before the narrowing, exchanged after it.
    const { verifier, challenge } = pkcePair();
    const pending = await authorizeThroughPages(t, owner, {
      client_id: narrowed.clientId,
      redirect_uri: REDIRECT,
      scope: 'members:read data:write',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const access = tokens.access_token as string;
    expect((await t.request('GET', `/w/${wid}/members`, { token: access })).status).toBe(200);

    const put = await t.request('PUT', `/me/apps/${narrowed.id}`, {
      token: owner.apiKey,
      body: { scopes: ['workspace:read', 'records:read'] },
    });
    expect(put.status).toBe(200);
    await t.expectEvents(put, [
      { type: 'OAuthAppUpdated', data: { scopes: ['workspace:read', 'records:read'] } },
    ]);

    // The access token issued before keeps only what the app allows now, at once.
    for (const [method, path, body, status] of [
      ['GET', `/w/${wid}`, undefined, 200],
      ['GET', `/w/${wid}/members`, undefined, 403],
      ['POST', `/w/${wid}/data-types`, { name: 'Planted', slug: 'planted', fields: [] }, 403],
    ] as const) {
      const res = await t.request(method, path, { token: access, body });
      expect({ method, path, status: res.status }).toEqual({ method, path, status });
      expect(await t.eventsOf(res)).toEqual([]);
    }
    const client = { id: narrowed.clientId, secret: narrowed.clientSecret! };
    const seen = await postForm(t, '/oauth/introspect', { token: access }, client);
    expect(seen.body).toMatchObject({ active: true, scope: 'workspace:read records:read' });

    // Refreshing cannot win the removed scopes back, asked for or not.
    const wider = await postForm(t, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token as string,
      client_id: narrowed.clientId,
      client_secret: narrowed.clientSecret!,
      scope: 'data:write',
    });
    expect(wider.status).toBe(400);
    expect(wider.body.error).toBe('invalid_scope');
    const refreshed = await postForm(t, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token as string,
      client_id: narrowed.clientId,
      client_secret: narrowed.clientSecret!,
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.scope).toBe('workspace:read records:read');
    const fresh = refreshed.body.access_token as string;
    expect((await t.request('GET', `/w/${wid}/members`, { token: fresh })).status).toBe(403);
    expect((await t.request('GET', `/w/${wid}`, { token: fresh })).status).toBe(200);

    // The pending code yields only the allowed part of what was approved.
    const exchanged = await postForm(t, '/oauth/token', {
      grant_type: 'authorization_code',
      code: pending.searchParams.get('code') ?? undefined,
      redirect_uri: REDIRECT,
      client_id: narrowed.clientId,
      client_secret: narrowed.clientSecret!,
      code_verifier: verifier,
    });
    expect(exchanged.status).toBe(200);
    expect(exchanged.body.scope).toBe('records:read');
    expect(
      (await t.request('GET', `/w/${wid}/members`, { token: exchanged.body.access_token as string })).status,
    ).toBe(403);

    // Narrowed to nothing the grant held: refresh is refused, the access token reaches nothing.
    const none = await t.request('PUT', `/me/apps/${narrowed.id}`, {
      token: owner.apiKey,
      body: { scopes: ['chats:read'] },
    });
    expect(none.status).toBe(200);
    expect((await t.request('GET', `/w/${wid}`, { token: fresh })).status).toBe(403);
    const empty = await postForm(t, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: refreshed.body.refresh_token as string,
      client_id: narrowed.clientId,
      client_secret: narrowed.clientSecret!,
    });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toBe('invalid_grant');
    expect((await postForm(t, '/oauth/introspect', { token: fresh }, client)).body).toEqual({
      active: false,
    });
  });

  it("answers another account's app as absent", async () => {
    const stranger = await ownerWithPassword(t, 'Stranger');
    for (const [method, path, body] of [
      ['GET', `/me/apps/${app.id}`, undefined],
      ['PUT', `/me/apps/${app.id}`, { name: 'mine now' }],
      ['POST', `/me/apps/${app.id}/rotate-secret`, undefined],
      ['DELETE', `/me/apps/${app.id}`, undefined],
    ] as const) {
      const res = await t.request(method, path, { token: stranger.apiKey, body });
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 });
    }
    const listed = await t.request('GET', '/me/apps', { token: stranger.apiKey });
    expect((listed.body.items as { id: string }[]).map((a) => a.id)).not.toContain(app.id);
    // The owner's app still works: the flow runs end to end.
    const back = await authorizeThroughPages(t, owner, {
      client_id: app.clientId,
      redirect_uri: REDIRECT,
      scope: 'workspace:read',
    });
    expect(back.searchParams.get('code')).toBeTruthy();
  });
});
