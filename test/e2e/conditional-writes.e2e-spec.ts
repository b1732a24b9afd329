import { startTestApp, TestApp } from '../support/app';

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
});
