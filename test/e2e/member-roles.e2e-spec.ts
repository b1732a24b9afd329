import { ALL_SCOPES } from '../../src/core/auth/scopes';
import { startTestApp, TestApp } from '../support/app';
import { addMember } from '../support/member-fixtures';

interface Role {
  id: number;
  name: string;
  permissions: string[];
  isBuiltIn: boolean;
  isDefault: boolean;
  siteAudience: { allSites: boolean; siteIds: number[] };
  fileAccess: { folders: { id: number; level: string }[]; files: { id: number; level: string }[] };
}

describe('member roles (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  async function roles(wid: string, token: string): Promise<Record<string, Role>> {
    const res = await t.request('GET', `/w/${wid}/member-roles`, { token });
    expect(res.status).toBe(200);
    return Object.fromEntries((res.body.items as Role[]).map((r) => [r.name, r]));
  }

  it('lists the five built-in roles with exactly the spec scopes, paginated', async () => {
    const a = await t.bootstrap();
    const res = await t.request('GET', `/w/${a.workspaceId}/member-roles`, { token: a.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ total: 5, page: 1, pageSize: 50 });
    const byName = Object.fromEntries((res.body.items as Role[]).map((r) => [r.name, r]));
    expect(Object.keys(byName)).toEqual(['Manager', 'Platform Support', 'User', 'Agent', 'External']);
    // "All grantable scopes": every namespace at read, write and admin, in spec order.
    expect(byName.Manager.permissions).toHaveLength(72);
    expect(byName.Manager.permissions.slice(0, 3)).toEqual(['agents:read', 'agents:write', 'agents:admin']);
    expect(byName.Manager.permissions).toEqual(
      expect.arrayContaining(['members:read', 'members:write', 'members:admin']),
    );
    expect(byName.Manager.permissions).toEqual([...ALL_SCOPES]);
    expect(byName['Platform Support'].permissions).toEqual([...ALL_SCOPES]);
    expect([...byName.User.permissions].sort()).toEqual([
      'agents:read',
      'devices:write',
      'dm:read',
      'dm:write',
    ]);
    expect(byName.Agent.permissions).toEqual([]);
    expect(byName.External.permissions).toEqual([]);
    for (const r of Object.values(byName)) {
      expect(r).toMatchObject({
        isBuiltIn: true,
        siteAudience: { allSites: false, siteIds: [] },
        fileAccess: { folders: [], files: [] },
      });
    }
    // With no default set, new members get the built-in User role.
    expect(
      Object.values(byName)
        .filter((r) => r.isDefault)
        .map((r) => r.name),
    ).toEqual(['User']);

    const page = await t.request('GET', `/w/${a.workspaceId}/member-roles?page=2&page_size=2`, {
      token: a.apiKey,
    });
    expect(page.body).toMatchObject({ total: 5, page: 2, pageSize: 2 });
    expect(page.body.items.map((r: Role) => r.name)).toEqual(['User', 'Agent']);
  });

  it('creates a custom role with any valid scopes, reads it back, and records MemberRoleCreated', async () => {
    const a = await t.bootstrap();
    const res = await t.request('POST', `/w/${a.workspaceId}/member-roles`, {
      token: a.apiKey,
      body: {
        name: 'Care coordinator',
        permissions: [
          'chats:read',
          'chats:write',
          'members:read',
          'members:write',
          'workflows:read',
          'assignments:write',
          'files:read',
          'labels:read',
        ],
        siteAudience: { allSites: false, siteIds: [3, 1] },
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'Care coordinator',
      isBuiltIn: false,
      isDefault: false,
      siteAudience: { allSites: false, siteIds: [1, 3] },
    });
    // The caller's order, not sorted.
    expect(res.body.permissions).toEqual([
      'chats:read',
      'chats:write',
      'members:read',
      'members:write',
      'workflows:read',
      'assignments:write',
      'files:read',
      'labels:read',
    ]);
    await t.expectEvents(res, [
      {
        type: 'MemberRoleCreated',
        stream: `memberrole-${res.body.id}`,
        data: { roleId: res.body.id, workspaceId: a.workspaceId, builtIn: null },
      },
    ]);
    const get = await t.request('GET', `/w/${a.workspaceId}/member-roles/${res.body.id}`, {
      token: a.apiKey,
    });
    expect(get.status).toBe(200);
    expect(get.body).toEqual(res.body);
  });

  it('refuses unknown scopes, unknown fields, built-in and duplicate names, naming the field', async () => {
    const a = await t.bootstrap();
    const path = `/w/${a.workspaceId}/member-roles`;
    const unknownScope = await t.request('POST', path, {
      token: a.apiKey,
      body: { name: 'X', permissions: ['chats:read', 'chats:delete'] },
    });
    expect(unknownScope.status).toBe(400);
    expect(unknownScope.body.detail).toMatch(/^permissions: unknown scope "chats:delete"/);
    const unknownField = await t.request('POST', path, {
      token: a.apiKey,
      body: { name: 'X', permissions: [], colour: 'red' },
    });
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.detail).toMatch(/colour/);
    const noName = await t.request('POST', path, { token: a.apiKey, body: { permissions: [] } });
    expect(noName.status).toBe(400);
    expect(noName.body.detail).toMatch(/^name/);
    const builtInName = await t.request('POST', path, {
      token: a.apiKey,
      body: { name: ' Manager ', permissions: [] },
    });
    expect(builtInName.status).toBe(409);
    expect(builtInName.body.detail).toMatch(/^name: "Manager" is the name of a built-in role/);
    for (const name of ['Platform Support', 'User', 'Agent', 'External']) {
      const res = await t.request('POST', path, { token: a.apiKey, body: { name, permissions: [] } });
      expect({ name, status: res.status }).toEqual({ name, status: 409 });
    }
    expect(
      (await t.request('POST', path, { token: a.apiKey, body: { name: 'Sales', permissions: [] } })).status,
    ).toBe(201);
    const dup = await t.request('POST', path, { token: a.apiKey, body: { name: 'sales', permissions: [] } });
    expect(dup.status).toBe(409);
    for (const r of [unknownScope, unknownField, builtInName, dup]) expect(await t.eventsOf(r)).toEqual([]);
  });

  it('refuses ids beyond an integer and overlong scopes with 400 naming the field, and appends nothing', async () => {
    const a = await t.bootstrap();
    const user = (await roles(a.workspaceId, a.apiKey)).User;
    const huge = 99999999999;
    const cases: [string, string, unknown, RegExp][] = [
      [
        'POST',
        '',
        { name: 'Sites', permissions: [], siteAudience: { allSites: false, siteIds: [huge] } },
        /^siteAudience\.siteIds: /,
      ],
      [
        'POST',
        '',
        { name: 'Files', permissions: [], fileAccess: { folders: [{ id: huge, level: 'read' }], files: [] } },
        /^fileAccess\.folders\.0\.id: must not be greater than 2147483647/,
      ],
      ['POST', '', { name: 'Long', permissions: ['x'.repeat(5000)] }, /^permissions: .*64 characters/],
      ['PUT', `/${user.id}`, { permissions: ['x'.repeat(5000)] }, /^permissions: .*64 characters/],
      [
        'POST',
        `/${user.id}/merge`,
        { targetRoleId: huge },
        /^targetRoleId: must not be greater than 2147483647/,
      ],
      [
        'POST',
        `/${user.id}/merge`,
        { targetRoleId: 1, resourceAccess: 'keep' },
        /^resourceAccess: .*copy, discard/,
      ],
    ];
    for (const [method, path, body, detail] of cases) {
      const res = await t.request(method, `/w/${a.workspaceId}/member-roles${path}`, {
        token: a.apiKey,
        body,
      });
      expect({ body, status: res.status, detail: res.body.detail }).toEqual({
        body,
        status: 400,
        detail: expect.stringMatching(detail),
      });
      expect(await t.eventsOf(res)).toEqual([]);
    }
  });

  it('concurrent creates of one name make one role; many different names all succeed', async () => {
    const a = await t.bootstrap();
    const path = `/w/${a.workspaceId}/member-roles`;
    const same = await Promise.all(
      Array.from({ length: 12 }, () =>
        t.request('POST', path, { token: a.apiKey, body: { name: 'Dispatch', permissions: [] } }),
      ),
    );
    expect(same.map((r) => r.status).sort()).toEqual([201, ...Array(11).fill(409)]);
    // One winner, and every loser is told which role holds the name (no "retry" answers).
    const winner = same.find((r) => r.status === 201)!.body as Role;
    for (const r of same.filter((x) => x.status === 409)) {
      expect(r.body.detail).toBe(`name: role ${winner.id} of this workspace is already named "Dispatch"`);
      expect(await t.eventsOf(r)).toEqual([]);
    }
    const create = (name: string) =>
      t.request('POST', path, { token: a.apiKey, body: { name, permissions: [] } });
    const distinct = await Promise.all(Array.from({ length: 12 }, (_, i) => create(`Team ${i}`)));
    expect(distinct.map((r) => r.status)).toEqual(Array(12).fill(201));
    expect(new Set(distinct.map((r) => r.body.name))).toEqual(
      new Set(Array.from({ length: 12 }, (_, i) => `Team ${i}`)),
    );
    expect((await t.request('GET', path, { token: a.apiKey })).body.total).toBe(5 + 1 + 12);
  });

  it('keeps the name and scopes of built-in roles but lets their access be edited', async () => {
    const a = await t.bootstrap();
    const { Manager, User } = await roles(a.workspaceId, a.apiKey);
    const rename = await t.request('PUT', `/w/${a.workspaceId}/member-roles/${Manager.id}`, {
      token: a.apiKey,
      body: { name: 'Boss' },
    });
    expect(rename.status).toBe(400);
    expect(rename.body.detail).toBe('name: the built-in role Manager cannot be renamed');
    const rescope = await t.request('PUT', `/w/${a.workspaceId}/member-roles/${User.id}`, {
      token: a.apiKey,
      body: { permissions: ['chats:read'] },
    });
    expect(rescope.status).toBe(400);
    expect(rescope.body.detail).toBe('permissions: the scopes of the built-in role User cannot be changed');
    for (const r of [rename, rescope]) expect(await t.eventsOf(r)).toEqual([]);

    const edit = await t.request('PUT', `/w/${a.workspaceId}/member-roles/${User.id}`, {
      token: a.apiKey,
      body: {
        name: 'User',
        permissions: User.permissions,
        siteAudience: { allSites: true, siteIds: [] },
        fileAccess: { folders: [{ id: 4, level: 'write' }], files: [] },
      },
    });
    expect(edit.status).toBe(200);
    expect(edit.body).toMatchObject({
      name: 'User',
      permissions: User.permissions,
      siteAudience: { allSites: true },
      fileAccess: { folders: [{ id: 4, level: 'write' }] },
    });
    await t.expectEvents(edit, [
      {
        type: 'MemberRoleUpdated',
        stream: `memberrole-${User.id}`,
        data: { siteAudience: { allSites: true, siteIds: [] } },
      },
    ]);

    for (const role of Object.values(await roles(a.workspaceId, a.apiKey))) {
      const del = await t.request('DELETE', `/w/${a.workspaceId}/member-roles/${role.id}`, {
        token: a.apiKey,
      });
      expect(del.status).toBe(400);
      expect(del.body.detail).toBe(`roleId: the built-in role ${role.name} cannot be deleted`);
    }
  });

  it('renames and rescopes custom roles; deletes them only when nothing refers to them', async () => {
    const a = await t.bootstrap();
    const path = `/w/${a.workspaceId}/member-roles`;
    const role = (
      await t.request('POST', path, {
        token: a.apiKey,
        body: { name: 'Analyst', permissions: ['chats:read'] },
      })
    ).body as Role;
    const put = await t.request('PUT', `${path}/${role.id}`, {
      token: a.apiKey,
      body: { name: 'Read-only analyst', permissions: ['chats:read', 'records:read'] },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      name: 'Read-only analyst',
      permissions: ['chats:read', 'records:read'],
    });
    await t.expectEvents(put, [
      {
        type: 'MemberRoleUpdated',
        data: { name: 'Read-only analyst', permissions: ['chats:read', 'records:read'] },
      },
    ]);

    const member = await addMember(t, { workspaceId: a.workspaceId, roleId: role.id, archived: true });
    const held = await t.request('DELETE', `${path}/${role.id}`, { token: a.apiKey });
    expect(held.status).toBe(409);
    expect(held.body.detail).toMatch(/held by 1 member\(s\) \(archived included\)/);
    expect(member.memberId).toBeGreaterThan(0);

    const offered = (
      await t.request('POST', path, { token: a.apiKey, body: { name: 'Offered', permissions: [] } })
    ).body as Role;
    const invitation = await t.request('POST', `/w/${a.workspaceId}/invitations`, {
      token: a.apiKey,
      body: { email: 'inv@example.com', memberRoleId: offered.id },
    });
    expect(invitation.status).toBe(201);
    const invited = await t.request('DELETE', `${path}/${offered.id}`, { token: a.apiKey });
    expect(invited.status).toBe(409);
    expect(invited.body.detail).toMatch(/1 unclaimed invitation/);

    const free = (await t.request('POST', path, { token: a.apiKey, body: { name: 'Temp', permissions: [] } }))
      .body as Role;
    const del = await t.request('DELETE', `${path}/${free.id}`, { token: a.apiKey });
    expect(del.status).toBe(204);
    await t.expectEvents(del, [
      { type: 'MemberRoleDeleted', stream: `memberrole-${free.id}`, data: { roleId: free.id } },
    ]);
    expect((await t.request('GET', `${path}/${free.id}`, { token: a.apiKey })).status).toBe(404);
    expect((await t.request('DELETE', `${path}/${free.id}`, { token: a.apiKey })).status).toBe(404);
    // A path id that is not a positive integer names no role: 404, as for members and API keys.
    for (const bad of ['abc', '0', '-1', '1.5', '99999999999']) {
      for (const [method, body] of [
        ['GET', undefined],
        ['PUT', { name: 'X' }],
        ['DELETE', undefined],
        ['POST', { targetRoleId: 1 }],
      ] as const) {
        const url = method === 'POST' ? `${path}/${bad}/merge` : `${path}/${bad}`;
        const res = await t.request(method, url, { token: a.apiKey, ...(body ? { body } : {}) });
        expect({ url, method, status: res.status, detail: res.body.detail }).toEqual({
          url,
          method,
          status: 404,
          detail: 'Role not found',
        });
      }
    }
  });

  it('allows other spellings of built-in names as custom roles, unique among custom roles', async () => {
    const a = await t.bootstrap();
    const path = `/w/${a.workspaceId}/member-roles`;
    for (const name of ['manager', 'admin', 'agent', 'user', 'platform support']) {
      const res = await t.request('POST', path, { token: a.apiKey, body: { name, permissions: [] } });
      expect({ name, status: res.status }).toEqual({ name, status: 201 });
      expect(res.body).toMatchObject({ name, isBuiltIn: false });
    }
    const names = await roles(a.workspaceId, a.apiKey);
    expect(names.Manager.isBuiltIn).toBe(true);
    expect(names.manager.isBuiltIn).toBe(false);
    // Custom names stay unique among themselves up to case, blanks, `_` and `-`.
    const again = await t.request('POST', path, {
      token: a.apiKey,
      body: { name: 'MANAGER', permissions: [] },
    });
    expect(again.status).toBe(409);
    expect(again.body.detail).toBe(
      `name: role ${names.manager.id} of this workspace is already named "MANAGER"`,
    );
    // Renaming follows the same rules.
    const sales = (
      await t.request('POST', path, { token: a.apiKey, body: { name: 'Sales', permissions: [] } })
    ).body as Role;
    const toBuiltIn = await t.request('PUT', `${path}/${sales.id}`, {
      token: a.apiKey,
      body: { name: 'User' },
    });
    expect(toBuiltIn.status).toBe(409);
    const toSpelling = await t.request('PUT', `${path}/${sales.id}`, {
      token: a.apiKey,
      body: { name: 'External users' },
    });
    expect(toSpelling.status).toBe(200);
    expect(toSpelling.body.name).toBe('External users');
  });

  it('frees a custom name when its role is renamed, deleted or merged, and claims the new one', async () => {
    const a = await t.bootstrap();
    const path = `/w/${a.workspaceId}/member-roles`;
    const create = (name: string) =>
      t.request('POST', path, { token: a.apiKey, body: { name, permissions: [] } });
    const first = (await create('Night Shift')).body as Role;
    const renamed = await t.request('PUT', `${path}/${first.id}`, {
      token: a.apiKey,
      body: { name: 'Late Shift' },
    });
    expect(renamed.status).toBe(200);
    expect((await create('night-shift')).status).toBe(201);
    const taken = await create('late_shift');
    expect(taken.status).toBe(409);
    expect(taken.body.detail).toBe(`name: role ${first.id} of this workspace is already named "late_shift"`);
    expect(await t.eventsOf(taken)).toEqual([]);
    // A rename that only changes the spelling keeps the role's own claim.
    const respelled = await t.request('PUT', `${path}/${first.id}`, {
      token: a.apiKey,
      body: { name: 'LATE shift' },
    });
    expect(respelled.status).toBe(200);
    expect((await t.request('DELETE', `${path}/${first.id}`, { token: a.apiKey })).status).toBe(204);
    expect((await create('Late Shift')).status).toBe(201);
    const dup = (await create('admin')).body as Role;
    const manager = (await roles(a.workspaceId, a.apiKey)).Manager;
    const merged = await t.request('POST', `${path}/${dup.id}/merge`, {
      token: a.apiKey,
      body: { targetRoleId: manager.id, resourceAccess: 'discard' },
    });
    expect(merged.status).toBe(200);
    expect((await create('Admin')).status).toBe(201);
  });

  it("keeps the caller's permission order, dropping only repeats", async () => {
    const a = await t.bootstrap();
    const path = `/w/${a.workspaceId}/member-roles`;
    const res = await t.request('POST', path, {
      token: a.apiKey,
      body: { name: 'Analyst', permissions: ['records:read', 'chats:read', 'analytics:read', 'chats:read'] },
    });
    expect(res.status).toBe(201);
    expect(res.body.permissions).toEqual(['records:read', 'chats:read', 'analytics:read']);
    expect((await t.request('GET', `${path}/${res.body.id}`, { token: a.apiKey })).body.permissions).toEqual([
      'records:read',
      'chats:read',
      'analytics:read',
    ]);
    const put = await t.request('PUT', `${path}/${res.body.id}`, {
      token: a.apiKey,
      body: { permissions: ['workspace:read', 'analytics:read', 'workspace:read', 'chats:read'] },
    });
    expect(put.status).toBe(200);
    expect(put.body.permissions).toEqual(['workspace:read', 'analytics:read', 'chats:read']);
    const listed = (await roles(a.workspaceId, a.apiKey)).Analyst;
    expect(listed.permissions).toEqual(['workspace:read', 'analytics:read', 'chats:read']);
  });

  it('isDefault is the workspace default for new members, and refuses roles that cannot be one', async () => {
    const a = await t.bootstrap();
    const path = `/w/${a.workspaceId}/member-roles`;
    const { User, Agent } = await roles(a.workspaceId, a.apiKey);
    const created = await t.request('POST', path, {
      token: a.apiKey,
      body: { name: 'Volunteer', permissions: ['chats:read'], isDefault: true },
    });
    expect(created.status).toBe(201);
    expect(created.body.isDefault).toBe(true);
    await t.expectEvents(created, [
      { type: 'MemberRoleCreated' },
      {
        type: 'WorkspaceUpdated',
        stream: `workspace-${a.workspaceId}`,
        data: { settings: { defaultMemberRoleId: created.body.id } },
      },
    ]);
    const ws = await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey });
    expect(ws.body.settings.defaultMemberRoleId).toBe(created.body.id);
    expect((await roles(a.workspaceId, a.apiKey)).User.isDefault).toBe(false);

    const del = await t.request('DELETE', `${path}/${created.body.id}`, { token: a.apiKey });
    expect(del.status).toBe(409);
    expect(del.body.detail).toMatch(/default role/);

    const unset = await t.request('PUT', `${path}/${created.body.id}`, {
      token: a.apiKey,
      body: { isDefault: false },
    });
    expect(unset.status).toBe(200);
    expect(unset.body.isDefault).toBe(false);
    expect((await roles(a.workspaceId, a.apiKey)).User.isDefault).toBe(true);
    const unsetUser = await t.request('PUT', `${path}/${User.id}`, {
      token: a.apiKey,
      body: { isDefault: false },
    });
    expect(unsetUser.status).toBe(400);
    expect(unsetUser.body.detail).toMatch(/^isDefault:/);

    const { 'Platform Support': support } = await roles(a.workspaceId, a.apiKey);
    const ps = await t.request('PUT', `${path}/${support.id}`, {
      token: a.apiKey,
      body: { isDefault: true },
    });
    expect(ps.status).toBe(403);
    expect(ps.body.detail).toMatch(/^isDefault: Platform Support is assigned by support staff only/);
    const agent = await t.request('PUT', `${path}/${Agent.id}`, {
      token: a.apiKey,
      body: { isDefault: true },
    });
    expect(agent.status).toBe(400);
    const viaWorkspace = await t.request('PUT', `/w/${a.workspaceId}`, {
      token: a.apiKey,
      body: { settings: { defaultMemberRoleId: support.id } },
    });
    expect(viaWorkspace.status).toBe(403);
    expect(viaWorkspace.body.detail).toMatch(/^settings\.defaultMemberRoleId:/);
    const missing = await t.request('PUT', `/w/${a.workspaceId}`, {
      token: a.apiKey,
      body: { settings: { defaultMemberRoleId: 999999 } },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.detail).toBe('settings.defaultMemberRoleId: no role 999999 in this workspace');
    for (const r of [ps, agent, viaWorkspace, missing]) expect(await t.eventsOf(r)).toEqual([]);
  });

  it('GET /w/{wid} and the roles agree on the default role in every state', async () => {
    const a = await t.bootstrap();
    const path = `/w/${a.workspaceId}/member-roles`;
    async function expectDefault(roleId: number): Promise<void> {
      const ws = await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey });
      expect(ws.body.settings.defaultMemberRoleId).toBe(roleId);
      const marked = Object.values(await roles(a.workspaceId, a.apiKey)).filter((r) => r.isDefault);
      expect(marked.map((r) => r.id)).toEqual([roleId]);
      expect((await t.request('GET', `${path}/${roleId}`, { token: a.apiKey })).body.isDefault).toBe(true);
    }
    const { User } = await roles(a.workspaceId, a.apiKey);
    await expectDefault(User.id); // a new workspace names User

    const volunteer = await t.request('POST', path, {
      token: a.apiKey,
      body: { name: 'Volunteer', permissions: [] },
    });
    const viaWorkspace = await t.request('PUT', `/w/${a.workspaceId}`, {
      token: a.apiKey,
      body: { settings: { defaultMemberRoleId: volunteer.body.id } },
    });
    expect(viaWorkspace.body.settings.defaultMemberRoleId).toBe(volunteer.body.id);
    await expectDefault(volunteer.body.id);

    const unmark = await t.request('PUT', `${path}/${volunteer.body.id}`, {
      token: a.apiKey,
      body: { isDefault: false },
    });
    expect(unmark.status).toBe(200);
    await t.expectEvents(unmark, [
      { type: 'WorkspaceUpdated', data: { settings: { defaultMemberRoleId: User.id } } },
    ]);
    await expectDefault(User.id);

    await t.request('PUT', `${path}/${volunteer.body.id}`, { token: a.apiKey, body: { isDefault: true } });
    const backToUser = await t.request('PUT', `/w/${a.workspaceId}`, {
      token: a.apiKey,
      body: { settings: { defaultMemberRoleId: null } },
    });
    expect(backToUser.status).toBe(200);
    expect(backToUser.body.settings.defaultMemberRoleId).toBe(User.id);
    await expectDefault(User.id);

    // A merge that deletes the default moves it to the target.
    await t.request('PUT', `${path}/${volunteer.body.id}`, { token: a.apiKey, body: { isDefault: true } });
    const merged = await t.request('POST', `${path}/${volunteer.body.id}/merge`, {
      token: a.apiKey,
      body: { targetRoleId: User.id },
    });
    expect(merged.status).toBe(200);
    expect(merged.body.workspaceDefaultMoved).toBe(true);
    await expectDefault(User.id);
  });

  it('needs member_roles:read to read, :write to create and update, :admin to delete and merge', async () => {
    const a = await t.bootstrap();
    const b = await t.bootstrap();
    const path = `/w/${a.workspaceId}/member-roles`;
    const readOnly = (
      await t.request('POST', path, {
        token: a.apiKey,
        body: { name: 'Role reader', permissions: ['member_roles:read'] },
      })
    ).body as Role;
    const writer = (
      await t.request('POST', path, {
        token: a.apiKey,
        body: { name: 'Role writer', permissions: ['member_roles:write'] },
      })
    ).body as Role;
    await addMember(t, { workspaceId: a.workspaceId, roleId: readOnly.id, accountUuid: b.accountUuid });

    expect((await t.request('GET', path, { token: b.apiKey })).status).toBe(200);
    const post = await t.request('POST', path, { token: b.apiKey, body: { name: 'Nope', permissions: [] } });
    expect(post.status).toBe(403);
    expect(post.body.detail).toBe('This credential lacks the scope member_roles:write');

    // The role is the account's in this workspace: raising it applies on the next request.
    await t.request('PUT', `${path}/${readOnly.id}`, {
      token: a.apiKey,
      body: { permissions: ['member_roles:write'] },
    });
    expect(
      (await t.request('POST', path, { token: b.apiKey, body: { name: 'Yes', permissions: [] } })).status,
    ).toBe(201);
    const del = await t.request('DELETE', `${path}/${writer.id}`, { token: b.apiKey });
    expect(del.status).toBe(403);
    expect(del.body.detail).toBe('This credential lacks the scope member_roles:admin');
    const merge = await t.request('POST', `${path}/${writer.id}/merge`, {
      token: b.apiKey,
      body: { targetRoleId: 1 },
    });
    expect(merge.status).toBe(403);
  });

  it("keeps tenants apart: A's key gets 404 on B's roles, and B's role ids do not resolve in A", async () => {
    const a = await t.bootstrap();
    const b = await t.bootstrap();
    const bRole = (
      await t.request('POST', `/w/${b.workspaceId}/member-roles`, {
        token: b.apiKey,
        body: { name: 'B only', permissions: [] },
      })
    ).body as Role;
    const bPath = `/w/${b.workspaceId}/member-roles`;
    const attempts = [
      await t.request('GET', bPath, { token: a.apiKey }),
      await t.request('POST', bPath, { token: a.apiKey, body: { name: 'X', permissions: [] } }),
      await t.request('GET', `${bPath}/${bRole.id}`, { token: a.apiKey }),
      await t.request('PUT', `${bPath}/${bRole.id}`, { token: a.apiKey, body: { name: 'Y' } }),
      await t.request('DELETE', `${bPath}/${bRole.id}`, { token: a.apiKey }),
      await t.request('POST', `${bPath}/${bRole.id}/merge`, { token: a.apiKey, body: { targetRoleId: 1 } }),
    ];
    for (const res of attempts) {
      expect(res.status).toBe(404);
      expect(res.body.detail).toBe('Workspace not found');
    }
    const aPath = `/w/${a.workspaceId}/member-roles/${bRole.id}`;
    expect((await t.request('GET', aPath, { token: a.apiKey })).status).toBe(404);
    expect((await t.request('PUT', aPath, { token: a.apiKey, body: { name: 'Z' } })).status).toBe(404);
    expect((await t.request('DELETE', aPath, { token: a.apiKey })).status).toBe(404);
    expect((await t.request('GET', `${bPath}/${bRole.id}`, { token: b.apiKey })).body.name).toBe('B only');
  });
});
