import { startTestApp, TestApp } from '../support/app';

/**
 * Every workspace-scoped route, found in the OpenAPI document (so routes added later are
 * covered too): a principal of workspace A gets 404 for workspace B, whatever the method
 * and the other path parameters. Feature specs check B's resources under A's path.
 */
describe('tenant isolation over every workspace route (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('answers 404 with a detail, and appends nothing, for a workspace the caller is not a member of', async () => {
    const a = await t.bootstrap('A');
    const b = await t.bootstrap('B');
    const doc = await t.request('GET', '/openapi.json');
    const operations: [string, string][] = [];
    for (const [path, item] of Object.entries(doc.body.paths as Record<string, Record<string, unknown>>)) {
      if (!path.includes('{wid}')) continue;
      for (const method of Object.keys(item)) operations.push([method.toUpperCase(), path]);
    }
    expect(operations.length).toBeGreaterThan(20);
    for (const [method, path] of operations) {
      const url = path
        .replace(/^\/api\/v2/, '')
        .replace('{wid}', b.workspaceId)
        .replace(/\{[^}]+\}/g, '1');
      const res = await t.request(method, url, {
        token: a.apiKey,
        body: ['POST', 'PUT', 'PATCH'].includes(method) ? {} : undefined,
      });
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 });
      expect(typeof res.body.detail).toBe('string');
      expect(await t.eventsOf(res)).toEqual([]);
    }
  });
});
