import { CREDENTIAL_RESOLVER, CredentialResolver } from '../../src/core/auth/principal';
import { DataSource } from 'typeorm';
import { TokenService } from '../../src/modules/oauth/server/token.service';
import { startTestApp, TestApp } from '../support/app';
import { builtInRoles, customRole } from '../support/identity-fixtures';
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

/** The token endpoint's rules one by one (RFC 6749 §4.1.3, §5.2, §6, §10.4; RFC 7636; RFC 9700 §4.14). */
describe('OAuth tokens', () => {
  let t: TestApp;
  let owner: Owner;
  let app: App;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await ownerWithPassword(t, 'Tokens');
    app = await createApp(t, owner.apiKey);
  });
  afterAll(() => t.close());

  /** A code for `client`, with the challenge given (or none). */
  async function codeFor(client: App, extra: Record<string, string | undefined> = {}): Promise<string> {
    const back = await authorizeThroughPages(t, owner, {
      client_id: client.clientId,
      redirect_uri: REDIRECT,
      scope: 'workspace:read',
      ...extra,
    });
    return back.searchParams.get('code')!;
  }

  const exchange = (client: App, code: string, extra: Record<string, string | undefined> = {}) =>
    postForm(t, '/oauth/token', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      client_id: client.clientId,
      client_secret: client.clientSecret ?? undefined,
      ...extra,
    });

  describe('PKCE (RFC 7636)', () => {
    it('refuses a public client without a code_challenge, and the plain method for anyone', async () => {
      const pub = await createApp(t, owner.apiKey, { clientType: 'public' });
      expect(pub.clientSecret).toBeNull();
      const browser = new OAuthBrowser();
      const { challenge } = pkcePair();
      const base = { response_type: 'code', redirect_uri: REDIRECT, state: 'p' };
      for (const [client, params, description] of [
        [pub, {}, /code_challenge: required for public clients/],
        [pub, { code_challenge: challenge, code_challenge_method: 'plain' }, /plain is refused/],
        [app, { code_challenge: challenge, code_challenge_method: 'plain' }, /plain is refused/],
        [app, { code_challenge: challenge }, /only S256/],
        [app, { code_challenge: 'short', code_challenge_method: 'S256' }, /code_challenge: malformed/],
      ] as const) {
        const page = await browser.get(authorizeUrl(t, { ...base, client_id: client.clientId, ...params }));
        expect(page.status).toBe(302);
        const back = new URL(page.location!);
        expect(back.searchParams.get('error')).toBe('invalid_request');
        expect(back.searchParams.get('error_description')).toMatch(description);
        expect(back.searchParams.get('state')).toBe('p');
      }
    });

    it('needs the right verifier when a challenge was sent, and refuses one when none was', async () => {
      const { verifier, challenge } = pkcePair();
      const withPkce = { code_challenge: challenge, code_challenge_method: 'S256' };
      const missing = await exchange(app, await codeFor(app, withPkce));
      expect(missing.status).toBe(400);
      expect(missing.body).toMatchObject({
        error: 'invalid_grant',
        error_description: 'code_verifier: required (PKCE)',
      });
      const code = await codeFor(app, withPkce);
      const wrong = await exchange(app, code, { code_verifier: pkcePair().verifier });
      expect(wrong.body).toMatchObject({
        error: 'invalid_grant',
        error_description: 'code_verifier: does not match',
      });
      expect(typeof wrong.body.detail).toBe('string');
      // A failed verifier does not spend the code: the right one still works.
      expect((await exchange(app, code, { code_verifier: verifier })).status).toBe(200);
      const downgrade = await exchange(app, await codeFor(app), { code_verifier: verifier });
      expect(downgrade.body).toMatchObject({
        error: 'invalid_grant',
        error_description: 'code_verifier: the authorization request had no code_challenge',
      });
      // A public client completes the flow with PKCE and no secret.
      const pub = await createApp(t, owner.apiKey, { clientType: 'public' });
      const p = pkcePair();
      const pubCode = await codeFor(pub, { code_challenge: p.challenge, code_challenge_method: 'S256' });
      const ok = await exchange(pub, pubCode, { code_verifier: p.verifier });
      expect(ok.status).toBe(200);
      expect(ok.body.access_token).toMatch(/^wso_/);
    });
  });

  it('uses a code once: a second use fails and revokes the tokens issued from the first', async () => {
    const code = await codeFor(app);
    const first = await exchange(app, code);
    expect(first.status).toBe(200);
    expect(
      (await t.request('GET', `/w/${owner.workspaceId}`, { token: first.body.access_token })).status,
    ).toBe(200);
    const second = await exchange(app, code);
    expect(second.status).toBe(400);
    expect(second.body.error).toBe('invalid_grant');
    const reqId = second.headers.get('x-request-id')!;
    await t.expectEvents({ status: 400, headers: second.headers, body: {}, requestId: reqId }, [
      { type: 'OAuthGrantRevoked', stream: /^oauth-grant-/, data: { reason: 'code_reused', appId: app.id } },
    ]);
    const after = await t.request('GET', `/w/${owner.workspaceId}`, { token: first.body.access_token });
    expect(after.status).toBe(401);
    const refresh = await postForm(t, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token,
      client_id: app.clientId,
      client_secret: app.clientSecret!,
    });
    expect(refresh.body.error).toBe('invalid_grant');
  });

  it('refuses codes of another client, with another redirect_uri, or made up', async () => {
    const other = await createApp(t, owner.apiKey);
    const code = await codeFor(app);
    expect((await exchange(other, code)).body.error).toBe('invalid_grant');
    expect((await exchange(app, code, { redirect_uri: 'https://client.example.com/other' })).body.error).toBe(
      'invalid_grant',
    );
    expect((await exchange(app, 'made-up-code')).body.error).toBe('invalid_grant');
    expect((await exchange(app, code)).status).toBe(200);
  });

  it('rotates refresh tokens, and a reused one revokes the whole family', async () => {
    const tokens = await tokensFor(t, owner, app, 'workspace:read');
    const refresh = (token: string) =>
      postForm(
        t,
        '/oauth/token',
        { grant_type: 'refresh_token', refresh_token: token },
        {
          id: app.clientId,
          secret: app.clientSecret!,
        },
      );
    const second = await refresh(tokens.refresh_token);
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(tokens.refresh_token);
    expect(second.body.scope).toBe('workspace:read');
    const third = await refresh(second.body.refresh_token);
    expect(third.status).toBe(200);
    expect(
      (await t.request('GET', `/w/${owner.workspaceId}`, { token: third.body.access_token })).status,
    ).toBe(200);

    const replay = await refresh(tokens.refresh_token);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    await t.expectEvents(
      { status: 400, headers: replay.headers, body: {}, requestId: replay.headers.get('x-request-id')! },
      [{ type: 'OAuthGrantRevoked', data: { reason: 'refresh_token_reused' } }],
    );
    // Every token of the family is dead: the newest access token and refresh token too.
    expect(
      (await t.request('GET', `/w/${owner.workspaceId}`, { token: third.body.access_token })).status,
    ).toBe(401);
    expect((await refresh(third.body.refresh_token)).body.error).toBe('invalid_grant');
  });

  it('lets a refresh narrow the scope, never widen it', async () => {
    const tokens = await tokensFor(t, owner, app, 'workspace:read members:read');
    const narrow = await postForm(t, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      scope: 'members:read',
      client_id: app.clientId,
      client_secret: app.clientSecret!,
    });
    expect(narrow.status).toBe(200);
    expect(narrow.body.scope).toBe('members:read');
    expect(
      (await t.request('GET', `/w/${owner.workspaceId}`, { token: narrow.body.access_token })).status,
    ).toBe(403);
    expect(
      (await t.request('GET', `/w/${owner.workspaceId}/members`, { token: narrow.body.access_token })).status,
    ).toBe(200);
    const widen = await postForm(t, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: narrow.body.refresh_token,
      scope: 'members:read workspace:read',
      client_id: app.clientId,
      client_secret: app.clientSecret!,
    });
    expect(widen.status).toBe(400);
    expect(widen.body.error).toBe('invalid_scope');
    // The refused request spent nothing: the token still refreshes.
    const again = await postForm(t, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: narrow.body.refresh_token,
      client_id: app.clientId,
      client_secret: app.clientSecret!,
    });
    expect(again.status).toBe(200);
  });

  it('authenticates clients by HTTP Basic or the form, and answers errors per RFC 6749 §5.2', async () => {
    const code = await codeFor(app);
    const badSecret = await exchange(app, code, { client_secret: 'wss_wrong' });
    expect(badSecret.status).toBe(401);
    expect(badSecret.body.error).toBe('invalid_client');
    expect(badSecret.headers.get('www-authenticate')).toMatch(/^Basic realm="oauth"/);
    expect(badSecret.headers.get('cache-control')).toBe('no-store');
    const both = await postForm(
      t,
      '/oauth/token',
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_secret: app.clientSecret! },
      { id: app.clientId, secret: app.clientSecret! },
    );
    expect(both.body.error).toBe('invalid_request');
    const noClient = await postForm(t, '/oauth/token', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
    });
    expect(noClient.status).toBe(401);
    expect(noClient.body.error).toBe('invalid_client');
    const grant = await postForm(t, '/oauth/token', { grant_type: 'password', client_id: app.clientId });
    expect(grant.body.error).toBe('unsupported_grant_type');
    const twice = await fetch(`${t.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=authorization_code&code=${code}&code=${code}&client_id=${app.clientId}&client_secret=${app.clientSecret!}`,
    });
    expect(((await twice.json()) as { error: string }).error).toBe('invalid_request');
    const basic = await postForm(
      t,
      '/oauth/token',
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
      { id: app.clientId, secret: app.clientSecret! },
    );
    expect(basic.status).toBe(200);
    expect(basic.headers.get('pragma')).toBe('no-cache');
  });

  it('revokes tokens (RFC 7009) and introspects only the client’s own (RFC 7662)', async () => {
    const other = await createApp(t, owner.apiKey);
    const mine = await tokensFor(t, owner, app, 'workspace:read');
    const theirs = await tokensFor(t, owner, other, 'workspace:read');
    const auth = { id: app.clientId, secret: app.clientSecret! };

    const active = await postForm(t, '/oauth/introspect', { token: mine.access_token }, auth);
    expect(active.status).toBe(200);
    expect(active.body).toMatchObject({
      active: true,
      scope: 'workspace:read',
      client_id: app.clientId,
      token_type: 'Bearer',
      sub: owner.accountUuid,
      workspace_id: owner.workspaceId,
      iss: t.config.publicBaseUrl,
    });
    expect(active.body.exp - active.body.iat).toBe(3600);
    expect((await postForm(t, '/oauth/introspect', { token: mine.refresh_token }, auth)).body).toMatchObject({
      active: true,
      token_type: 'refresh_token',
    });
    expect((await postForm(t, '/oauth/introspect', { token: theirs.access_token }, auth)).body).toEqual({
      active: false,
    });
    expect((await postForm(t, '/oauth/introspect', { token: 'wso_made_up' }, auth)).body).toEqual({
      active: false,
    });
    const pub = await createApp(t, owner.apiKey, { clientType: 'public' });
    const publicIntrospect = await postForm(t, '/oauth/introspect', {
      token: mine.access_token,
      client_id: pub.clientId,
    });
    expect(publicIntrospect.status).toBe(401);

    // Another client's token is answered 200 and left alone.
    const foreign = await postForm(t, '/oauth/revoke', { token: theirs.access_token }, auth);
    expect(foreign.status).toBe(200);
    expect((await t.request('GET', `/w/${owner.workspaceId}`, { token: theirs.access_token })).status).toBe(
      200,
    );

    const revoked = await postForm(
      t,
      '/oauth/revoke',
      { token: mine.refresh_token, token_type_hint: 'refresh_token' },
      auth,
    );
    expect(revoked.status).toBe(200);
    await t.expectEvents(
      { status: 200, headers: revoked.headers, body: {}, requestId: revoked.headers.get('x-request-id')! },
      [{ type: 'OAuthGrantRevoked', data: { reason: 'revoked', appId: app.id } }],
    );
    expect((await t.request('GET', `/w/${owner.workspaceId}`, { token: mine.access_token })).status).toBe(
      401,
    );
    expect((await postForm(t, '/oauth/introspect', { token: mine.access_token }, auth)).body).toEqual({
      active: false,
    });
    expect((await postForm(t, '/oauth/revoke', { token: 'unknown' }, auth)).status).toBe(200);
    expect(
      (await postForm(t, '/oauth/revoke', { token: mine.access_token }, { id: app.clientId, secret: 'x' }))
        .status,
    ).toBe(401);
  });

  it('intersects the granted scopes with the member’s role, so a demotion narrows every token at once', async () => {
    const demoted = await ownerWithPassword(t, 'Demote');
    const demotedApp = await createApp(t, demoted.apiKey);
    const tokens = await tokensFor(
      t,
      demoted,
      demotedApp,
      'workspace:read members:read data:write task:read',
    );
    const token = tokens.access_token as string;
    const wid = demoted.workspaceId;
    // The bearer principal's credential: shorthands expanded, bound to the consent's workspace and app.
    const credential = await t.app
      .get<CredentialResolver>(CREDENTIAL_RESOLVER, { strict: false })
      .resolve(token);
    expect(credential).toMatchObject({
      kind: 'oauth',
      accountUuid: demoted.accountUuid,
      workspaceId: wid,
      clientId: demotedApp.clientId,
      scopes: ['assignments:read', 'datatypes:write', 'members:read', 'records:write', 'workspace:read'],
    });
    expect((await t.request('GET', `/w/${wid}/members`, { token })).status).toBe(200);
    const role = await customRole(t, wid, demoted.apiKey, 'Reader', ['workspace:read']);
    const roles = await builtInRoles(t, wid, demoted.apiKey);
    expect(roles.Manager).toBeDefined();
    const moved = await t.request('PUT', `/w/${wid}/members/${demoted.memberId}`, {
      token: demoted.apiKey,
      body: { memberRoleId: role },
    });
    expect(moved.status).toBe(200);
    expect((await t.request('GET', `/w/${wid}/members`, { token })).status).toBe(403);
    expect((await t.request('GET', `/w/${wid}`, { token })).status).toBe(200);
  });

  it('keeps a token in the workspace chosen at consent: another workspace is 404, even one the person belongs to', async () => {
    const a = await ownerWithPassword(t, 'Tenant A');
    const b = await ownerWithPassword(t, 'Tenant B');
    const rolesB = await builtInRoles(t, b.workspaceId, b.apiKey);
    const invited = await t.request('POST', `/w/${b.workspaceId}/invitations`, {
      token: b.apiKey,
      body: { email: a.email, memberRoleId: rolesB.Manager },
    });
    expect(invited.status).toBe(201);
    const accepted = await t.request('POST', `/me/invitations/${invited.body.id}/accept`, {
      token: a.apiKey,
    });
    expect(accepted.status).toBe(200);
    const appA = await createApp(t, a.apiKey);
    const { verifier, challenge } = pkcePair();
    const browser = new OAuthBrowser();
    const back = await authorizeThroughPages(
      t,
      a,
      {
        client_id: appA.clientId,
        redirect_uri: REDIRECT,
        scope: 'workspace:read members:read',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      },
      { browser, workspaceId: a.workspaceId },
    );
    const tokens = await postForm(t, '/oauth/token', {
      grant_type: 'authorization_code',
      code: back.searchParams.get('code')!,
      redirect_uri: REDIRECT,
      client_id: appA.clientId,
      client_secret: appA.clientSecret!,
      code_verifier: verifier,
    });
    const token = tokens.body.access_token as string;
    expect((await t.request('GET', `/w/${a.workspaceId}`, { token })).status).toBe(200);
    expect((await t.request('GET', `/w/${b.workspaceId}`, { token })).status).toBe(404);
    expect((await t.request('GET', `/w/${b.workspaceId}/members`, { token })).status).toBe(404);
    // Nor does it reveal the account's other workspaces: GET /w and GET /me show only its own.
    const listed = await t.request('GET', '/w', { token });
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((w: { id: string }) => w.id)).toEqual([a.workspaceId]);
    const me = await t.request('GET', '/me', { token });
    expect(me.status).toBe(200);
    expect(me.body.memberships.map((m: { workspace: { id: string } }) => m.workspace.id)).toEqual([
      a.workspaceId,
    ]);
    const byKey = await t.request('GET', '/w', { token: a.apiKey });
    expect(byKey.body.items.map((w: { id: string }) => w.id).sort()).toEqual(
      [a.workspaceId, b.workspaceId].sort(),
    );
    // Consent in a workspace the person is not in is refused.
    const c = await ownerWithPassword(t, 'Tenant C');
    const page = await browser.get(
      authorizeUrl(t, {
        response_type: 'code',
        client_id: appA.clientId,
        redirect_uri: REDIRECT,
        scope: 'workspace:read',
      }),
    );
    const form = page.form();
    expect(Object.keys(form.options).sort()).toEqual([a.workspaceId, b.workspaceId].sort());
    const refused = await browser.submit(form, { decision: 'approve', workspace_id: c.workspaceId });
    expect(refused.status).toBe(400);
    expect(refused.location).toBeNull();
  });

  it('prunes codes, tokens and sessions a day after they expire, and keeps live ones', async () => {
    const db = t.app.get(DataSource);
    const live = await tokensFor(t, owner, app, 'workspace:read');
    const old = await tokensFor(t, owner, app, 'workspace:read');
    const stale = await postForm(t, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: old.refresh_token,
      client_id: app.clientId,
      client_secret: app.clientSecret!,
    });
    expect(stale.status).toBe(200);
    // The old grant's tokens and codes expired two days ago.
    await db.query(
      `UPDATE oauth_tokens SET expires_at = now() - interval '2 days'
        WHERE grant_id = (SELECT grant_id FROM oauth_tokens WHERE token_hash = encode(sha256($1::bytea), 'hex'))`,
      [old.refresh_token],
    );
    await db.query(`UPDATE oauth_codes SET expires_at = now() - interval '2 days'`);
    const count = (sql: string) => db.query(sql).then((r: { n: number }[]) => r[0].n);
    const before = await count(`SELECT count(*)::int AS n FROM oauth_tokens`);
    const deleted = await t.app.get(TokenService).prune();
    expect(deleted).toBeGreaterThanOrEqual(4);
    expect(await count(`SELECT count(*)::int AS n FROM oauth_codes`)).toBe(0);
    expect(await count(`SELECT count(*)::int AS n FROM oauth_tokens`)).toBe(before - 4);
    const auth = { id: app.clientId, secret: app.clientSecret! };
    expect((await postForm(t, '/oauth/introspect', { token: live.access_token }, auth)).body.active).toBe(
      true,
    );
    expect(
      (await postForm(t, '/oauth/introspect', { token: stale.body.access_token }, auth)).body.active,
    ).toBe(false);
  });
});
