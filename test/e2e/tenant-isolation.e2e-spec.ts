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
    const operations: [string, string, boolean][] = [];
    type Operation = { requestBody?: { content?: Record<string, unknown> } };
    for (const [path, item] of Object.entries(doc.body.paths as Record<string, Record<string, Operation>>)) {
      if (!path.includes('{wid}')) continue;
      for (const [method, op] of Object.entries(item)) {
        const multipart = Boolean(op.requestBody?.content?.['multipart/form-data']);
        operations.push([method.toUpperCase(), path, multipart]);
      }
    }
    expect(operations.length).toBeGreaterThan(20);
    // An upload route reads multipart only (anything else is 415 before any body is read,
    // which says nothing of the workspace): it gets a well-formed upload.
    const boundary = 'tenant-isolation';
    const upload = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--${boundary}--\r\n`;
    for (const [method, path, multipart] of operations) {
      const url = path
        .replace(/^\/api\/v2/, '')
        .replace('{wid}', b.workspaceId)
        .replace(/\{[^}]+\}/g, '1');
      const res = await t.request(
        method,
        url,
        multipart
          ? {
              token: a.apiKey,
              raw: upload,
              headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
            }
          : { token: a.apiKey, body: ['POST', 'PUT', 'PATCH'].includes(method) ? {} : undefined },
      );
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 });
      expect(typeof res.body.detail).toBe('string');
      expect(await t.eventsOf(res)).toEqual([]);
    }
  });
});
