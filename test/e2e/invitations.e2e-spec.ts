import { startTestApp, TestApp } from '../support/app';
import { builtInRoles, customRole, importMembers, keyWithScopes, signup } from '../support/identity-fixtures';

describe('invitations (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it("an email an account set itself finds no invitations: nobody takes another person's invitation by typing their address", async () => {
    const a = await t.bootstrap();
    const intruderEmail = `intruder-${Date.now()}@example.com`;
    const intruder = await t.bootstrap(undefined, intruderEmail);
    const roles = await builtInRoles(t, a.workspaceId, a.apiKey);
    const sent = await t.request('POST', `/w/${a.workspaceId}/invitations`, {
      token: a.apiKey,
      body: { email: 'victim@example.com', memberRoleId: roles.User },
    });
    expect(sent.status).toBe(201);
    const renamed = await t.request('PUT', '/me', {
      token: intruder.apiKey,
      body: { email: 'victim@example.com' },
    });
    expect(renamed.status).toBe(200);
    const mine = await t.request('GET', '/me/invitations', { token: intruder.apiKey });
    expect(mine.body).toMatchObject({ items: [], total: 0 });
    const taken = await t.request('POST', `/me/invitations/${sent.body.id}/accept`, {
      token: intruder.apiKey,
    });
    expect(taken.status).toBe(404);
    expect(await t.eventsOf(taken)).toEqual([]);
    const still = await t.request('GET', `/w/${a.workspaceId}/invitations/${sent.body.id}`, {
      token: a.apiKey,
    });
    expect(still.body).toMatchObject({ status: 'pending', memberId: null });
    expect((await t.request('GET', `/w/${a.workspaceId}`, { token: intruder.apiKey })).status).toBe(404);

    // The address the account was registered with still works.
    const fair = await t.request('POST', `/w/${a.workspaceId}/invitations`, {
      token: a.apiKey,
      body: { email: intruderEmail, memberRoleId: roles.User },
    });
    const otherEmail = `fresh-${Date.now()}@example.com`;
    const other = await t.bootstrap(undefined, otherEmail);
    const invitedFresh = await t.request('POST', `/w/${a.workspaceId}/invitations`, {
      token: a.apiKey,
      body: { email: otherEmail, memberRoleId: roles.User },
    });
    const accepted = await t.request('POST', `/me/invitations/${invitedFresh.body.id}/accept`, {
      token: other.apiKey,
    });
    expect(accepted.status).toBe(200);
    // The intruder's own invitation is found again once it is back at its registered address.
    const away = await t.request('POST', `/me/invitations/${fair.body.id}/accept`, {
      token: intruder.apiKey,
    });
    expect(away.status).toBe(404);
    const back = await t.request('PUT', '/me', { token: intruder.apiKey, body: { email: intruderEmail } });
    expect(back.status).toBe(200);
    const listed = await t.request('GET', '/me/invitations', { token: intruder.apiKey });
    expect(listed.body.items.map((i: { id: string }) => i.id)).toEqual([fair.body.id]);
    const joined = await t.request('POST', `/me/invitations/${fair.body.id}/accept`, {
      token: intruder.apiKey,
    });
    expect(joined.status).toBe(200);
  });

  it('creates, lists, reads and revokes invitations, with their events', async () => {
    const a = await t.bootstrap();
    const roles = await builtInRoles(t, a.workspaceId, a.apiKey);
    const res = await t.request('POST', `/w/${a.workspaceId}/invitations`, {
      token: a.apiKey,
      body: { email: ' New.Person@Example.com', memberRoleId: roles.User },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      workspaceId: a.workspaceId,
      email: 'new.person@example.com',
      memberRoleId: roles.User,
      status: 'pending',
      invitedByMemberId: a.memberId,
      memberId: null,
      createdAt: expect.any(String),
      expiresAt: expect.any(String),
      acceptedAt: null,
      revokedAt: null,
    });
    await t.expectEvents(res, [
      {
        type: 'InvitationCreated',
        stream: `invitation-${res.body.id}`,
        data: {
          invitationId: res.body.id,
          workspaceId: a.workspaceId,
          email: 'new.person@example.com',
          memberRoleId: roles.User,
          invitedByMemberId: a.memberId,
        },
      },
    ]);
    const second = await t.request('POST', `/w/${a.workspaceId}/invitations`, {
      token: a.apiKey,
      body: { email: 'other@example.com', memberRoleId: roles.Manager },
    });
    const list = await t.request('GET', `/w/${a.workspaceId}/invitations`, { token: a.apiKey });
    expect(list.body).toMatchObject({ total: 2, page: 1, pageSize: 50 });
    expect(list.body.items.map((i: { id: string }) => i.id)).toEqual([res.body.id, second.body.id]);
    expect(
      (await t.request('GET', `/w/${a.workspaceId}/invitations/${res.body.id}`, { token: a.apiKey })).body
        .email,
    ).toBe('new.person@example.com');

    const writer = await keyWithScopes(t, a.apiKey, ['members:write']);
    const denied = await t.request('DELETE', `/w/${a.workspaceId}/invitations/${res.body.id}`, {
      token: writer,
    });
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toMatch(/members:admin/);
    const revoked = await t.request('DELETE', `/w/${a.workspaceId}/invitations/${res.body.id}`, {
      token: a.apiKey,
    });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: res.body.id, status: 'revoked', revokedAt: expect.any(String) });
    await t.expectEvents(revoked, [{ type: 'InvitationRevoked', data: { invitationId: res.body.id } }]);
    const pending = await t.request('GET', `/w/${a.workspaceId}/invitations?status=pending`, {
      token: a.apiKey,
    });
    expect(pending.body.items.map((i: { id: string }) => i.id)).toEqual([second.body.id]);
  });

  it('validates: email, role of this workspace, Agent role (a person is invited), Platform Support, scopes', async () => {
    const a = await t.bootstrap();
    const b = await t.bootstrap();
    const roles = await builtInRoles(t, a.workspaceId, a.apiKey);
    const rolesB = await builtInRoles(t, b.workspaceId, b.apiKey);
    const invite = (body: unknown, token = a.apiKey) =>
      t.request('POST', `/w/${a.workspaceId}/invitations`, { token, body });
    const cases: [unknown, number, RegExp][] = [
      [{ email: 'x', memberRoleId: roles.User }, 400, /^email: must be an email address/],
      [{ email: 'x@example.com', memberRoleId: 'User' }, 400, /^memberRoleId:/],
      [{ email: 'x@example.com', memberRoleId: 99999999999 }, 400, /^memberRoleId: must not be greater than/],
      [{ email: `${'x'.repeat(250)}@example.com` }, 400, /^email: must be shorter than or equal to 254/],
      [
        { email: 'x@example.com', memberRoleId: roles.Agent },
        400,
        /^memberRoleId: a person cannot hold the Agent role \(human to Agent role\)/,
      ],
      [
        { email: 'x@example.com', memberRoleId: rolesB.User },
        400,
        /^memberRoleId: role \d+ does not exist in this workspace/,
      ],
      [
        { email: 'x@example.com', memberRoleId: roles['Platform Support'] },
        403,
        /^memberRoleId: the Platform Support role is assigned by support staff only/,
      ],
    ];
    for (const [body, status, detail] of cases) {
      const res = await invite(body);
      expect(res.status).toBe(status);
      expect(res.body.detail).toMatch(detail);
      expect(await t.eventsOf(res)).toEqual([]);
    }
    const reader = await keyWithScopes(t, a.apiKey, ['members:read']);
    expect((await invite({ email: 'x@example.com', memberRoleId: roles.User }, reader)).status).toBe(403);
    expect((await t.request('GET', `/w/${a.workspaceId}/invitations`, { token: reader })).status).toBe(200);
    const writer = await keyWithScopes(t, a.apiKey, ['members:write']);
    const escalate = await invite({ email: 'x@example.com', memberRoleId: roles.Manager }, writer);
    expect(escalate.status).toBe(403);
    expect(escalate.body.detail).toMatch(/^memberRoleId: the role grants/);
  });
});

