import { startTestApp, TestApp, TestResponse } from '../support/app';
import { addLegacyRole, addMember, memberRoleOf } from '../support/member-fixtures';

interface Role {
  id: number;
  name: string;
  isBuiltIn: boolean;
  siteAudience: { allSites: boolean; siteIds: number[] };
  fileAccess: { folders: { id: number; level: string }[]; files: { id: number; level: string }[] };
}

describe('merging duplicate roles (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  async function builtIns(wid: string, token: string): Promise<Record<string, Role>> {
    const res = await t.request('GET', `/w/${wid}/member-roles`, { token });
    return Object.fromEntries((res.body.items as Role[]).filter((r) => r.isBuiltIn).map((r) => [r.name, r]));
  }

  const merge = (wid: string, token: string, sourceId: number, body: Record<string, unknown>) =>
    t.request('POST', `/w/${wid}/member-roles/${sourceId}/merge`, { token, body });

  it('merges a duplicate with copy: moves every member (archived too) and the default, copies access, deletes the duplicate', async () => {
    const a = await t.bootstrap();
    const b = await t.bootstrap();
    const { Manager } = await builtIns(a.workspaceId, a.apiKey);
    await t.request('PUT', `/w/${a.workspaceId}/member-roles/${Manager.id}`, {
      token: a.apiKey,
      body: {
        siteAudience: { allSites: false, siteIds: [1] },
        fileAccess: { folders: [{ id: 10, level: 'admin' }], files: [] },
      },
    });
    const dup = await addLegacyRole(t, a.workspaceId, 'manager');
    await t.request('PUT', `/w/${a.workspaceId}/member-roles/${dup}`, {
      token: a.apiKey,
      body: {
        siteAudience: { allSites: false, siteIds: [2] },
        fileAccess: { folders: [{ id: 10, level: 'read' }], files: [{ id: 5, level: 'write' }] },
      },
    });
    await t.request('PUT', `/w/${a.workspaceId}`, {
      token: a.apiKey,
      body: { settings: { defaultMemberRoleId: dup } },
    });
    // b's account holds the duplicate in a: its key has no scope there until the merge.
    const holder = await addMember(t, {
      workspaceId: a.workspaceId,
      roleId: dup,
      accountUuid: b.accountUuid,
    });
    const archived = await addMember(t, { workspaceId: a.workspaceId, roleId: dup, archived: true });
    expect((await t.request('GET', `/w/${a.workspaceId}`, { token: b.apiKey })).status).toBe(403);
    const invite = (email: string) =>
      t.request('POST', `/w/${a.workspaceId}/invitations`, {
        token: a.apiKey,
        body: { email, memberRoleId: dup },
      });
    const pending = await invite('pending@example.com');
    expect(pending.status).toBe(201);
    const revoked = await invite('revoked@example.com');
    expect(
      (await t.request('DELETE', `/w/${a.workspaceId}/invitations/${revoked.body.id}`, { token: a.apiKey }))
        .status,
    ).toBe(200);

    const res = await merge(a.workspaceId, a.apiKey, dup, { targetRoleId: Manager.id });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      sourceRoleId: dup,
      targetRoleId: Manager.id,
      resourceAccess: 'copy',
      memberIds: [holder.memberId, archived.memberId].sort((x, y) => x - y),
      invitationIds: [pending.body.id],
      workspaceDefaultMoved: true,
      targetRole: {
        id: Manager.id,
        name: 'Manager',
        isDefault: true,
        siteAudience: { allSites: false, siteIds: [1, 2] },
        fileAccess: { folders: [{ id: 10, level: 'admin' }], files: [{ id: 5, level: 'write' }] },
      },
    });
    await t.expectEvents(res, [
      {
        type: 'MemberRolesMerged',
        stream: `memberrole-${dup}`,
        data: {
          workspaceId: a.workspaceId,
          sourceRoleId: dup,
          targetRoleId: Manager.id,
          resourceAccess: 'copy',
          memberIds: [holder.memberId, archived.memberId].sort((x, y) => x - y),
          workspaceDefaultMoved: true,
        },
      },
    ]);
    expect(await memberRoleOf(t, holder.memberId)).toBe(Manager.id);
    expect(await memberRoleOf(t, archived.memberId)).toBe(Manager.id);
    const invitations = async (id: string) =>
      (await t.request('GET', `/w/${a.workspaceId}/invitations/${id}`, { token: a.apiKey })).body
        .memberRoleId;
    expect(await invitations(pending.body.id)).toBe(Manager.id);
    expect(await invitations(revoked.body.id)).toBe(dup);
    expect(
      (await t.request('GET', `/w/${a.workspaceId}/member-roles/${dup}`, { token: a.apiKey })).status,
    ).toBe(404);
    expect(
      (await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey })).body.settings.defaultMemberRoleId,
    ).toBe(Manager.id);
    // The moved member acts with the Manager's scopes from the next request on.
    expect((await t.request('GET', `/w/${a.workspaceId}`, { token: b.apiKey })).status).toBe(200);
    // No undo: the duplicate is gone.
    expect((await merge(a.workspaceId, a.apiKey, dup, { targetRoleId: Manager.id })).status).toBe(404);
  });

  it('over HTTP only: POST "manager" beside the built-in Manager, then merge it into Manager with copy', async () => {
    const a = await t.bootstrap();
    const path = `/w/${a.workspaceId}/member-roles`;
    const { Manager } = await builtIns(a.workspaceId, a.apiKey);
    const exact = await t.request('POST', path, {
      token: a.apiKey,
      body: { name: 'Manager', permissions: [] },
    });
    expect(exact.status).toBe(409);
    const dup = await t.request('POST', path, {
      token: a.apiKey,
      body: {
        name: 'manager',
        permissions: ['chats:read'],
        isDefault: true,
        siteAudience: { allSites: false, siteIds: [4] },
        fileAccess: { folders: [], files: [{ id: 8, level: 'read' }] },
      },
    });
    expect(dup.status).toBe(201);
    expect(dup.body).toMatchObject({ name: 'manager', isBuiltIn: false, isDefault: true });
    const inv = await t.request('POST', `/w/${a.workspaceId}/invitations`, {
      token: a.apiKey,
      body: { email: 'old-manager@example.com', memberRoleId: dup.body.id },
    });
    expect(inv.status).toBe(201);

    const res = await merge(a.workspaceId, a.apiKey, dup.body.id, {
      targetRoleId: Manager.id,
      resourceAccess: 'copy',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      sourceRoleId: dup.body.id,
      targetRoleId: Manager.id,
      resourceAccess: 'copy',
      memberIds: [],
      invitationIds: [inv.body.id],
      workspaceDefaultMoved: true,
      targetRole: {
        id: Manager.id,
        name: 'Manager',
        isBuiltIn: true,
        isDefault: true,
        siteAudience: { allSites: false, siteIds: [4] },
        fileAccess: { folders: [], files: [{ id: 8, level: 'read' }] },
      },
    });
    expect((await t.request('GET', `${path}/${dup.body.id}`, { token: a.apiKey })).status).toBe(404);
    expect(
      (await t.request('GET', `/w/${a.workspaceId}/invitations/${inv.body.id}`, { token: a.apiKey })).body
        .memberRoleId,
    ).toBe(Manager.id);
    const names = (await t.request('GET', path, { token: a.apiKey })).body.items.map((r: Role) => r.name);
    expect(names).toEqual(['Manager', 'Platform Support', 'User', 'Agent', 'External']);
  });

  it('merges any custom role into a built-in one: "Coordinators" into User', async () => {
    const a = await t.bootstrap();
    const { User } = await builtIns(a.workspaceId, a.apiKey);
    const coordinators = await t.request('POST', `/w/${a.workspaceId}/member-roles`, {
      token: a.apiKey,
      body: { name: 'Coordinators', permissions: ['chats:read', 'members:read'] },
    });
    expect(coordinators.status).toBe(201);
    const member = await addMember(t, { workspaceId: a.workspaceId, roleId: coordinators.body.id });
    const res = await merge(a.workspaceId, a.apiKey, coordinators.body.id, { targetRoleId: User.id });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      sourceRoleId: coordinators.body.id,
      targetRoleId: User.id,
      resourceAccess: 'copy',
      memberIds: [member.memberId],
      targetRole: { id: User.id, name: 'User' },
    });
    expect(await memberRoleOf(t, member.memberId)).toBe(User.id);
  });

  it("merges with discard: the duplicate's access is dropped, the target's kept", async () => {
    const a = await t.bootstrap();
    const { User } = await builtIns(a.workspaceId, a.apiKey);
    const dup = await t.request('POST', `/w/${a.workspaceId}/member-roles`, {
      token: a.apiKey,
      body: {
        name: 'Members',
        permissions: ['chats:read'],
        siteAudience: { allSites: true, siteIds: [] },
        fileAccess: { folders: [{ id: 3, level: 'write' }], files: [] },
      },
    });
    expect(dup.status).toBe(201);
    const member = await addMember(t, { workspaceId: a.workspaceId, roleId: dup.body.id });
    const res = await merge(a.workspaceId, a.apiKey, dup.body.id, {
      targetRoleId: User.id,
      resourceAccess: 'discard',
    });
    expect(res.status).toBe(200);
    expect(res.body.targetRole).toMatchObject({
      siteAudience: { allSites: false, siteIds: [] },
      fileAccess: { folders: [], files: [] },
    });
    await t.expectEvents(res, [
      {
        type: 'MemberRolesMerged',
        data: { resourceAccess: 'discard', memberIds: [member.memberId], workspaceDefaultMoved: false },
      },
    ]);
    expect(await memberRoleOf(t, member.memberId)).toBe(User.id);
    const names = (
      await t.request('GET', `/w/${a.workspaceId}/member-roles`, { token: a.apiKey })
    ).body.items.map((r: Role) => r.name);
    expect(names).not.toContain('Members');
  });

  it('merges agent duplicates into the Agent role', async () => {
    const a = await t.bootstrap();
    const { Agent } = await builtIns(a.workspaceId, a.apiKey);
    const dup = await addLegacyRole(t, a.workspaceId, 'Bots');
    const bot = await addMember(t, {
      workspaceId: a.workspaceId,
      roleId: dup,
      kind: 'agent',
      account: false,
    });
    const res = await merge(a.workspaceId, a.apiKey, dup, { targetRoleId: Agent.id });
    expect(res.status).toBe(200);
    expect(await memberRoleOf(t, bot.memberId)).toBe(Agent.id);
  });

  describe('refusals reassign nothing and record nothing', () => {
    async function expectRefused(
      res: TestResponse,
      status: number,
      detail: RegExp,
      memberIds: number[],
      sourceId: number,
      wid: string,
      token: string,
    ) {
      expect(res.status).toBe(status);
      expect(res.body.detail).toMatch(detail);
      expect(await t.eventsOf(res)).toEqual([]);
      for (const id of memberIds) expect(await memberRoleOf(t, id)).toBe(sourceId);
      expect((await t.request('GET', `/w/${wid}/member-roles/${sourceId}`, { token })).status).toBe(200);
    }

    it('onto Manager or User while a human member (archived included) has no Account', async () => {
      const a = await t.bootstrap();
      const { Manager, User } = await builtIns(a.workspaceId, a.apiKey);
      const dupManager = await addLegacyRole(t, a.workspaceId, 'Administrators');
      const withAccount = await addMember(t, { workspaceId: a.workspaceId, roleId: dupManager });
      const archivedNoAccount = await addMember(t, {
        workspaceId: a.workspaceId,
        roleId: dupManager,
        account: false,
        archived: true,
      });
      await expectRefused(
        await merge(a.workspaceId, a.apiKey, dupManager, { targetRoleId: Manager.id }),
        400,
        new RegExp(
          `onto Manager every human member .*must have an Account; 1 \\(member id ${archivedNoAccount.memberId}\\)`,
        ),
        [withAccount.memberId, archivedNoAccount.memberId],
        dupManager,
        a.workspaceId,
        a.apiKey,
      );
      const dupUser = await addLegacyRole(t, a.workspaceId, 'user');
      const noAccount = await addMember(t, { workspaceId: a.workspaceId, roleId: dupUser, account: false });
      await expectRefused(
        await merge(a.workspaceId, a.apiKey, dupUser, { targetRoleId: User.id }),
        400,
        /onto User every human member/,
        [noAccount.memberId],
        dupUser,
        a.workspaceId,
        a.apiKey,
      );
    });

    it('pairing an agent member with a human role, or a person with the Agent role, naming the direction', async () => {
      const a = await t.bootstrap();
      const { Manager, Agent } = await builtIns(a.workspaceId, a.apiKey);
      const dupManager = await addLegacyRole(t, a.workspaceId, 'manager');
      const person = await addMember(t, { workspaceId: a.workspaceId, roleId: dupManager });
      const bot = await addMember(t, {
        workspaceId: a.workspaceId,
        roleId: dupManager,
        kind: 'agent',
        account: false,
      });
      await expectRefused(
        await merge(a.workspaceId, a.apiKey, dupManager, { targetRoleId: Manager.id }),
        400,
        /would give a human role to an agent member/,
        [person.memberId, bot.memberId],
        dupManager,
        a.workspaceId,
        a.apiKey,
      );
      const dupAgentInvited = await addLegacyRole(t, a.workspaceId, 'AI agents');
      // An invitation is accepted by a person: moving it onto Agent is the same refusal.
      const inv = await t.request('POST', `/w/${a.workspaceId}/invitations`, {
        token: a.apiKey,
        body: { email: 'x@example.com', memberRoleId: dupAgentInvited },
      });
      expect(inv.status).toBe(201);
      await expectRefused(
        await merge(a.workspaceId, a.apiKey, dupAgentInvited, { targetRoleId: Agent.id }),
        400,
        /would give the Agent role to a person \(1 unclaimed invitation/,
        [],
        dupAgentInvited,
        a.workspaceId,
        a.apiKey,
      );
      const dupAgent = await addLegacyRole(t, a.workspaceId, 'agents');
      const human = await addMember(t, { workspaceId: a.workspaceId, roleId: dupAgent });
      await expectRefused(
        await merge(a.workspaceId, a.apiKey, dupAgent, { targetRoleId: Agent.id }),
        400,
        /would give the Agent role to a person/,
        [human.memberId],
        dupAgent,
        a.workspaceId,
        a.apiKey,
      );
    });

    it('custom or foreign targets, built-in sources, Platform Support, bad bodies', async () => {
      const a = await t.bootstrap();
      const b = await t.bootstrap();
      const { Manager, User, 'Platform Support': support } = await builtIns(a.workspaceId, a.apiKey);
      const bManager = (await builtIns(b.workspaceId, b.apiKey)).Manager;
      const sales = (
        await t.request('POST', `/w/${a.workspaceId}/member-roles`, {
          token: a.apiKey,
          body: { name: 'Sales', permissions: [] },
        })
      ).body as Role;
      const admin = (
        await t.request('POST', `/w/${a.workspaceId}/member-roles`, {
          token: a.apiKey,
          body: { name: 'Admin', permissions: [] },
        })
      ).body as Role;
      const supportDup = await addLegacyRole(t, a.workspaceId, 'support');
      const member = await addMember(t, { workspaceId: a.workspaceId, roleId: admin.id });
      const cases: [Record<string, unknown>, number, number, RegExp][] = [
        [{ targetRoleId: sales.id }, admin.id, 400, /^targetRoleId: must be a built-in role/],
        [
          { targetRoleId: bManager.id },
          admin.id,
          400,
          /^targetRoleId: no role with this id in this workspace/,
        ],
        [{ targetRoleId: Manager.id }, User.id, 400, /^roleId: User is a built-in role/],
        [
          { targetRoleId: support.id },
          supportDup,
          403,
          /^targetRoleId: Platform Support is assigned by support staff only/,
        ],
        [{ targetRoleId: Manager.id, resourceAccess: 'keep' }, admin.id, 400, /^resourceAccess/],
        [{}, admin.id, 400, /^targetRoleId/],
        [{ targetRoleId: 0 }, admin.id, 400, /^targetRoleId/],
        [{ targetRoleId: 'abc' }, admin.id, 400, /^targetRoleId/],
      ];
      for (const [body, source, status, detail] of cases) {
        const res = await merge(a.workspaceId, a.apiKey, source, body);
        expect({ body, status: res.status, detail: res.body.detail }).toEqual({
          body,
          status,
          detail: expect.stringMatching(detail),
        });
        expect(await t.eventsOf(res)).toEqual([]);
      }
      expect(await memberRoleOf(t, member.memberId)).toBe(admin.id);
    });
  });
});
