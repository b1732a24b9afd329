import { startTestApp, TestApp, TestResponse } from '../support/app';
import { builtInRoles, keyWithScopes } from '../support/identity-fixtures';

const DAY_MS = 86_400_000;

/**
 * Issue 7, item 2: account-level operations (API keys, invitations) need account:admin in
 * the credential's own scopes; a key never mints a broader or longer-lived key.
 */
describe('account:admin: narrow keys stay narrow (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  async function expectLacksAccountAdmin(res: TestResponse): Promise<void> {
    expect({ status: res.status, detail: res.body.detail }).toEqual({
      status: 403,
      detail: 'This credential lacks the scope account:admin',
    });
    expect(await t.eventsOf(res)).toEqual([]);
  }

  const keyIds = async (token: string): Promise<string[]> => {
    const res = await t.request('GET', '/me/api-keys?pageSize=1000', { token });
    expect(res.status).toBe(200);
    return (res.body.items as { id: string }[]).map((k) => k.id);
  };

  it('a key holding only members:read cannot list, read, create or revoke keys, nor accept an invitation', async () => {
    const a = await t.bootstrap('Alpha');
    const b = await t.bootstrap('Beta', 'narrow-invitee@example.com');
    const narrow = await keyWithScopes(t, b.apiKey, ['members:read']);
    const [broadId] = await keyIds(b.apiKey);

    await expectLacksAccountAdmin(await t.request('GET', '/me/api-keys', { token: narrow }));
    await expectLacksAccountAdmin(await t.request('GET', `/me/api-keys/${broadId}`, { token: narrow }));
    await expectLacksAccountAdmin(
      await t.request('POST', '/me/api-keys', {
        token: narrow,
        body: { name: 'x', scopes: ['members:read'] },
      }),
    );
    await expectLacksAccountAdmin(await t.request('DELETE', `/me/api-keys/${broadId}`, { token: narrow }));
    // The broad key (workspace:admin among its scopes) still works.
    expect((await t.request('GET', `/w/${b.workspaceId}`, { token: b.apiKey })).status).toBe(200);

    const inv = await t.request('POST', `/w/${a.workspaceId}/invitations`, {
      token: a.apiKey,
      body: { email: 'narrow-invitee@example.com' },
    });
    expect(inv.status).toBe(201);
    await expectLacksAccountAdmin(
      await t.request('POST', `/me/invitations/${inv.body.id}/accept`, { token: narrow }),
    );
    const still = await t.request('GET', `/w/${a.workspaceId}/invitations/${inv.body.id}`, {
      token: a.apiKey,
    });
    expect(still.body.status).toBe('pending');
    expect((await t.request('GET', `/w/${a.workspaceId}`, { token: b.apiKey })).status).toBe(404);
  });

  it('a key holding account:admin can list, create, revoke keys and accept an invitation', async () => {
    const a = await t.bootstrap('Alpha');
    const b = await t.bootstrap('Beta', 'admin-invitee@example.com');
    const admin = await keyWithScopes(t, b.apiKey, ['account:admin', 'members:read']);

    const created = await t.request('POST', '/me/api-keys', {
      token: admin,
      body: { name: 'child', scopes: ['members:read'] },
    });
    expect(created.status).toBe(201);
    expect(await keyIds(admin)).toContain(created.body.id);
    const revoked = await t.request('DELETE', `/me/api-keys/${created.body.id}`, { token: admin });
    expect(revoked.status).toBe(204);
    await t.expectEvents(revoked, [{ type: 'ApiKeyRevoked', data: { keyId: created.body.id } }]);

    const inv = await t.request('POST', `/w/${a.workspaceId}/invitations`, {
      token: a.apiKey,
      body: { email: 'admin-invitee@example.com' },
    });
    const accepted = await t.request('POST', `/me/invitations/${inv.body.id}/accept`, { token: admin });
    expect(accepted.status).toBe(200);
    expect(accepted.body.workspace.id).toBe(a.workspaceId);
  });

  it('a key cannot mint a broader or a longer-lived key (403 naming the scope or expiresInDays)', async () => {
    const a = await t.bootstrap();
    const parent = await t.request('POST', '/me/api-keys', {
      token: a.apiKey,
      body: { name: 'parent', scopes: ['account:admin', 'members:write'], expiresInDays: 10 },
    });
    expect(parent.status).toBe(201);
    const key = parent.body.secret as string;

    const broader = await t.request('POST', '/me/api-keys', {
      token: key,
      body: { name: 'broader', scopes: ['members:admin'] },
    });
    expect(broader.status).toBe(403);
    expect(broader.body.detail).toBe(
      'scopes: this key lacks members:admin, so a key it creates cannot have it',
    );
    expect(await t.eventsOf(broader)).toEqual([]);

    const longer = await t.request('POST', '/me/api-keys', {
      token: key,
      body: { name: 'longer', scopes: ['members:read'], expiresInDays: 11 },
    });
    expect(longer.status).toBe(403);
    expect(longer.body.detail).toMatch(
      new RegExp(`^expiresInDays: this key expires at ${parent.body.expiresAt.replace(/\./g, '\\.')}, so`),
    );
    expect(await t.eventsOf(longer)).toEqual([]);

    // Narrower and shorter is fine (write implies read); without expiresInDays the 90-day
    // default is cut to the parent's expiry instead of failing.
    const within = await t.request('POST', '/me/api-keys', {
      token: key,
      body: { name: 'within', scopes: ['members:read'], expiresInDays: 9 },
    });
    expect(within.status).toBe(201);
    const defaulted = await t.request('POST', '/me/api-keys', {
      token: key,
      body: { name: 'defaulted', scopes: ['account:admin'] },
    });
    expect(defaulted.status).toBe(201);
    expect(defaulted.body.expiresAt).toBe(parent.body.expiresAt);
    expect(Date.parse(defaulted.body.expiresAt) - Date.now()).toBeLessThan(10 * DAY_MS);
  });

  it('member tokens never hold account:admin', async () => {
    const a = await t.bootstrap();
    const signup = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
      token: a.apiKey,
      body: { member: { email: 'token-holder@example.com' } },
    });
    const token = signup.body.token as string;
    await expectLacksAccountAdmin(await t.request('GET', '/me/api-keys', { token }));
    expect((await t.request('GET', '/me', { token })).status).toBe(200);
  });

  it('roles cannot hold account:admin, and Manager does not (400, nothing appended)', async () => {
    const owner = await t.bootstrap('Account scope');
    const res = await t.request('POST', `/w/${owner.workspaceId}/member-roles`, {
      token: owner.apiKey,
      body: { name: 'Key admins', permissions: ['members:read', 'account:admin'] },
    });
    expect(res.status).toBe(400);
    expect(res.body.detail).toBe(
      'permissions: account:admin is an account scope that only API keys and OAuth grants carry; a role cannot hold it',
    );
    expect(await t.eventsOf(res)).toEqual([]);
    const roles = await builtInRoles(t, owner.workspaceId, owner.apiKey);
    const manager = await t.request('GET', `/w/${owner.workspaceId}/member-roles/${roles.Manager}`, {
      token: owner.apiKey,
    });
    expect(manager.body.permissions).toHaveLength(72);
    expect(manager.body.permissions).not.toContain('account:admin');
  });
});
