import { v7 as uuidv7 } from 'uuid';
import { startTestApp, TestApp } from '../support/app';
import { signup } from '../support/identity-fixtures';
import { appendAndSettle } from '../support/member-fixtures';
import { newMemberTokenSecret } from '../../src/modules/identity/domain/member-token';

describe('member tokens (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('act for their own member only: own record and profile, nothing else, no other workspace', async () => {
    const a = await t.bootstrap();
    const b = await t.bootstrap();
    const ann = await signup(t, a.workspaceId, a.apiKey, { email: 'ann@example.com', name: 'Ann' });
    const bob = await signup(t, a.workspaceId, a.apiKey, { email: 'bob@example.com' });

    expect(
      (await t.request('GET', `/w/${a.workspaceId}/members/${ann.member.id}`, { token: ann.token })).status,
    ).toBe(200);
    const other = await t.request('GET', `/w/${a.workspaceId}/members/${bob.member.id}`, {
      token: ann.token,
    });
    expect(other.status).toBe(403);
    expect((await t.request('GET', `/w/${a.workspaceId}/members`, { token: ann.token })).status).toBe(403);
    // Its own workspace it reads like an operator does; writing it needs workspace:admin.
    const own = await t.request('GET', `/w/${a.workspaceId}`, { token: ann.token });
    expect(own.status).toBe(200);
    expect(own.body).toEqual((await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey })).body);
    expect(
      (await t.request('PUT', `/w/${a.workspaceId}`, { token: ann.token, body: { name: 'Mine' } })).status,
    ).toBe(403);
    expect(
      (await t.request('GET', `/w/${b.workspaceId}/members/${b.memberId}`, { token: ann.token })).status,
    ).toBe(404);
    expect((await t.request('GET', `/w/${b.workspaceId}`, { token: ann.token })).status).toBe(404);

    const me = await t.request('GET', '/me', { token: ann.token });
    expect(me.status).toBe(200);
    expect(me.body.account).toMatchObject({ uuid: ann.account.uuid, email: 'ann@example.com', name: 'Ann' });
    // The profile is also at the top level, with the token's member.
    expect(me.body).toMatchObject({
      uuid: ann.account.uuid,
      email: 'ann@example.com',
      name: 'Ann',
      member: { id: ann.member.id, workspaceId: a.workspaceId },
    });
    const byKey = await t.request('GET', '/me', { token: a.apiKey });
    expect(byKey.body.uuid).toBe(a.accountUuid);
    expect(byKey.body.member).toBeUndefined();
    expect(me.body.memberships).toHaveLength(1);
    expect(me.body.memberships[0]).toMatchObject({
      workspace: { id: a.workspaceId, name: 'Test workspace' },
      member: { id: ann.member.id, email: 'ann@example.com' },
      role: { id: ann.member.memberRoleId, name: 'User' },
    });
  });

  it('GET /w and GET /w/{wid} agree: a member token lists and reads only the workspace it is bound to', async () => {
    const a = await t.bootstrap('Bound');
    const ann = await signup(t, a.workspaceId, a.apiKey, { email: 'bound-ann@example.com' });
    // The same account is also a member elsewhere: the token must not reveal it.
    const b = await t.bootstrap('Elsewhere', 'bound-ann@example.com');
    expect(b.accountUuid).toBe(ann.account.uuid);
    const list = await t.request('GET', '/w', { token: ann.token });
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ total: 1, page: 1, pageSize: 50 });
    expect(list.body.items.map((w: { id: string }) => w.id)).toEqual([a.workspaceId]);
    for (const w of list.body.items as { id: string }[]) {
      const one = await t.request('GET', `/w/${w.id}`, { token: ann.token });
      expect(one.status).toBe(200);
      expect(one.body).toEqual(w);
    }
    expect((await t.request('GET', `/w/${b.workspaceId}`, { token: ann.token })).status).toBe(404);
    const byKey = await t.request('GET', '/w', { token: b.apiKey });
    expect(byKey.body.items.map((w: { id: string }) => w.id).sort()).toEqual(
      [a.workspaceId, b.workspaceId].sort(),
    );
  });

  it('are refused when malformed, unknown or tampered with', async () => {
    const a = await t.bootstrap();
    const ann = await signup(t, a.workspaceId, a.apiKey, { email: 'ann@example.com' });
    for (const token of ['wsm_nope', `${ann.token.slice(0, -2)}xx`, newMemberTokenSecret().token]) {
      const res = await t.request('GET', '/me', { token });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
    }
  });

  it('expire', async () => {
    const a = await t.bootstrap();
    const ann = await signup(t, a.workspaceId, a.apiKey, { email: 'ann@example.com' });
    // A token issued long ago, written as the service writes one (only its hash is kept).
    const { prefix, token, hash } = newMemberTokenSecret();
    const tokenId = uuidv7();
    const issuedAt = new Date(Date.now() - 31 * 86_400_000);
    await appendAndSettle(t, a.workspaceId, [
      [
        `membertoken-${tokenId}`,
        [
          {
            type: 'MemberTokenIssued',
            data: {
              tokenId,
              workspaceId: a.workspaceId,
              memberId: ann.member.id,
              accountUuid: ann.account.uuid,
              prefix,
              secretHash: hash,
              issuedAt: issuedAt.toISOString(),
              expiresAt: new Date(issuedAt.getTime() + 30 * 86_400_000).toISOString(),
            },
          },
        ],
      ],
    ]);
    expect((await t.request('GET', '/me', { token })).status).toBe(401);
    expect((await t.request('GET', '/me', { token: ann.token })).status).toBe(200);
    const fresh = await t.eventsOf(
      await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
        token: a.apiKey,
        body: { member: { email: 'ann@example.com' } },
      }),
    );
    const issued = fresh.find((e) => e.type === 'MemberTokenIssued')!.data as {
      issuedAt: string;
      expiresAt: string;
    };
    expect(Date.parse(issued.expiresAt) - Date.parse(issued.issuedAt)).toBe(
      t.config.memberTokenTtlDays * 86_400_000,
    );
  });

  it('revoke themselves (DELETE /me/token)', async () => {
    const a = await t.bootstrap();
    const first = await signup(t, a.workspaceId, a.apiKey, { email: 'ann@example.com' });
    const second = await signup(t, a.workspaceId, a.apiKey, { email: 'ann@example.com' });
    const res = await t.request('DELETE', '/me/token', { token: first.token });
    expect(res.status).toBe(204);
    await t.expectEvents(res, [
      { type: 'MemberTokenRevoked', stream: /^membertoken-/, data: { memberId: first.member.id } },
    ]);
    expect((await t.request('GET', '/me', { token: first.token })).status).toBe(401);
    expect((await t.request('GET', '/me', { token: second.token })).status).toBe(200);
    const notAToken = await t.request('DELETE', '/me/token', { token: a.apiKey });
    expect(notAToken.status).toBe(400);
  });

  it('are revoked all at once for a member (members:write or the member itself); later ones work', async () => {
    const a = await t.bootstrap();
    const first = await signup(t, a.workspaceId, a.apiKey, { email: 'ann@example.com' });
    const second = await signup(t, a.workspaceId, a.apiKey, { email: 'ann@example.com' });
    const bob = await signup(t, a.workspaceId, a.apiKey, { email: 'bob@example.com' });
    expect(
      (
        await t.request('DELETE', `/w/${a.workspaceId}/members/${first.member.id}/tokens`, {
          token: bob.token,
        })
      ).status,
    ).toBe(403);
    const res = await t.request('DELETE', `/w/${a.workspaceId}/members/${first.member.id}/tokens`, {
      token: a.apiKey,
    });
    expect(res.status).toBe(204);
    await t.expectEvents(res, [
      {
        type: 'MemberTokensRevoked',
        stream: `member-${first.member.id}`,
        data: { memberId: first.member.id },
      },
    ]);
    for (const tok of [first.token, second.token])
      expect((await t.request('GET', '/me', { token: tok })).status).toBe(401);
    expect((await t.request('GET', '/me', { token: bob.token })).status).toBe(200);
    const third = await signup(t, a.workspaceId, a.apiKey, { email: 'ann@example.com' });
    expect((await t.request('GET', '/me', { token: third.token })).status).toBe(200);
    const self = await t.request('DELETE', `/w/${a.workspaceId}/members/${third.member.id}/tokens`, {
      token: third.token,
    });
    expect(self.status).toBe(204);
    expect((await t.request('GET', '/me', { token: third.token })).status).toBe(401);
  });

  it('stop working when the member is archived', async () => {
    const a = await t.bootstrap();
    const ann = await signup(t, a.workspaceId, a.apiKey, { email: 'ann@example.com' });
    expect(
      (await t.request('DELETE', `/w/${a.workspaceId}/members/${ann.member.id}`, { token: a.apiKey })).status,
    ).toBe(200);
    expect((await t.request('GET', '/me', { token: ann.token })).status).toBe(401);
  });

  it('PUT /me with a member token edits that member, not the account', async () => {
    const a = await t.bootstrap();
    const ann = await signup(t, a.workspaceId, a.apiKey, { email: 'ann@example.com', name: 'Ann' });
    const res = await t.request('PUT', '/me', {
      token: ann.token,
      body: { name: 'Ann B', phone: '+1 415 555 0142', notifyEmail: true },
    });
    expect(res.status).toBe(200);
    expect(res.body.memberships[0].member).toMatchObject({
      name: 'Ann B',
      phone: '+14155550142',
      notifyEmail: true,
    });
    expect(res.body.account).toMatchObject({ name: 'Ann', phone: null });
    // The top-level profile is the token's member, so it agrees with `member` after the write.
    const profile = {
      uuid: ann.account.uuid,
      email: 'ann@example.com',
      name: 'Ann B',
      phone: '+14155550142',
    };
    expect(res.body).toMatchObject({ ...profile, member: { id: ann.member.id, name: 'Ann B' } });
    const again = await t.request('GET', '/me', { token: ann.token });
    expect(again.body).toMatchObject({ ...profile, member: { name: 'Ann B', phone: '+14155550142' } });
    await t.expectEvents(res, [
      {
        type: 'MemberUpdated',
        data: {
          memberId: ann.member.id,
          changes: { name: 'Ann B', phone: '+14155550142', notifyEmail: true },
        },
      },
    ]);
    const role = await t.request('PUT', '/me', { token: ann.token, body: { memberRoleId: 1 } });
    expect(role.status).toBe(400);
    expect(role.body.detail).toMatch(/memberRoleId: unknown field/);
  });
});

