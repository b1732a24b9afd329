import { startTestApp, TestApp, TestResponse } from '../support/app';
import { builtInRoles, customRole, importMembers, signup } from '../support/identity-fixtures';
import { addMember, memberRoleOf } from '../support/member-fixtures';

describe('member roles: no escalation (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('a role editor can grant only scopes it holds, on new roles and on its own role', async () => {
    const owner = await t.bootstrap('Owner workspace');
    const editorRole = await t.request('POST', `/w/${owner.workspaceId}/member-roles`, {
      token: owner.apiKey,
      body: { name: 'Role editor', permissions: ['member_roles:write', 'chats:read'] },
    });
    expect(editorRole.status).toBe(201);
    // Another account (with its own key) joins the owner's workspace holding "Role editor".
    const other = await t.bootstrap('Editor home');
    await addMember(t, {
      workspaceId: owner.workspaceId,
      roleId: editorRole.body.id,
      accountUuid: other.accountUuid,
    });

    const escalate = await t.request('POST', `/w/${owner.workspaceId}/member-roles`, {
      token: other.apiKey,
      body: { name: 'Self-made manager', permissions: ['workspace:admin', 'chats:read'] },
    });
    expect(escalate.status).toBe(403);
    expect(escalate.body.detail).toMatch(/workspace:admin/);
    expect(await t.eventsOf(escalate)).toEqual([]);

    const widenOwn = await t.request('PUT', `/w/${owner.workspaceId}/member-roles/${editorRole.body.id}`, {
      token: other.apiKey,
      body: { permissions: ['member_roles:write', 'chats:admin'] },
    });
    expect(widenOwn.status).toBe(403);
    expect(widenOwn.body.detail).toMatch(/chats:admin/);
    const unchanged = await t.request('GET', `/w/${owner.workspaceId}/member-roles/${editorRole.body.id}`, {
      token: owner.apiKey,
    });
    expect(unchanged.body.permissions.sort()).toEqual(['chats:read', 'member_roles:write']);

    const within = await t.request('POST', `/w/${owner.workspaceId}/member-roles`, {
      token: other.apiKey,
      body: { name: 'Chat reader', permissions: ['chats:read'] },
    });
    expect(within.status).toBe(201);
    await t.expectEvents(within, [
      { type: 'MemberRoleCreated', data: { name: 'Chat reader', permissions: ['chats:read'] } },
    ]);
  });
});

/**
 * Issue 7, item 1: a role merge, the workspace default role, invitations, imports and
 * assignments all change what someone holds, so all pass one rule: the caller's effective
 * scopes must include every scope of the role it hands out (roles/domain/escalation.policy.ts).
 */