describe('accepting invitations (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('the invited account declines: 204, InvitationDeclined, no longer acceptable; narrow keys and other accounts cannot', async () => {
    const a = await t.bootstrap();
    const inviteeEmail = `decliner-${Date.now()}@example.com`;
    const invitee = await t.bootstrap(undefined, inviteeEmail);
    const stranger = await t.bootstrap();
    const roles = await builtInRoles(t, a.workspaceId, a.apiKey);
    const sent = await t.request('POST', `/w/${a.workspaceId}/invitations`, {
      token: a.apiKey,
      body: { email: inviteeEmail, memberRoleId: roles.User },
    });
    const path = `/me/invitations/${sent.body.id}/decline`;
    const narrow = await keyWithScopes(t, invitee.apiKey, ['members:read']);
    for (const [method, p] of [
      ['POST', path],
      ['GET', '/me/invitations'],
    ]) {
      const res = await t.request(method, p, { token: narrow });
      expect({ status: res.status, detail: res.body.detail }).toEqual({
        status: 403,
        detail: 'This credential lacks the scope account:admin',
      });
      expect(await t.eventsOf(res)).toEqual([]);
    }
    const notYours = await t.request('POST', path, { token: stranger.apiKey });
    expect(notYours.status).toBe(404);
    expect(await t.eventsOf(notYours)).toEqual([]);

    const declined = await t.request('POST', path, { token: invitee.apiKey });
    expect(declined.status).toBe(204);
    await t.expectEvents(declined, [
      {
        type: 'InvitationDeclined',
        stream: `invitation-${sent.body.id}`,
        data: { invitationId: sent.body.id, workspaceId: a.workspaceId, accountUuid: invitee.accountUuid },
      },
    ]);
    const seen = await t.request('GET', `/w/${a.workspaceId}/invitations/${sent.body.id}`, {
      token: a.apiKey,
    });
    expect(seen.body.status).toBe('declined');
    const filtered = await t.request('GET', `/w/${a.workspaceId}/invitations?status=declined`, {
      token: a.apiKey,
    });
    expect(filtered.body.items.map((i: { id: string }) => i.id)).toEqual([sent.body.id]);
    expect((await t.request('GET', '/me/invitations', { token: invitee.apiKey })).body.total).toBe(0);

    const again = await t.request('POST', path, { token: invitee.apiKey });
    expect(again.status).toBe(204);
    expect(await t.eventsOf(again)).toEqual([]);
    const accept = await t.request('POST', `/me/invitations/${sent.body.id}/accept`, {
      token: invitee.apiKey,
    });
    expect({ status: accept.status, detail: accept.body.detail }).toEqual({
      status: 409,
      detail: 'Invitation was declined',
    });
    expect(await t.eventsOf(accept)).toEqual([]);
  });

  it('GET /me/invitations is the standard paginated list: {items, total, page, pageSize}', async () => {
    const invitee = await t.bootstrap('Home', 'paged-invitee@example.com');
    const ids: string[] = [];
    for (const name of ['One', 'Two', 'Three']) {
      const w = await t.bootstrap(name);
      const inv = await t.request('POST', `/w/${w.workspaceId}/invitations`, {
        token: w.apiKey,
        body: { email: 'paged-invitee@example.com' },
      });
      expect(inv.status).toBe(201);
      ids.push(inv.body.id);
    }
    const all = await t.request('GET', '/me/invitations', { token: invitee.apiKey });
    expect(all.status).toBe(200);
    expect(all.body).toEqual({ items: expect.any(Array), total: 3, page: 1, pageSize: 50 });
    expect(all.body.items.map((i: { id: string }) => i.id)).toEqual(ids);
    const second = await t.request('GET', '/me/invitations?page=2&page_size=2', { token: invitee.apiKey });
    expect(second.body).toMatchObject({ total: 3, page: 2, pageSize: 2 });
    expect(second.body.items.map((i: { id: string }) => i.id)).toEqual([ids[2]]);
    const bad = await t.request('GET', '/me/invitations?pageSize=0', { token: invitee.apiKey });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/^pageSize:/);
  });

  it('the invited account joins the workspace with the role: one account, many workspaces', async () => {
    const a = await t.bootstrap('Alpha');
    const b = await t.bootstrap('Beta', 'invitee@example.com');
    const roles = await builtInRoles(t, a.workspaceId, a.apiKey);
    const analyst = await customRole(t, a.workspaceId, a.apiKey, 'Analyst', ['members:read']);
    const inv = await t.request('POST', `/w/${a.workspaceId}/invitations`, {
      token: a.apiKey,
      body: { email: 'Invitee@example.com', memberRoleId: analyst },
    });
    expect((await t.request('GET', `/w/${a.workspaceId}/members`, { token: b.apiKey })).status).toBe(404);

    const mine = await t.request('GET', '/me/invitations', { token: b.apiKey });
    expect(mine.body.items.map((i: { id: string }) => i.id)).toEqual([inv.body.id]);
    const stranger = await t.bootstrap('Gamma', 'stranger@example.com');
    expect(
      (await t.request('POST', `/me/invitations/${inv.body.id}/accept`, { token: stranger.apiKey })).status,
    ).toBe(404);

    const res = await t.request('POST', `/me/invitations/${inv.body.id}/accept`, { token: b.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      workspace: { id: a.workspaceId, name: 'Alpha' },
      member: {
        accountUuid: b.accountUuid,
        email: 'invitee@example.com',
        memberRoleId: analyst,
        kind: 'person',
      },
      role: { id: analyst, name: 'Analyst' },
    });
    await t.expectEvents(res, [
      {
        type: 'MemberCreated',
        data: { workspaceId: a.workspaceId, accountUuid: b.accountUuid, memberRoleId: analyst },
      },
      {
        type: 'InvitationAccepted',
        stream: `invitation-${inv.body.id}`,
        data: { memberId: res.body.member.id, accountUuid: b.accountUuid },
      },
    ]);
    const workspaces = await t.request('GET', '/w', { token: b.apiKey });
    expect(workspaces.body.items.map((w: { name: string }) => w.name).sort()).toEqual(['Alpha', 'Beta']);
    // b's key now acts in Alpha with the Analyst's scopes.
    expect((await t.request('GET', `/w/${a.workspaceId}/members`, { token: b.apiKey })).status).toBe(200);
    expect(
      (
        await t.request('POST', `/w/${a.workspaceId}/invitations`, {
          token: b.apiKey,
          body: { email: 'x@example.com', memberRoleId: roles.User },
        })
      ).status,
    ).toBe(403);
    const after = await t.request('GET', `/w/${a.workspaceId}/invitations/${inv.body.id}`, {
      token: a.apiKey,
    });
    expect(after.body).toMatchObject({
      status: 'accepted',
      memberId: res.body.member.id,
      acceptedAt: expect.any(String),
    });
    expect(
      (await t.request('POST', `/me/invitations/${inv.body.id}/accept`, { token: b.apiKey })).status,
    ).toBe(409);
    expect(
      (await t.request('DELETE', `/w/${a.workspaceId}/invitations/${inv.body.id}`, { token: a.apiKey }))
        .status,
    ).toBe(409);
  });

  it('an imported contact with the email becomes the account’s membership; revoked ones cannot be accepted; member tokens cannot accept', async () => {
    const a = await t.bootstrap();
    const b = await t.bootstrap('B', 'contact@example.com');
    const roles = await builtInRoles(t, a.workspaceId, a.apiKey);
    const imported = await importMembers(t, a.workspaceId, a.apiKey, [
      { email: 'contact@example.com', name: 'Contact' },
    ]);
    const contactId = imported.body.results[0].memberId;
    const inv = await t.request('POST', `/w/${a.workspaceId}/invitations`, {
      token: a.apiKey,
      body: { email: 'contact@example.com', memberRoleId: roles.External },
    });
    const someone = await signup(t, a.workspaceId, a.apiKey, { email: 'someone@example.com' });
    expect(
      (await t.request('POST', `/me/invitations/${inv.body.id}/accept`, { token: someone.token })).status,
    ).toBe(403);
    const res = await t.request('POST', `/me/invitations/${inv.body.id}/accept`, { token: b.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.member).toMatchObject({
      id: contactId,
      accountUuid: b.accountUuid,
      memberRoleId: roles.External,
      name: 'Contact',
    });

    const revoked = await t.request('POST', `/w/${a.workspaceId}/invitations`, {
      token: a.apiKey,
      body: { email: 'contact@example.com', memberRoleId: roles.User },
    });
    await t.request('DELETE', `/w/${a.workspaceId}/invitations/${revoked.body.id}`, { token: a.apiKey });
    const refused = await t.request('POST', `/me/invitations/${revoked.body.id}/accept`, { token: b.apiKey });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/revoked/);
  });
});

