import { startTestApp, TestApp } from '../support/app';

/**
 * Issue 7, item 2: account-level operations need account:admin. The account profile is
 * one: it is shared by every workspace the account belongs to, and invitations are
 * matched by its email, so a key narrowed to one workspace's members must not edit it.
 */
describe('PUT /me on the account needs account:admin (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  async function keyWith(apiKey: string, scopes: string[]): Promise<string> {
    const res = await t.request('POST', '/me/api-keys', { token: apiKey, body: { name: 'k', scopes } });
    expect(res.status).toBe(201);
    return res.body.secret as string;
  }

  it('refuses a key without account:admin (403 naming it, nothing appended), and serves one with it', async () => {
    const a = await t.bootstrap('Acme', 'owner-profile@example.com');
    const narrow = await keyWith(a.apiKey, ['members:read', 'workspace:admin']);
    for (const body of [
      { name: 'Narrow' },
      { email: 'someone-else@example.com' },
      { phone: '+14155550123' },
    ]) {
      const res = await t.request('PUT', '/me', { token: narrow, body });
      expect({ body, status: res.status, detail: res.body.detail }).toEqual({
        body,
        status: 403,
        detail: 'This credential lacks the scope account:admin',
      });
      expect(await t.eventsOf(res)).toEqual([]);
    }
    const me = await t.request('GET', '/me', { token: narrow });
    expect(me.body.account).toMatchObject({ email: 'owner-profile@example.com', phone: null, name: null });

    const wide = await keyWith(a.apiKey, ['members:read', 'account:admin']);
    const ok = await t.request('PUT', '/me', { token: wide, body: { name: 'Owner' } });
    expect(ok.status).toBe(200);
    expect(ok.body.account.name).toBe('Owner');
  });

  it('still lets a member token edit its own member (member tokens never hold account:admin)', async () => {
    const a = await t.bootstrap();
    const signup = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
      token: a.apiKey,
      body: { member: { email: 'ann-profile@example.com' } },
    });
    expect(signup.status).toBe(201);
    const res = await t.request('PUT', '/me', { token: signup.body.token, body: { name: 'Ann' } });
    expect(res.status).toBe(200);
    expect(res.body.member.name).toBe('Ann');
  });
});