describe('no escalation through merges, defaults, invitations, imports, assignments (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  /** 403 naming a scope the caller lacks, and nothing appended. */
  async function expectRefused(res: TestResponse, field: string): Promise<void> {
    expect({ status: res.status, detail: res.body.detail }).toEqual({
      status: 403,
      detail: expect.stringMatching(
        new RegExp(
          `^${field.replace('.', '\\.')}: .* grants [a-z_]+:(read|write|admin).*which this credential does not hold`,
        ),
      ),
    });
    expect(await t.eventsOf(res)).toEqual([]);
  }

  /** The owner's workspace, and another account that joins it holding a custom role with `scopes`. */
  async function insider(scopes: string[]) {
    const owner = await t.bootstrap('Owner workspace');
    const wid = owner.workspaceId;
    const roles = await builtInRoles(t, wid, owner.apiKey);
    const delegate = await customRole(t, wid, owner.apiKey, 'Delegate', scopes);
    const attacker = await t.bootstrap('Attacker home');
    const { memberId } = await addMember(t, {
      workspaceId: wid,
      roleId: delegate,
      accountUuid: attacker.accountUuid,
    });
    return { owner, wid, roles, delegate, attacker, memberId };
  }

  it('replays the attack: a duplicate "manager" made, self-assigned and merged into Manager is refused', async () => {
    const { owner, wid, roles, attacker, memberId } = await insider(['member_roles:admin', 'members:write']);
    const key = attacker.apiKey;

    // 1. A custom role named "manager" with the two scopes the attacker holds: allowed.
    const dup = await t.request('POST', `/w/${wid}/member-roles`, {
      token: key,
      body: { name: 'manager', permissions: ['member_roles:admin', 'members:write'] },
    });
    expect(dup.status).toBe(201);
    // 2. Given to themself: allowed, it grants nothing they lack.
    const assign = await t.request('PUT', `/w/${wid}/members/${memberId}`, {
      token: key,
      body: { memberRoleId: dup.body.id },
    });
    expect(assign.status).toBe(200);
    // 3. Merged into the built-in Manager: refused, nothing moves.
    const merge = await t.request('POST', `/w/${wid}/member-roles/${dup.body.id}/merge`, {
      token: key,
      body: { targetRoleId: roles.Manager },
    });
    await expectRefused(merge, 'targetRoleId');
    expect(merge.body.detail).toMatch(/^targetRoleId: role Manager grants agents:read/);
    expect(await memberRoleOf(t, memberId)).toBe(dup.body.id);
    expect(
      (await t.request('GET', `/w/${wid}/member-roles/${dup.body.id}`, { token: owner.apiKey })).status,
    ).toBe(200);
    expect((await t.request('GET', `/w/${wid}/events`, { token: key })).status).toBe(403);

    // The same merge by a holder of every Manager scope goes through.
    const byOwner = await t.request('POST', `/w/${wid}/member-roles/${dup.body.id}/merge`, {
      token: owner.apiKey,
      body: { targetRoleId: roles.Manager },
    });
    expect(byOwner.status).toBe(200);
    expect(await memberRoleOf(t, memberId)).toBe(roles.Manager);
  });

  it('setting the workspace default role: PUT /w and isDefault on a role', async () => {
    const { owner, wid, roles, attacker } = await insider([
      'workspace:admin',
      'member_roles:admin',
      'members:write',
    ]);
    const key = attacker.apiKey;
    const before = await t.request('GET', `/w/${wid}`, { token: owner.apiKey });
    expect(before.body.settings.defaultMemberRoleId).toBe(roles.User);
    const viaWorkspace = await t.request('PUT', `/w/${wid}`, {
      token: key,
      body: { settings: { defaultMemberRoleId: roles.Manager } },
    });
    await expectRefused(viaWorkspace, 'settings.defaultMemberRoleId');
    const viaRole = await t.request('PUT', `/w/${wid}/member-roles/${roles.Manager}`, {
      token: key,
      body: { isDefault: true },
    });
    await expectRefused(viaRole, 'isDefault');
    const created = await t.request('POST', `/w/${wid}/member-roles`, {
      token: key,
      body: { name: 'Wide default', permissions: ['chats:read'], isDefault: true },
    });
    await expectRefused(created, 'permissions');
    const ws = await t.request('GET', `/w/${wid}`, { token: owner.apiKey });
    expect(ws.body.settings.defaultMemberRoleId).toBe(roles.User);

    // A default within the caller's scopes is set.
    const within = await customRole(t, wid, owner.apiKey, 'Members editor', ['members:write']);
    const ok = await t.request('PUT', `/w/${wid}`, {
      token: key,
      body: { settings: { defaultMemberRoleId: within } },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.settings.defaultMemberRoleId).toBe(within);
  });

  it('inviting, importing and assigning with a role the caller does not fully hold', async () => {
    const { owner, wid, roles, attacker, memberId } = await insider(['members:write', 'chats:read']);
    const key = attacker.apiKey;
    const invite = await t.request('POST', `/w/${wid}/invitations`, {
      token: key,
      body: { email: 'accomplice@example.com', memberRoleId: roles.Manager },
    });
    await expectRefused(invite, 'memberRoleId');

    const imported = await importMembers(t, wid, key, [
      { email: 'row0@example.com', memberRoleId: roles.Manager },
      { email: 'row1@example.com', memberRoleId: roles.User },
    ]);
    expect(imported.status).toBe(200);
    expect(imported.body.importedCount).toBe(0);
    expect(imported.body.errors).toEqual([
      { index: 0, detail: expect.stringMatching(/^memberRoleId: the role grants agents:read/) },
      {
        index: 1,
        detail: expect.stringMatching(
          /^memberRoleId: the role grants agents:read, dm:read, dm:write, devices:write,/,
        ),
      },
    ]);
    expect(await t.eventsOf(imported)).toEqual([]);

    const self = await t.request('PUT', `/w/${wid}/members/${memberId}`, {
      token: key,
      body: { memberRoleId: roles.Manager },
    });
    await expectRefused(self, 'memberRoleId');
    const someone = await signup(t, wid, owner.apiKey, { email: 'someone@example.com' });
    const other = await t.request('PUT', `/w/${wid}/members/${someone.member.id}`, {
      token: key,
      body: { memberRoleId: roles.Manager },
    });
    await expectRefused(other, 'memberRoleId');
    expect(await memberRoleOf(t, memberId)).not.toBe(roles.Manager);

    // A role within the caller's scopes is handed out on every path.
    const reader = await customRole(t, wid, owner.apiKey, 'Chat reader', ['chats:read']);
    const okInvite = await t.request('POST', `/w/${wid}/invitations`, {
      token: key,
      body: { email: 'reader@example.com', memberRoleId: reader },
    });
    expect(okInvite.status).toBe(201);
    const okImport = await importMembers(t, wid, key, [{ email: 'row2@example.com', memberRoleId: reader }]);
    expect(okImport.body).toMatchObject({ importedCount: 1, errors: null });
    // (someone holds User, whose scopes the caller lacks: taking them away is refused too.)
    const notThem = await t.request('PUT', `/w/${wid}/members/${someone.member.id}`, {
      token: key,
      body: { memberRoleId: reader },
    });
    expect(notThem.status).toBe(403);
    const okAssign = await t.request('PUT', `/w/${wid}/members/${memberId}`, {
      token: key,
      body: { memberRoleId: reader },
    });
    expect(okAssign.status).toBe(200);
  });

  it("inviting without a role hands out the workspace's default, so the caller must hold it too", async () => {
    const { owner, wid, roles, attacker } = await insider(['members:write', 'chats:read']);
    const key = attacker.apiKey;
    // The attacker's second account, with a full key of its own, would accept the invitation.
    const accomplice = await t.bootstrap('Accomplice home', 'accomplice@example.com');

    // Out of the box the default is User (agents:read, dm:*, devices:write), which the caller lacks.
    const asUser = await t.request('POST', `/w/${wid}/invitations`, {
      token: key,
      body: { email: 'accomplice@example.com' },
    });
    await expectRefused(asUser, 'memberRoleId');
    expect(asUser.body.detail).toMatch(
      /^memberRoleId: the workspace's default role, User, grants agents:read/,
    );

    const setDefault = await t.request('PUT', `/w/${wid}`, {
      token: owner.apiKey,
      body: { settings: { defaultMemberRoleId: roles.Manager } },
    });
    expect(setDefault.status).toBe(200);
    const asManager = await t.request('POST', `/w/${wid}/invitations`, {
      token: key,
      body: { email: 'accomplice@example.com' },
    });
    await expectRefused(asManager, 'memberRoleId');
    const pending = await t.request('GET', '/me/invitations', { token: accomplice.apiKey });
    expect(pending.body).toMatchObject({ items: [], total: 0 });

    // A default within the caller's scopes is handed out as before.
    const reader = await customRole(t, wid, owner.apiKey, 'Chat reader', ['chats:read']);
    await t.request('PUT', `/w/${wid}`, {
      token: owner.apiKey,
      body: { settings: { defaultMemberRoleId: reader } },
    });
    const ok = await t.request('POST', `/w/${wid}/invitations`, {
      token: key,
      body: { email: 'accomplice@example.com' },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.memberRoleId).toBe(reader);
  });
  it('site and file access are handed out only by sites:admin and files:admin holders', async () => {
    const { owner, wid, roles, delegate, attacker } = await insider([
      'member_roles:admin',
      'members:write',
      // Every scope of User, so that only the copied access stands in the way of the merge below.
      'agents:read',
      'dm:write',
      'devices:write',
    ]);
    const key = attacker.apiKey;
    const forbidden = async (res: TestResponse, field: string, scope: string) => {
      expect(res.status).toBe(403);
      expect(res.body.detail).toMatch(new RegExp(`^${field}: .*${scope}`));
      expect(await t.eventsOf(res)).toEqual([]);
    };
    const ownRole = await t.request('PUT', `/w/${wid}/member-roles/${delegate}`, {
      token: key,
      body: { siteAudience: { allSites: true, siteIds: [] } },
    });
    await forbidden(ownRole, 'siteAudience', 'sites:admin');
    const manager = await t.request('PUT', `/w/${wid}/member-roles/${roles.Manager}`, {
      token: key,
      body: { fileAccess: { folders: [{ id: 1, level: 'admin' }], files: [] } },
    });
    await forbidden(manager, 'fileAccess', 'files:admin');
    const created = await t.request('POST', `/w/${wid}/member-roles`, {
      token: key,
      body: {
        name: 'Folder admins',
        permissions: ['members:write'],
        fileAccess: { folders: [{ id: 1, level: 'admin' }], files: [] },
      },
    });
    await forbidden(created, 'fileAccess', 'files:admin');
    // Clearing access grants nothing.
    const cleared = await t.request('PUT', `/w/${wid}/member-roles/${delegate}`, {
      token: key,
      body: { siteAudience: { allSites: false, siteIds: [] } },
    });
    expect(cleared.status).toBe(200);

    // A merge that copies a duplicate's access onto its target grants it to the target's members.
    const dup = await t.request('POST', `/w/${wid}/member-roles`, {
      token: owner.apiKey,
      body: { name: 'user', permissions: [], siteAudience: { allSites: true, siteIds: [] } },
    });
    expect(dup.status).toBe(201);
    const copy = await t.request('POST', `/w/${wid}/member-roles/${dup.body.id}/merge`, {
      token: key,
      body: { targetRoleId: roles.User, resourceAccess: 'copy' },
    });
    expect(copy.status).toBe(403);
    expect(copy.body.detail).toMatch(/^resourceAccess: .*sites:admin/);
    expect(await t.eventsOf(copy)).toEqual([]);

    // The owner (Manager: sites:admin, files:admin) may.
    const granted = await t.request('PUT', `/w/${wid}/member-roles/${delegate}`, {
      token: owner.apiKey,
      body: { siteAudience: { allSites: true, siteIds: [] } },
    });
    expect(granted.status).toBe(200);
  });
  it('nobody takes access away from those who hold more: demoting, archiving, narrowing or merging away', async () => {
    const { owner, wid, roles, attacker } = await insider([
      'members:admin',
      'member_roles:admin',
      'workspace:read',
    ]);
    const key = attacker.apiKey;
    const takeAway = async (res: TestResponse, field: string) => {
      expect(res.status).toBe(403);
      expect(res.body.detail).toMatch(
        new RegExp(
          `^${field}: .* which this credential does not hold; nobody can change the access of those who hold more`,
        ),
      );
      expect(await t.eventsOf(res)).toEqual([]);
    };
    // The workspace owner (Manager) demoted to External, or archived: refused.
    await takeAway(
      await t.request('PUT', `/w/${wid}/members/${owner.memberId}`, {
        token: key,
        body: { memberRoleId: roles.External },
      }),
      'memberRoleId',
    );
    await takeAway(
      await t.request('DELETE', `/w/${wid}/members/${owner.memberId}`, { token: key }),
      'memberId',
    );
    const ownerEmail = (
      await t.request('GET', `/w/${wid}/members/${owner.memberId}`, { token: owner.apiKey })
    ).body.email as string;
    const upsert = await importMembers(
      t,
      wid,
      key,
      [{ email: ownerEmail, memberRoleId: roles.External }],
      true,
    );
    expect(upsert.body.errors).toEqual([
      {
        index: 0,
        detail: expect.stringMatching(/^memberRoleId: the member's current role, Manager, grants /),
      },
    ]);
    expect(await t.eventsOf(upsert)).toEqual([]);
    expect((await t.request('GET', `/w/${wid}`, { token: owner.apiKey })).status).toBe(200);
    // A role granting more than the caller holds cannot be narrowed or merged away.
    const admins = await customRole(t, wid, owner.apiKey, 'Admins', ['workspace:admin', 'members:admin']);
    await takeAway(
      await t.request('PUT', `/w/${wid}/member-roles/${admins}`, { token: key, body: { permissions: [] } }),
      'roleId',
    );
    const dup = await customRole(t, wid, owner.apiKey, 'admin', ['workspace:admin']);
    await takeAway(
      await t.request('POST', `/w/${wid}/member-roles/${dup}/merge`, {
        token: key,
        body: { targetRoleId: roles.External, resourceAccess: 'discard' },
      }),
      'roleId',
    );
    // Within what it holds, the same caller may: a member on a role it fully holds moves to External.
    const clerk = await customRole(t, wid, owner.apiKey, 'Clerks', ['members:admin']);
    const { memberId: clerkMember } = await addMember(t, { workspaceId: wid, roleId: clerk });
    const moved = await t.request('PUT', `/w/${wid}/members/${clerkMember}`, {
      token: key,
      body: { memberRoleId: roles.External },
    });
    expect(moved.status).toBe(200);
  });
});
