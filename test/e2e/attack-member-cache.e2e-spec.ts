import { builtInRoles, keyWithScopes, signup } from '../support/identity-fixtures';
import { startTestApp, TestApp } from '../support/app';
import { mcpSession } from '../support/mcp-client';

type ToolResult = { isError?: boolean; structuredContent?: any; content: { type: string; text?: string }[] };
interface Member {
  id: number;
  name: string | null;
  externalId: string | null;
  memberRoleId: number;
}
interface Page {
  items: Member[];
  total: number;
  page: number;
  pageSize: number;
}

/**
 * Attack on the member list's kept pages in one process, through REST and through the MCP
 * tool members.search (the same query handler, so the same kept pages): a narrower caller
 * never gets a wider caller's page, and each write's events are in the very next list.
 */
describe('Attack: member list kept pages, REST and MCP (e2e)', () => {
  let t: TestApp;
  let wid: string;
  let apiKey: string;
  let otherWid: string;
  let otherKey: string;

  beforeAll(async () => {
    t = await startTestApp();
    ({ workspaceId: wid, apiKey } = await t.bootstrap('Kept', 'kept@example.com'));
    ({ workspaceId: otherWid, apiKey: otherKey } = await t.bootstrap('Neighbour', 'neighbour@example.com'));
  });
  afterAll(() => t.close());

  const list = async (token: string, query = '', workspace = wid): Promise<Page> => {
    const res = await t.request<Page>('GET', `/w/${workspace}/members${query}`, { token });
    expect(res.status).toBe(200);
    return res.body;
  };
  const search = async (token: string, args: Record<string, unknown>) => {
    const s = await mcpSession(t, token);
    try {
      return (await s.client.callTool({
        name: 'members.search',
        arguments: { workspaceId: wid, ...args },
      })) as ToolResult;
    } finally {
      await s.close();
    }
  };

  it('members.search gives a narrow key its own page, never the admin page kept beside it', async () => {
    const imported = await t.request('POST', `/w/${wid}/members/import`, {
      token: apiKey,
      body: { members: [{ externalId: 'ghost-1' }, { name: 'Visible', email: 'visible@example.com' }] },
    });
    expect(imported.status).toBe(200);
    // One MemberCreated per row (each its own stream, appended in no fixed order between them).
    const events = await t.eventsOf(imported);
    expect(events.map((e) => e.type)).toEqual(['MemberCreated', 'MemberCreated']);
    expect(events.map((e) => e.data)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ externalId: null, name: 'Visible', email: 'visible@example.com' }),
        expect.objectContaining({ externalId: 'ghost-1', name: null, email: null, phone: null }),
      ]),
    );
    // The admin's page, by REST and by MCP (one kept page: the same query).
    const admin = await list(apiKey);
    expect(admin.items.map((m) => m.externalId)).toContain('ghost-1');
    const viaTool = await search(apiKey, {});
    expect(viaTool.isError).toBeFalsy();
    expect(viaTool.structuredContent).toEqual(admin);

    const reader = await keyWithScopes(t, apiKey, ['members:read']);
    const narrow = await search(reader, {});
    expect(narrow.isError).toBeFalsy();
    expect(narrow.structuredContent.items.map((m: Member) => m.externalId)).not.toContain('ghost-1');
    expect(narrow.structuredContent.total).toBe(admin.total - 1);
    expect(await list(reader)).toEqual(narrow.structuredContent);
    // Searching for the hidden contact (search covers external ids) finds nothing for the reader.
    expect((await search(reader, { search: 'ghost' })).structuredContent).toMatchObject({
      total: 0,
      items: [],
    });
    expect((await search(apiKey, { search: 'ghost' })).structuredContent).toMatchObject({ total: 1 });
    expect(await list(reader, '?search=ghost')).toMatchObject({ total: 0, items: [] });

    // No members:read: the tool refuses, whatever pages are kept.
    const noRead = await keyWithScopes(t, apiKey, ['records:read']);
    const refused = await search(noRead, {});
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toBeUndefined();
    // Another workspace's id: this key gets none of its members, by tool or by route.
    await list(otherKey, '', otherWid);
    const foreign = await search(apiKey, { workspaceId: otherWid });
    expect(foreign.isError).toBe(true);
    expect(foreign.structuredContent).toBeUndefined();
    const crossed = await t.request('GET', `/w/${otherWid}/members`, { token: apiKey });
    expect([403, 404]).toContain(crossed.status);
    expect(crossed.body).not.toHaveProperty('items');
  });

  it('a member token (no scopes but its own) lists nothing, and a revoked one is refused at once', async () => {
    const person = await signup(t, wid, apiKey, { name: 'Token Holder', email: 'holder@example.com' });
    const own = await t.request('GET', `/w/${wid}/members/${person.member.id}`, { token: person.token });
    expect(own.status).toBe(200);
    const listed = await t.request('GET', `/w/${wid}/members`, { token: person.token });
    expect(listed.status).toBe(403);
    expect(listed.body.detail).toMatch(/members:read/);
    // The MCP endpoint takes no member token at all.
    await expect(search(person.token, {})).rejects.toThrow(/member token/);

    const revoked = await t.request('DELETE', `/w/${wid}/members/${person.member.id}/tokens`, {
      token: apiKey,
    });
    expect([200, 204]).toContain(revoked.status);
    await t.expectEvents(revoked, [{ type: 'MemberTokensRevoked', data: { memberId: person.member.id } }]);
    const after = await t.request('GET', `/w/${wid}/members/${person.member.id}`, { token: person.token });
    expect(after.status).toBe(401);
  });

  it('each write’s events are in the very next list, by REST and by MCP', async () => {
    const roles = await builtInRoles(t, wid, apiKey);
    const warm = async () => [
      await list(apiKey, '?search=zqkept'),
      (await search(apiKey, { search: 'zqkept' })).structuredContent,
    ];
    expect((await warm()).map((p) => p.total)).toEqual([0, 0]);

    const created = await signup(t, wid, apiKey, { name: 'Zqkept Fresh', email: 'zqkept-fresh@example.com' });
    for (const page of await warm()) expect(page.items.map((m: Member) => m.id)).toEqual([created.member.id]);

    const renamed = await t.request('PUT', `/w/${wid}/members/${created.member.id}`, {
      token: apiKey,
      body: { name: 'Zqkept Renamed', memberRoleId: roles.External },
    });
    expect(renamed.status).toBe(200);
    await t.expectEvents(renamed, [
      {
        type: 'MemberUpdated',
        data: {
          memberId: created.member.id,
          changes: { name: 'Zqkept Renamed', memberRoleId: roles.External },
        },
      },
    ]);
    for (const page of await warm())
      expect(page.items).toEqual([
        expect.objectContaining({ name: 'Zqkept Renamed', memberRoleId: roles.External }),
      ]);

    const archived = await t.request('DELETE', `/w/${wid}/members/${created.member.id}`, { token: apiKey });
    expect(archived.status).toBe(200);
    await t.expectEvents(archived, [{ type: 'MemberArchived', data: { memberId: created.member.id } }]);
    for (const page of await warm()) expect(page).toMatchObject({ items: [], total: 0 });
    expect((await list(apiKey, '?search=zqkept&status=archived')).items).toEqual([
      expect.objectContaining({ id: created.member.id, status: 'archived' }),
    ]);
    // The tool takes the route's filters, not only its page: archived is asked for and answered.
    const tool = await search(apiKey, { search: 'zqkept', status: 'archived' });
    expect(tool.structuredContent.items).toEqual([
      expect.objectContaining({ id: created.member.id, status: 'archived' }),
    ]);
    const byRole = await search(apiKey, { status: 'all', roleId: roles.External, search: 'zqkept' });
    expect(byRole.structuredContent.items.map((m: Member) => m.id)).toEqual([created.member.id]);
    const byOtherRole = await search(apiKey, { status: 'all', roleId: roles.Manager, search: 'zqkept' });
    expect(byOtherRole.structuredContent).toMatchObject({ items: [], total: 0 });
  });

  it('two anonymous readers each see themselves, never the page kept for the other', async () => {
    const readers = await t.request<{ id: number }>('POST', `/w/${wid}/member-roles`, {
      token: apiKey,
      body: { name: 'Plain readers', permissions: ['members:read'] },
    });
    expect(readers.status).toBe(201);
    const join = async (email: string) => {
      const person = await t.bootstrap(`Home of ${email}`, email);
      const invited = await t.request('POST', `/w/${wid}/invitations`, {
        token: apiKey,
        body: { email, memberRoleId: readers.body.id },
      });
      expect(invited.status).toBe(201);
      const accepted = await t.request('POST', `/me/invitations/${invited.body.id as string}/accept`, {
        token: person.apiKey,
      });
      expect(accepted.status).toBe(200);
      const memberId = (accepted.body.member as { id: number }).id;
      // Stripped of all a list shows of it: anonymous, seen only by members:admin and itself.
      const stripped = await t.request('PUT', `/w/${wid}/members/${memberId}`, {
        token: apiKey,
        body: { email: null, name: null, phone: null },
      });
      expect(stripped.status).toBe(200);
      await t.expectEvents(stripped, [
        { type: 'MemberUpdated', data: { memberId, changes: { email: null } } },
      ]);
      return { key: person.apiKey, memberId };
    };
    const one = await join('anon-one@example.com');
    const two = await join('anon-two@example.com');
    const ids = async (key: string, query = '') => (await list(key, query)).items.map((m) => m.id);
    for (let round = 0; round < 2; round++) {
      expect(await ids(one.key)).toContain(one.memberId);
      expect(await ids(one.key)).not.toContain(two.memberId);
      expect(await ids(two.key)).toContain(two.memberId);
      expect(await ids(two.key)).not.toContain(one.memberId);
      expect(await ids(two.key, '?pageSize=1000')).not.toContain(one.memberId);
      const viaTool = await search(two.key, {});
      expect(viaTool.structuredContent.items.map((m: Member) => m.id)).not.toContain(one.memberId);
    }
    // The admin sees both.
    expect(await ids(apiKey, '?pageSize=1000')).toEqual(expect.arrayContaining([one.memberId, two.memberId]));
  });

  it('a member token’s own edit (PUT /me) is in the very next list', async () => {
    const person = await signup(t, wid, apiKey, { name: 'Zqself Before', email: 'zqself@example.com' });
    expect((await list(apiKey, '?search=zqself')).items.map((m) => m.name)).toEqual(['Zqself Before']);
    const edited = await t.request('PUT', '/me', { token: person.token, body: { name: 'Zqself After' } });
    expect(edited.status).toBe(200);
    await t.expectEvents(edited, [
      { type: 'MemberUpdated', data: { memberId: person.member.id, changes: { name: 'Zqself After' } } },
    ]);
    expect((await list(apiKey, '?search=zqself')).items.map((m) => m.name)).toEqual(['Zqself After']);
  });

  it('bad tool arguments are refused with a message and no page', async () => {
    for (const args of [
      { pageSize: 1001 },
      { pageSize: 0 },
      { page: 0 },
      { page: 'abc' },
      { status: 'deleted' },
      { roleId: 'x' },
    ]) {
      const r = await search(apiKey, args);
      expect({ args, isError: r.isError }).toEqual({ args, isError: true });
      expect(r.content[0].text).toEqual(expect.any(String));
      expect(r.structuredContent).toBeUndefined();
    }
  });
});