describe('Agent role rules on member updates (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('a person cannot get the Agent role; an agent only Agent or a custom role; 400 naming the direction', async () => {
    const a = await t.bootstrap();
    const b = await t.bootstrap();
    const roles = await builtInRoles(t, a.workspaceId, a.apiKey);
    const custom = await customRole(t, a.workspaceId, a.apiKey, 'Bots', ['chats:read']);
    const person = await signup(t, a.workspaceId, a.apiKey, { email: 'person@example.com' });
    const imported = await importMembers(t, a.workspaceId, a.apiKey, [{ name: 'Bot', kind: 'agent' }]);
    const agentId = imported.body.results[0].memberId;
    const put = (id: number, memberRoleId: number) =>
      t.request('PUT', `/w/${a.workspaceId}/members/${id}`, { token: a.apiKey, body: { memberRoleId } });

    const toAgent = await put(person.member.id, roles.Agent);
    expect(toAgent.status).toBe(400);
    expect(toAgent.body.detail).toBe(
      'memberRoleId: a person cannot hold the Agent role (human to Agent role); it is reserved for agent members',
    );
    expect(await t.eventsOf(toAgent)).toEqual([]);
    for (const human of ['Manager', 'User', 'External']) {
      const res = await put(agentId, roles[human]);
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(
        new RegExp(
          `^memberRoleId: an agent member cannot hold the built-in ${human} role \\(agent to human role\\)`,
        ),
      );
    }
    expect((await put(agentId, custom)).status).toBe(200);
    expect((await put(agentId, roles.Agent)).status).toBe(200);
    expect((await put(person.member.id, custom)).status).toBe(200);
    expect((await put(person.member.id, roles.External)).status).toBe(200);

    const support = await put(person.member.id, roles['Platform Support']);
    expect(support.status).toBe(403);
    expect(support.body.detail).toMatch(/Platform Support/);
    const rolesB = await builtInRoles(t, b.workspaceId, b.apiKey);
    const foreign = await put(person.member.id, rolesB.User);
    expect(foreign.status).toBe(400);
    expect(foreign.body.detail).toMatch(/^memberRoleId: role \d+ does not exist in this workspace/);
    const missing = await put(person.member.id, 999_999);
    expect(missing.status).toBe(400);
  });

  it("without memberRoleId the invitee is offered the workspace's default role", async () => {
    const a = await t.bootstrap();
    const roles = await builtInRoles(t, a.workspaceId, a.apiKey);
    const plain = await t.request('POST', `/w/${a.workspaceId}/invitations`, {
      token: a.apiKey,
      body: { email: 'plain@example.com' },
    });
    expect(plain.status).toBe(201);
    expect(plain.body.memberRoleId).toBe(roles.User);
    const custom = await t.request('POST', `/w/${a.workspaceId}/member-roles`, {
      token: a.apiKey,
      body: { name: 'Invitees', permissions: ['chats:read'] },
    });
    await t.request('PUT', `/w/${a.workspaceId}/member-roles/${custom.body.id}`, {
      token: a.apiKey,
      body: { isDefault: true },
    });
    const defaulted = await t.request('POST', `/w/${a.workspaceId}/invitations`, {
      token: a.apiKey,
      body: { email: 'defaulted@example.com' },
    });
    expect(defaulted.body.memberRoleId).toBe(custom.body.id);
  });
});
