import { startTestApp, TestApp } from '../support/app';
import { addMember } from '../support/member-fixtures';

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
