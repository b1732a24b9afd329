import { startTestApp, TestApp } from '../support/app';
import { builtInRoles, keyWithScopes, signup } from '../support/identity-fixtures';

/**
 * ETag / If-Match (src/core/http/preconditions.ts): reads carry the resource's version,
 * a write pinned to a version applies only if nothing changed since, else 412 and no event.
 */
describe('conditional writes (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  describe('workspace', () => {
    it('GET and PUT answer an ETag; a PUT with the current one applies, a stale one is 412 and changes nothing', async () => {
      const a = await t.bootstrap();
      const path = `/w/${a.workspaceId}`;
      const first = await t.request('GET', path, { token: a.apiKey });
      const etag = first.headers.get('etag')!;
      expect(etag).toMatch(/^"\d+"$/);

      const put = await t.request('PUT', path, {
        token: a.apiKey,
        headers: { 'if-match': etag },
        body: { name: 'Pinned rename' },
      });
      expect(put.status).toBe(200);
      const newTag = put.headers.get('etag')!;
      expect(newTag).not.toBe(etag);
      expect((await t.request('GET', path, { token: a.apiKey })).headers.get('etag')).toBe(newTag);

      const stale = await t.request('PUT', path, {
        token: a.apiKey,
        headers: { 'if-match': etag },
        body: { name: 'Lost update' },
      });
      expect(stale.status).toBe(412);
      expect(stale.body.detail).toMatch(/^If-Match: the resource has changed since that version/);
      expect(await t.eventsOf(stale)).toEqual([]);
      expect((await t.request('GET', path, { token: a.apiKey })).body.name).toBe('Pinned rename');

      // A list of tags matches if any does; `*` matches any version; no header, as before.
      const listed = await t.request('PUT', path, {
        token: a.apiKey,
        headers: { 'if-match': `"999999", ${newTag}` },
        body: { name: 'Listed' },
      });
      expect(listed.status).toBe(200);
      const any = await t.request('PUT', path, {
        token: a.apiKey,
        headers: { 'if-match': '*' },
        body: { name: 'Any' },
      });
      expect(any.status).toBe(200);
    });

    it('refuses a malformed or weak If-Match with 400', async () => {
      const a = await t.bootstrap();
      for (const header of ['3', 'W/"3"', '"abc"', '']) {
        const res = await t.request('PUT', `/w/${a.workspaceId}`, {
          token: a.apiKey,
          headers: { 'if-match': header },
          body: { name: 'Never' },
        });
        expect({ header, status: res.status }).toEqual({ header, status: 400 });
        expect(res.body.detail).toMatch(/^If-Match: /);
      }
      expect((await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey })).body.name).not.toBe(
        'Never',
      );
    });

    it('of concurrent writes pinned to one version, exactly one applies', async () => {
      const a = await t.bootstrap();
      const etag = (await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey })).headers.get('etag')!;
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          t.request('PUT', `/w/${a.workspaceId}`, {
            token: a.apiKey,
            headers: { 'if-match': etag },
            body: { name: `Writer ${i}` },
          }),
        ),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 412, 412, 412, 412, 412]);
      const winner = results.findIndex((r) => r.status === 200);
      expect((await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey })).body.name).toBe(
        `Writer ${winner}`,
      );
    });
  });

  describe('member', () => {
    it('GET, PUT and DELETE honour the member ETag; stale is 412 and changes nothing', async () => {
      const a = await t.bootstrap();
      const { member } = await signup(t, a.workspaceId, a.apiKey, { email: 'etag@example.com', name: 'E' });
      const path = `/w/${a.workspaceId}/members/${member.id}`;
      const etag = (await t.request('GET', path, { token: a.apiKey })).headers.get('etag')!;
      expect(etag).toMatch(/^"\d+"$/);

      const put = await t.request('PUT', path, {
        token: a.apiKey,
        headers: { 'if-match': etag },
        body: { name: 'E two' },
      });
      expect(put.status).toBe(200);
      const current = put.headers.get('etag')!;
      expect(current).not.toBe(etag);
      expect((await t.request('GET', path, { token: a.apiKey })).headers.get('etag')).toBe(current);

      for (const [method, body] of [
        ['PUT', { name: 'Lost' }],
        ['DELETE', undefined],
      ] as const) {
        const stale = await t.request(method, path, { token: a.apiKey, headers: { 'if-match': etag }, body });
        expect({ method, status: stale.status }).toEqual({ method, status: 412 });
        expect(stale.body.detail).toMatch(/^If-Match: /);
        expect(await t.eventsOf(stale)).toEqual([]);
      }
      expect((await t.request('GET', path, { token: a.apiKey })).body).toMatchObject({
        name: 'E two',
        status: 'active',
      });

      const archived = await t.request('DELETE', path, { token: a.apiKey, headers: { 'if-match': current } });
      expect(archived.status).toBe(200);
      expect(archived.body.status).toBe('archived');
      expect(archived.headers.get('etag')).not.toBe(current);
    });

    it('a role merge that moves the member changes its ETag, so a write pinned before it is 412', async () => {
      const a = await t.bootstrap();
      const { User } = await builtInRoles(t, a.workspaceId, a.apiKey);
      const dup = await t.request('POST', `/w/${a.workspaceId}/member-roles`, {
        token: a.apiKey,
        body: { name: 'Members', permissions: ['chats:read'] },
      });
      const { member } = await signup(t, a.workspaceId, a.apiKey, { email: 'moved@example.com' });
      const path = `/w/${a.workspaceId}/members/${member.id}`;
      await t.request('PUT', path, { token: a.apiKey, body: { memberRoleId: dup.body.id } });
      const before = (await t.request('GET', path, { token: a.apiKey })).headers.get('etag')!;

      const merged = await t.request('POST', `/w/${a.workspaceId}/member-roles/${dup.body.id}/merge`, {
        token: a.apiKey,
        body: { targetRoleId: User },
      });
      expect(merged.status).toBe(200);
      const after = await t.request('GET', path, { token: a.apiKey });
      expect(after.body.memberRoleId).toBe(User);
      expect(after.headers.get('etag')).not.toBe(before);
      const stale = await t.request('PUT', path, {
        token: a.apiKey,
        headers: { 'if-match': before },
        body: { name: 'Too late' },
      });
      expect(stale.status).toBe(412);
    });

    it('checks permission before the version: no 412 for a caller who may not write', async () => {
      const a = await t.bootstrap();
      const { member } = await signup(t, a.workspaceId, a.apiKey, { email: 'perm@example.com' });
      const reader = await keyWithScopes(t, a.apiKey, ['members:read']);
      const res = await t.request('PUT', `/w/${a.workspaceId}/members/${member.id}`, {
        token: reader,
        headers: { 'if-match': '"999"' },
        body: { name: 'No' },
      });
      expect(res.status).toBe(403);
      const other = await t.bootstrap();
      const foreign = await t.request('PUT', `/w/${other.workspaceId}/members/${member.id}`, {
        token: other.apiKey,
        headers: { 'if-match': '"1"' },
        body: { name: 'No' },
      });
      expect(foreign.status).toBe(404);
    });
  });
});
