import { startTestApp, TestApp } from '../support/app';
import { createApp, Owner, ownerWithPassword, postForm, tokensFor } from '../support/oauth-browser';

/**
 * Attack: an app narrowed, then widened again (wider than ever). A token issued before
 * gets back at most what the user consented to AND what the app allows now, never a scope
 * the user did not consent to; a token refreshed while the app was narrow stays narrow
 * (the consent is not re-read from the grant); introspection and refresh say the same.
 */
describe('attack: OAuth app re-widened after narrowing (e2e)', () => {
  let t: TestApp;
  let owner: Owner;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await ownerWithPassword(t, 'Rewidened');
  });
  afterAll(() => t.close());

  it('gives an old token back only its consented scopes the app allows now', async () => {
    const app = await createApp(t, owner.apiKey, { name: 'Narrow then wide' });
    const wid = owner.workspaceId;
    const client = { id: app.clientId, secret: app.clientSecret! };
    const tokens = await tokensFor(t, owner, app, 'workspace:read members:read');
    const second = await tokensFor(t, owner, app, 'workspace:read members:read');
    const access = tokens.access_token as string;
    const setScopes = async (scopes: string[]) =>
      expect(
        (await t.request('PUT', `/me/apps/${app.id}`, { token: owner.apiKey, body: { scopes } })).status,
      ).toBe(200);

    await setScopes(['workspace:read']);
    expect((await t.request('GET', `/w/${wid}/members`, { token: access })).status).toBe(403);
    // Refreshed while narrow: the new pair holds only workspace:read.
    const narrowRefresh = await postForm(t, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: second.refresh_token as string,
      client_id: client.id,
      client_secret: client.secret,
    });
    expect(narrowRefresh.status).toBe(200);
    expect(narrowRefresh.body.scope).toBe('workspace:read');

    // Wider than ever: chats:read and data:write (datatypes, records) were never consented to.
    await setScopes(['workspace:read', 'members:read', 'chats:read', 'data:write']);
    expect((await t.request('GET', `/w/${wid}/members`, { token: access })).status).toBe(200);
    for (const [method, path, body] of [
      ['PUT', `/w/${wid}/members/${owner.memberId}`, { name: 'Renamed by the app' }],
      ['POST', `/w/${wid}/data-types`, { name: 'Planted', slug: 'planted', fields: [] }],
    ] as const) {
      const res = await t.request(method, path, { token: access, body });
      expect({ path, status: res.status }).toEqual({ path, status: 403 });
      expect(await t.eventsOf(res)).toEqual([]);
    }
    expect((await postForm(t, '/oauth/introspect', { token: access }, client)).body).toMatchObject({
      active: true,
      scope: 'workspace:read members:read',
    });
    const asked = await postForm(t, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token as string,
      client_id: client.id,
      client_secret: client.secret,
      scope: 'workspace:read chats:read',
    });
    expect(asked.status).toBe(400);
    expect(asked.body.error).toBe('invalid_scope');
    const refreshed = await postForm(t, '/oauth/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token as string,
      client_id: client.id,
      client_secret: client.secret,
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.scope).toBe('workspace:read members:read');
    // The pair refreshed while narrow stays narrow.
    const narrowAccess = narrowRefresh.body.access_token as string;
    expect((await t.request('GET', `/w/${wid}/members`, { token: narrowAccess })).status).toBe(403);
    expect((await t.request('GET', `/w/${wid}`, { token: narrowAccess })).status).toBe(200);
  });
});
