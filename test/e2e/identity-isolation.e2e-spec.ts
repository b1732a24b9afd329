import { startTestApp, TestApp } from '../support/app';
import { builtInRoles, importMembers, signup } from '../support/identity-fixtures';

/**
 * Tenant isolation for every workspace-scoped identity route: a principal of workspace A
 * gets 404 for workspace B, and for B's members and invitations named under A's path.
 */
describe('identity tenant isolation (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('404 for the other workspace and for its resources, with every method and every credential kind', async () => {
    const a = await t.bootstrap();
    const b = await t.bootstrap();
    const rolesA = await builtInRoles(t, a.workspaceId, a.apiKey);
    const rolesB = await builtInRoles(t, b.workspaceId, b.apiKey);
    const annA = await signup(t, a.workspaceId, a.apiKey, { email: 'ann@example.com' });
    const bobB = await signup(t, b.workspaceId, b.apiKey, { email: 'bob@example.com' });
    const invB = await t.request('POST', `/w/${b.workspaceId}/invitations`, {
      token: b.apiKey,
      body: { email: 'inv@example.com', memberRoleId: rolesB.User },
    });
    expect(invB.status).toBe(201);
    const W = a.workspaceId;
    const B = b.workspaceId;

    const routes: [string, string, unknown?][] = [
      // B's workspace, any resource.
      ['POST', `/w/${B}/create-signup`, { member: { email: 'x@example.com' } }],
      ['GET', `/w/${B}/members`],
      ['GET', `/w/${B}/members/${bobB.member.id}`],
      ['PUT', `/w/${B}/members/${bobB.member.id}`, { name: 'X' }],
      ['DELETE', `/w/${B}/members/${bobB.member.id}`],
      ['DELETE', `/w/${B}/members/${bobB.member.id}/tokens`],
      ['POST', `/w/${B}/members/import`, { members: [{ email: 'y@example.com' }] }],
      ['POST', `/w/${B}/invitations`, { email: 'z@example.com', memberRoleId: rolesB.User }],
      ['GET', `/w/${B}/invitations`],
      ['GET', `/w/${B}/invitations/${invB.body.id}`],
      ['DELETE', `/w/${B}/invitations/${invB.body.id}`],
      // B's resources under A's path.
      ['GET', `/w/${W}/members/${bobB.member.id}`],
      ['PUT', `/w/${W}/members/${bobB.member.id}`, { name: 'X' }],
      ['DELETE', `/w/${W}/members/${bobB.member.id}`],
      ['DELETE', `/w/${W}/members/${bobB.member.id}/tokens`],
      ['GET', `/w/${W}/invitations/${invB.body.id}`],
      ['DELETE', `/w/${W}/invitations/${invB.body.id}`],
    ];
    const expect404 = async (token: string, [method, path, body]: [string, string, unknown?]) => {
      const res = await t.request(method, path, { token, body });
      if (res.status !== 404)
        throw new Error(`${method} ${path} answered ${res.status} ${JSON.stringify(res.body)}`);
      expect(await t.eventsOf(res)).toEqual([]);
    };
    for (const route of routes) await expect404(a.apiKey, route);
    // A member token of A: every route under B, and the self-access routes under A's path naming B's member.
    // (Routes it lacks the scope for are 403 whatever the id: that tells nothing about B.)
    for (const route of routes.filter(([, path]) => path.startsWith(`/w/${B}/`)))
      await expect404(annA.token, route);
    for (const route of [
      ['GET', `/w/${W}/members/${bobB.member.id}`],
      ['PUT', `/w/${W}/members/${bobB.member.id}`, { name: 'X' }],
      ['DELETE', `/w/${W}/members/${bobB.member.id}/tokens`],
    ] as [string, string, unknown?][]) {
      await expect404(annA.token, route);
    }
    // Filters never reach into B either.
    const list = await t.request('GET', `/w/${W}/members?email=bob@example.com`, { token: a.apiKey });
    expect(list.body.total).toBe(0);
    const byRole = await t.request('GET', `/w/${W}/members?roleId=${rolesB.User}`, { token: a.apiKey });
    expect(byRole.body.total).toBe(0);

    // Uniqueness is per workspace: B's email is free in A, and the accounts stay apart.
    const sameEmail = await signup(t, W, a.apiKey, { email: 'bob@example.com' });
    expect(sameEmail.wasCreated).toBe(true);
    expect(sameEmail.account.uuid).not.toBe(bobB.account.uuid);
    // B's roles cannot be used in A.
    const foreignRole = await importMembers(t, W, a.apiKey, [{ name: 'X', memberRoleId: rolesB.Manager }]);
    expect(foreignRole.body.errors[0].detail).toMatch(/does not exist in this workspace/);
    expect(rolesA.Manager).not.toBe(rolesB.Manager);

    // B's member untouched.
    const bob = await t.request('GET', `/w/${B}/members/${bobB.member.id}`, { token: b.apiKey });
    expect(bob.body).toMatchObject({ name: null, status: 'active' });
    const inv = await t.request('GET', `/w/${B}/invitations/${invB.body.id}`, { token: b.apiKey });
    expect(inv.body.status).toBe('pending');
    expect((await t.request('GET', '/me', { token: bobB.token })).status).toBe(200);
  });
});
