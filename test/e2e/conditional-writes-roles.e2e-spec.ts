import { CommandBus } from '@nestjs/cqrs';
import { PreconditionFailedError } from '../../src/core/http/domain-errors';
import { DeleteMemberRoleCommand } from '../../src/modules/roles/commands/delete-member-role.command';
import { UpdateMemberRoleCommand } from '../../src/modules/roles/commands/update-member-role.command';
import { startTestApp, TestApp } from '../support/app';
import { builtInRoles, customRole } from '../support/identity-fixtures';
import { addLegacyRole } from '../support/member-fixtures';

/**
 * ETag / If-Match on member roles (src/core/http/preconditions.ts): GET and PUT carry the
 * role's version; PUT and DELETE pinned to a version apply only if nothing changed since,
 * else 412 and no event. A merge changes its target from another stream, so it moves the
 * target's ETag too.
 */
describe('conditional writes on member roles (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const rolePath = (wid: string, roleId: number) => `/w/${wid}/member-roles/${roleId}`;
  const etagOf = async (wid: string, token: string, roleId: number): Promise<string> => {
    const res = await t.request('GET', rolePath(wid, roleId), { token });
    expect(res.status).toBe(200);
    return res.headers.get('etag')!;
  };

  it('GET and PUT answer an ETag; a PUT with the current one applies, stale PUT and DELETE are 412 and change nothing', async () => {
    const a = await t.bootstrap();
    const roleId = await customRole(t, a.workspaceId, a.apiKey, 'Dispatch', ['dm:read']);
    const path = rolePath(a.workspaceId, roleId);
    const first = await t.request('GET', path, { token: a.apiKey });
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"\d+"$/);
    expect(first.body).not.toHaveProperty('version');

    const put = await t.request('PUT', path, {
      token: a.apiKey,
      headers: { 'if-match': etag },
      body: { name: 'Dispatch desk', permissions: ['dm:read', 'dm:write'] },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      id: roleId,
      name: 'Dispatch desk',
      permissions: ['dm:read', 'dm:write'],
    });
    const newTag = put.headers.get('etag')!;
    expect(newTag).toMatch(/^"\d+"$/);
    expect(newTag).not.toBe(etag);
    expect(await etagOf(a.workspaceId, a.apiKey, roleId)).toBe(newTag);

    const stalePut = await t.request('PUT', path, {
      token: a.apiKey,
      headers: { 'if-match': etag },
      body: { name: 'Lost update', siteAudience: { allSites: true, siteIds: [] } },
    });
    expect(stalePut.status).toBe(412);
    expect(stalePut.body.detail).toMatch(/^If-Match:/);
    expect(await t.eventsOf(stalePut)).toEqual([]);

    const staleDelete = await t.request('DELETE', path, { token: a.apiKey, headers: { 'if-match': etag } });
    expect(staleDelete.status).toBe(412);
    expect(staleDelete.body.detail).toMatch(/^If-Match:/);
    expect(await t.eventsOf(staleDelete)).toEqual([]);

    const after = await t.request('GET', path, { token: a.apiKey });
    expect(after.status).toBe(200);
    expect(after.headers.get('etag')).toBe(newTag);
    expect(after.body).toMatchObject({
      name: 'Dispatch desk',
      permissions: ['dm:read', 'dm:write'],
      siteAudience: { allSites: false, siteIds: [] },
    });

    // A list of tags matches if any does; a DELETE with the current one applies.
    const deleted = await t.request('DELETE', path, {
      token: a.apiKey,
      headers: { 'if-match': `"999999", ${newTag}` },
    });
    expect(deleted.status).toBe(204);
    await t.expectEvents(deleted, [{ type: 'MemberRoleDeleted', stream: `memberrole-${roleId}` }]);
    expect((await t.request('GET', path, { token: a.apiKey })).status).toBe(404);
  });

  it('without If-Match, or with `*`, writes apply as before; a malformed If-Match is 400', async () => {
    const a = await t.bootstrap();
    const roleId = await customRole(t, a.workspaceId, a.apiKey, 'Night shift');
    const path = rolePath(a.workspaceId, roleId);
    const v1 = await etagOf(a.workspaceId, a.apiKey, roleId);
    const plain = await t.request('PUT', path, { token: a.apiKey, body: { name: 'Night shift A' } });
    expect(plain.status).toBe(200);
    const v2 = plain.headers.get('etag')!;
    expect(v2).not.toBe(v1);
    const any = await t.request('PUT', path, {
      token: a.apiKey,
      headers: { 'if-match': '*' },
      body: { name: 'Night shift B' },
    });
    expect(any.status).toBe(200);
    expect(any.headers.get('etag')).not.toBe(v2);

    for (const header of ['3', 'W/"3"', '"abc"']) {
      const put = await t.request('PUT', path, {
        token: a.apiKey,
        headers: { 'if-match': header },
        body: { name: 'Never' },
      });
      expect({ header, status: put.status }).toEqual({ header, status: 400 });
      expect(put.body.detail).toMatch(/^If-Match: /);
      const del = await t.request('DELETE', path, { token: a.apiKey, headers: { 'if-match': header } });
      expect({ header, status: del.status }).toEqual({ header, status: 400 });
    }
    expect((await t.request('GET', path, { token: a.apiKey })).body.name).toBe('Night shift B');
  });

  it('keeps the built-in role rules and tenant isolation under If-Match', async () => {
    const a = await t.bootstrap();
    const b = await t.bootstrap();
    const { User } = await builtInRoles(t, a.workspaceId, a.apiKey);
    const path = rolePath(a.workspaceId, User);
    const etag = await etagOf(a.workspaceId, a.apiKey, User);

    const rename = await t.request('PUT', path, {
      token: a.apiKey,
      headers: { 'if-match': etag },
      body: { name: 'Staff' },
    });
    expect(rename.status).toBe(400);
    const remove = await t.request('DELETE', path, { token: a.apiKey, headers: { 'if-match': etag } });
    expect(remove.status).toBe(400);
    expect(await etagOf(a.workspaceId, a.apiKey, User)).toBe(etag);

    // Access on a built-in role stays editable, pinned too.
    const access = await t.request('PUT', path, {
      token: a.apiKey,
      headers: { 'if-match': etag },
      body: { siteAudience: { allSites: false, siteIds: [4] } },
    });
    expect(access.status).toBe(200);
    expect(access.body).toMatchObject({ name: 'User', siteAudience: { allSites: false, siteIds: [4] } });
    expect(access.headers.get('etag')).not.toBe(etag);

    // Another workspace's role reads as absent, whatever the tag.
    const foreign = await t.request('PUT', rolePath(b.workspaceId, User), {
      token: b.apiKey,
      headers: { 'if-match': access.headers.get('etag')! },
      body: { siteAudience: { allSites: true, siteIds: [] } },
    });
    expect(foreign.status).toBe(404);
    const foreignDelete = await t.request('DELETE', rolePath(b.workspaceId, User), {
      token: b.apiKey,
      headers: { 'if-match': '*' },
    });
    expect(foreignDelete.status).toBe(404);
  });

  it('of concurrent PUTs pinned to one version, exactly one applies', async () => {
    const a = await t.bootstrap();
    const roleId = await customRole(t, a.workspaceId, a.apiKey, 'Contested');
    const path = rolePath(a.workspaceId, roleId);
    const etag = await etagOf(a.workspaceId, a.apiKey, roleId);
    // Access changes are not serialised by the role-name lock: they race on the append.
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        t.request('PUT', path, {
          token: a.apiKey,
          headers: { 'if-match': etag },
          body: { siteAudience: { allSites: false, siteIds: [i + 1] } },
        }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 412, 412, 412, 412, 412]);
    const winner = results.findIndex((r) => r.status === 200);
    const now = await t.request('GET', path, { token: a.apiKey });
    expect(now.body.siteAudience).toEqual({ allSites: false, siteIds: [winner + 1] });
    expect(now.headers.get('etag')).toBe(results[winner].headers.get('etag'));
    for (const r of results.filter((x) => x.status === 412)) expect(await t.eventsOf(r)).toEqual([]);
  });

  it('commands pinned to a stream revision that moved on are refused (a change not yet projected)', async () => {
    const a = await t.bootstrap();
    const roleId = await customRole(t, a.workspaceId, a.apiKey, 'Pinned');
    const put = await t.request('PUT', rolePath(a.workspaceId, roleId), {
      token: a.apiKey,
      body: { name: 'Pinned 2' },
    });
    expect(put.status).toBe(200);
    // The stream is now at revision 1; a write pinned to revision 0 must fail.
    const commands = t.app.get(CommandBus);
    await expect(
      commands.execute(new UpdateMemberRoleCommand(a.workspaceId, roleId, { name: 'Pinned 3' }, [], 0n)),
    ).rejects.toBeInstanceOf(PreconditionFailedError);
    await expect(
      commands.execute(new DeleteMemberRoleCommand(a.workspaceId, roleId, 0n)),
    ).rejects.toBeInstanceOf(PreconditionFailedError);
    const res = await t.request('GET', rolePath(a.workspaceId, roleId), { token: a.apiKey });
    expect(res.body.name).toBe('Pinned 2');
    // Pinned to the current revision, both apply.
    await commands.execute(new UpdateMemberRoleCommand(a.workspaceId, roleId, { name: 'Pinned 3' }, [], 1n));
    await commands.execute(new DeleteMemberRoleCommand(a.workspaceId, roleId, 2n));
  });

  it('a merge that copies resource access changes the built-in target’s ETag; one that discards it does not', async () => {
    const a = await t.bootstrap();
    const { Manager, User } = await builtInRoles(t, a.workspaceId, a.apiKey);
    const managerTag = await etagOf(a.workspaceId, a.apiKey, Manager);
    const dup = await addLegacyRole(t, a.workspaceId, 'manager');
    expect(
      (
        await t.request('PUT', rolePath(a.workspaceId, dup), {
          token: a.apiKey,
          body: { fileAccess: { folders: [{ id: 7, level: 'read' }], files: [] } },
        })
      ).status,
    ).toBe(200);
    expect(await etagOf(a.workspaceId, a.apiKey, Manager)).toBe(managerTag);

    const merged = await t.request('POST', `/w/${a.workspaceId}/member-roles/${dup}/merge`, {
      token: a.apiKey,
      body: { targetRoleId: Manager },
    });
    expect(merged.status).toBe(200);
    expect(merged.body.targetRole.fileAccess).toEqual({ folders: [{ id: 7, level: 'read' }], files: [] });
    const mergedTag = await etagOf(a.workspaceId, a.apiKey, Manager);
    expect(mergedTag).not.toBe(managerTag);

    // A write pinned to the target as it was before the merge would undo the copy: 412.
    const stale = await t.request('PUT', rolePath(a.workspaceId, Manager), {
      token: a.apiKey,
      headers: { 'if-match': managerTag },
      body: { fileAccess: { folders: [], files: [] } },
    });
    expect(stale.status).toBe(412);
    expect(stale.body.detail).toMatch(/^If-Match:/);
    expect(await t.eventsOf(stale)).toEqual([]);
    const fresh = await t.request('PUT', rolePath(a.workspaceId, Manager), {
      token: a.apiKey,
      headers: { 'if-match': mergedTag },
      body: { fileAccess: { folders: [{ id: 7, level: 'write' }], files: [] } },
    });
    expect(fresh.status).toBe(200);

    // Discarding the duplicate's access leaves the target row, and so its ETag, as it was.
    const userTag = await etagOf(a.workspaceId, a.apiKey, User);
    const dupUser = await addLegacyRole(t, a.workspaceId, 'user');
    const discarded = await t.request('POST', `/w/${a.workspaceId}/member-roles/${dupUser}/merge`, {
      token: a.apiKey,
      body: { targetRoleId: User, resourceAccess: 'discard' },
    });
    expect(discarded.status).toBe(200);
    expect(await etagOf(a.workspaceId, a.apiKey, User)).toBe(userTag);
  });

  it('moving the workspace default changes the ETag of the roles whose isDefault changed', async () => {
    const a = await t.bootstrap();
    const first = await customRole(t, a.workspaceId, a.apiKey, 'First default', ['chats:read']);
    const second = await customRole(t, a.workspaceId, a.apiKey, 'Second default', ['chats:read']);
    const made = await t.request('PUT', rolePath(a.workspaceId, first), {
      token: a.apiKey,
      body: { isDefault: true },
    });
    expect(made.body.isDefault).toBe(true);
    const firstTag = await etagOf(a.workspaceId, a.apiKey, first);
    const moved = await t.request('PUT', rolePath(a.workspaceId, second), {
      token: a.apiKey,
      body: { isDefault: true },
    });
    expect(moved.status).toBe(200);
    const now = await t.request('GET', rolePath(a.workspaceId, first), { token: a.apiKey });
    expect(now.body.isDefault).toBe(false);
    expect(now.headers.get('etag')).not.toBe(firstTag);
    // A write pinned to the version that still showed `isDefault: true` cannot take it back unseen.
    const stale = await t.request('PUT', rolePath(a.workspaceId, first), {
      token: a.apiKey,
      headers: { 'if-match': firstTag },
      body: { isDefault: true },
    });
    expect(stale.status).toBe(412);
    expect(
      (await t.request('GET', rolePath(a.workspaceId, second), { token: a.apiKey })).body.isDefault,
    ).toBe(true);
  });
});