describe('/me with an account credential (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('returns the account and every active membership; PUT edits the account', async () => {
    const a = await t.bootstrap('Alpha', 'owner-me@example.com');
    const b = await t.bootstrap('Beta', 'owner-me@example.com');
    expect(b.accountUuid).toBe(a.accountUuid);
    const me = await t.request('GET', '/me', { token: a.apiKey });
    expect(me.status).toBe(200);
    expect(me.body.account).toMatchObject({ uuid: a.accountUuid, email: 'owner-me@example.com' });
    expect(me.body.memberships.map((m: { workspace: { name: string } }) => m.workspace.name)).toEqual([
      'Alpha',
      'Beta',
    ]);
    expect(me.body.memberships[0].role.name).toBe('Manager');

    const put = await t.request('PUT', '/me', {
      token: a.apiKey,
      body: { name: 'Owner', phone: '+33 6 12 34 56 78' },
    });
    expect(put.status).toBe(200);
    expect(put.body.account).toMatchObject({ name: 'Owner', phone: '+33612345678' });
    await t.expectEvents(put, [
      {
        type: 'AccountUpdated',
        stream: `account-${a.accountUuid}`,
        data: { changes: { name: 'Owner', phone: '+33612345678' } },
      },
    ]);
    const flags = await t.request('PUT', '/me', { token: a.apiKey, body: { notifySms: true } });
    expect(flags.status).toBe(400);
    expect(flags.body.detail).toMatch(/^notifySms:/);
    const bad = await t.request('PUT', '/me', { token: a.apiKey, body: { email: 'x' } });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/^email:/);
    expect((await t.request('GET', '/me')).status).toBe(401);
  });
});
