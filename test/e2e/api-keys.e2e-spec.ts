import { DataSource } from 'typeorm';
import { ALL_SCOPES } from '../../src/core/auth/scopes';
import { startTestApp, TestApp, TestResponse } from '../support/app';
import { addMember } from '../support/member-fixtures';

const DAY_MS = 86_400_000;

describe('API keys and bearer authentication (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const createKey = (token: string, body: Record<string, unknown>) =>
    t.request('POST', '/me/api-keys', { token, body });

  function expect401(res: TestResponse): void {
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(res.body.detail).toEqual(expect.any(String));
  }

  it('creates a key whose secret is shown once, stored only as a hash, and lists keys without secrets', async () => {
    const a = await t.bootstrap();
    const before = Date.now();
    const res = await createKey(a.apiKey, {
      name: 'CRM sync',
      scopes: ['records:write', 'members:read', 'records:write'],
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual([
      'createdAt',
      'expiresAt',
      'id',
      'name',
      'prefix',
      'scopes',
      'secret',
    ]);
    // The caller's order, repeats dropped.
    expect(res.body).toMatchObject({ name: 'CRM sync', scopes: ['records:write', 'members:read'] });
    expect(res.body.secret.startsWith(`${res.body.prefix}_`)).toBe(true);
    const expires = Date.parse(res.body.expiresAt);
    expect(expires).toBeGreaterThanOrEqual(before + 90 * DAY_MS - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 90 * DAY_MS);

    const [event] = await t.expectEvents(res, [
      {
        type: 'ApiKeyCreated',
        stream: `apikey-${res.body.id}`,
        data: { keyId: res.body.id, accountUuid: a.accountUuid },
      },
    ]);
    expect(JSON.stringify({ data: event.data, metadata: event.metadata })).not.toContain(res.body.secret);
    const stored = (await t.app
      .get(DataSource)
      .query(`SELECT secret_hash FROM api_keys WHERE id = $1`, [res.body.id])) as { secret_hash: string }[];
    expect(stored[0].secret_hash).toMatch(/^[0-9a-f]{64}$/);

    const list = await t.request('GET', '/me/api-keys', { token: a.apiKey });
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ total: 2, page: 1 });
    const listed = list.body.items.find((k: { id: string }) => k.id === res.body.id);
    expect(listed).toEqual({
      id: res.body.id,
      name: 'CRM sync',
      prefix: res.body.prefix,
      scopes: ['records:write', 'members:read'],
      createdAt: res.body.createdAt,
      expiresAt: res.body.expiresAt,
      lastUsedAt: null,
      status: 'active',
    });
    expect(JSON.stringify(list.body)).not.toContain(res.body.secret);

    // Using the key records its last use (cheaply, at most once a minute per process).
    expect(
      (await t.request('GET', `/w/${a.workspaceId}/member-roles`, { token: res.body.secret })).status,
    ).toBe(403);
    let lastUsedAt: string | null = null;
    const deadline = Date.now() + 10_000;
    for (;;) {
      lastUsedAt = (await t.request('GET', `/me/api-keys/${res.body.id}`, { token: a.apiKey })).body
        .lastUsedAt;
      if (lastUsedAt || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(Date.parse(lastUsedAt!)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('validates name, scopes and expiresInDays (1 to 365), naming the field', async () => {
    const a = await t.bootstrap();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ name: 'k', scopes: [], expiresInDays: 0 }, /^expiresInDays/],
      [{ name: 'k', scopes: [], expiresInDays: 366 }, /^expiresInDays/],
      [{ name: 'k', scopes: [], expiresInDays: 'soon' }, /^expiresInDays/],
      [
        { name: 'k', scopes: ['chats:read', 'chats:everything'] },
        /^scopes: unknown scope "chats:everything"/,
      ],
      [{ scopes: [] }, /^name/],
      [{ name: 'k' }, /^scopes/],
      [{ name: 'k', scopes: [], secret: 'mine' }, /secret: unknown field/],
    ];
    for (const [body, detail] of cases) {
      const res = await createKey(a.apiKey, body);
      expect({ body, status: res.status, detail: res.body.detail }).toEqual({
        body,
        status: 400,
        detail: expect.stringMatching(detail),
      });
    }
    const one = await createKey(a.apiKey, { name: 'short', scopes: [], expiresInDays: 1 });
    expect(one.status).toBe(201);
    expect(Date.parse(one.body.expiresAt) - Date.parse(one.body.createdAt)).toBe(DAY_MS);
    expect((await createKey(a.apiKey, { name: 'long', scopes: [], expiresInDays: 364 })).status).toBe(201);
    // The bootstrap key itself lives 365 days from its creation, a moment ago: no key outlives it.
    const tooLong = await createKey(a.apiKey, { name: 'longest', scopes: [], expiresInDays: 365 });
    expect(tooLong.status).toBe(403);
    expect(tooLong.body.detail).toMatch(/^expiresInDays: this key expires at /);
    expect(await t.eventsOf(tooLong)).toEqual([]);
  });

  it('refuses an overlong scope by its length, without echoing it whole', async () => {
    const a = await t.bootstrap();
    const res = await createKey(a.apiKey, { name: 'k', scopes: ['x'.repeat(5000)] });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^scopes: .*64 characters/);
    expect(res.body.detail.length).toBeLessThan(300);
    expect(await t.eventsOf(res)).toEqual([]);
  });

  it('a key cannot create a key with scopes it lacks, and only API keys manage API keys', async () => {
    const a = await t.bootstrap();
    const narrow = await createKey(a.apiKey, { name: 'narrow', scopes: ['chats:write', 'account:admin'] });
    const wider = await createKey(narrow.body.secret, {
      name: 'wider',
      scopes: ['chats:read', 'chats:admin', 'records:read'],
    });
    expect(wider.status).toBe(403);
    expect(wider.body.detail).toBe(
      'scopes: this key lacks chats:admin, records:read, so a key it creates cannot have them',
    );
    expect((await createKey(narrow.body.secret, { name: 'same', scopes: ['chats:read'] })).status).toBe(201);

    const signup = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
      token: a.apiKey,
      body: { member: { email: 'member-token@example.com' } },
    });
    expect(signup.status).toBeLessThan(300);
    const memberToken = signup.body.token as string;
    expect(memberToken).toEqual(expect.any(String));
    for (const res of [
      await t.request('GET', '/me/api-keys', { token: memberToken }),
      await createKey(memberToken, { name: 'escalate', scopes: ['members:admin'] }),
    ]) {
      // Member tokens never hold account:admin.
      expect(res.status).toBe(403);
      expect(res.body.detail).toBe('This credential lacks the scope account:admin');
    }
  });

  it('revocation applies to the next request; other accounts cannot see or revoke a key', async () => {
    const a = await t.bootstrap();
    const b = await t.bootstrap();
    const key = await createKey(a.apiKey, { name: 'to revoke', scopes: ['workspace:read'] });
    expect((await t.request('GET', `/w/${a.workspaceId}`, { token: key.body.secret })).status).toBe(200);

    expect((await t.request('GET', `/me/api-keys/${key.body.id}`, { token: b.apiKey })).status).toBe(404);
    expect((await t.request('DELETE', `/me/api-keys/${key.body.id}`, { token: b.apiKey })).status).toBe(404);
    expect((await t.request('GET', `/w/${a.workspaceId}`, { token: key.body.secret })).status).toBe(200);

    const del = await t.request('DELETE', `/me/api-keys/${key.body.id}`, { token: a.apiKey });
    expect(del.status).toBe(204);
    await t.expectEvents(del, [
      { type: 'ApiKeyRevoked', stream: `apikey-${key.body.id}`, data: { keyId: key.body.id } },
    ]);
    expect401(await t.request('GET', `/w/${a.workspaceId}`, { token: key.body.secret }));
    expect((await t.request('DELETE', `/me/api-keys/${key.body.id}`, { token: a.apiKey })).status).toBe(404);
    const list = await t.request('GET', '/me/api-keys', { token: a.apiKey });
    expect(list.body.items.map((k: { id: string }) => k.id)).not.toContain(key.body.id);
    expect((await t.request('DELETE', '/me/api-keys/not-a-uuid', { token: a.apiKey })).status).toBe(404);
  });

  it('an expired key is refused with 401 and listed as expired', async () => {
    const a = await t.bootstrap();
    const key = await createKey(a.apiKey, {
      name: 'short-lived',
      scopes: ['workspace:read'],
      expiresInDays: 1,
    });
    expect((await t.request('GET', `/w/${a.workspaceId}`, { token: key.body.secret })).status).toBe(200);
    // A day passes: shift the expiry in the read model the listing reads, and the clock of
    // the process, whose credential cache holds the key until its own expiry.
    await t.app
      .get(DataSource)
      .query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [key.body.id]);
    const realNow = Date.now;
    const dayLater = realNow() + 24 * 3600 * 1000 + 1000;
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => dayLater);
    const res = await t
      .request('GET', `/w/${a.workspaceId}`, { token: key.body.secret })
      .finally(() => clock.mockRestore());
    expect401(res);
    expect(res.body.detail).toBe('The credential is invalid, expired or revoked');
    expect((await t.request('GET', `/me/api-keys/${key.body.id}`, { token: a.apiKey })).body.status).toBe(
      'expired',
    );
  });

  it('acts with the key scopes ∩ the role scopes of the workspace asked for, evaluated per request', async () => {
    const a = await t.bootstrap();
    const b = await t.bootstrap();
    // a's key limited to workspace:read: the Manager role does not widen it.
    const readOnly = await createKey(a.apiKey, {
      name: 'read only',
      scopes: ['workspace:read', 'member_roles:admin'],
    });
    expect((await t.request('GET', `/w/${a.workspaceId}`, { token: readOnly.body.secret })).status).toBe(200);
    const put = await t.request('PUT', `/w/${a.workspaceId}`, {
      token: readOnly.body.secret,
      body: { name: 'x' },
    });
    expect(put.status).toBe(403);
    expect(put.body.detail).toBe('This credential lacks the scope workspace:admin');

    // b's key has every scope; in a, b holds a custom role: the role narrows it.
    const role = await t.request('POST', `/w/${a.workspaceId}/member-roles`, {
      token: a.apiKey,
      body: { name: 'Workspace viewer', permissions: ['workspace:read', 'member_roles:read'] },
    });
    await addMember(t, { workspaceId: a.workspaceId, roleId: role.body.id, accountUuid: b.accountUuid });
    expect((await t.request('GET', `/w/${a.workspaceId}`, { token: b.apiKey })).status).toBe(200);
    expect((await t.request('GET', `/w/${a.workspaceId}/member-roles`, { token: b.apiKey })).status).toBe(
      200,
    );
    expect(
      (await t.request('PUT', `/w/${a.workspaceId}`, { token: b.apiKey, body: { name: 'x' } })).status,
    ).toBe(403);
    expect(
      (await t.request('PUT', `/w/${b.workspaceId}`, { token: b.apiKey, body: { name: 'still mine' } }))
        .status,
    ).toBe(200);

    // Downgrading the role applies on b's very next request.
    const downgrade = await t.request('PUT', `/w/${a.workspaceId}/member-roles/${role.body.id}`, {
      token: a.apiKey,
      body: { permissions: ['member_roles:read'] },
    });
    expect(downgrade.status).toBe(200);
    const next = await t.request('GET', `/w/${a.workspaceId}`, { token: b.apiKey });
    expect(next.status).toBe(403);
    expect(next.body.detail).toBe('This credential lacks the scope workspace:read');
    expect((await t.request('GET', `/w/${a.workspaceId}/member-roles`, { token: b.apiKey })).status).toBe(
      200,
    );
    // b's Manager role in its own workspace is untouched.
    expect((await t.request('GET', `/w/${b.workspaceId}`, { token: b.apiKey })).status).toBe(200);
    expect(ALL_SCOPES).toContain('workspace:admin');
  });

  it('401 with WWW-Authenticate: Bearer for missing, malformed and unknown credentials', async () => {
    const a = await t.bootstrap();
    const path = `/w/${a.workspaceId}`;
    expect401(await t.request('GET', path));
    for (const authorization of [
      'Basic dXNlcjpwYXNz',
      'Bearer',
      'Bearer ',
      `Bearer ${a.apiKey} extra`,
      a.apiKey,
      'Token abc',
    ]) {
      expect401(await t.request('GET', path, { headers: { authorization } }));
    }
    for (const token of [
      'wsk_garbage',
      `${a.apiKey.slice(0, -1)}${a.apiKey.endsWith('A') ? 'B' : 'A'}`,
      'wsk_000000000000_' + 'x'.repeat(43),
      'nonsense',
    ]) {
      expect401(await t.request('GET', path, { token }));
    }
    expect401(await t.request('GET', '/me/api-keys'));
  });

  it('404 for a workspace the principal is not a member of, whatever its scopes', async () => {
    const a = await t.bootstrap();
    const b = await t.bootstrap();
    for (const wid of [b.workspaceId, '0190a6c4-0000-7000-8000-00000000ffff', 'not-a-uuid']) {
      const res = await t.request('GET', `/w/${wid}/member-roles`, { token: a.apiKey });
      expect(res.status).toBe(404);
      expect(res.body.detail).toBe('Workspace not found');
    }
  });
});
