import { startTestApp, TestApp } from '../support/app';

/**
 * A careless client: many SDKs send Content-Type: application/json on every request,
 * DELETE included, with no body. No DELETE takes a body, so that is no body, not a 400
 * "The request body is empty" that blocks the deletion.
 */
describe('DELETE with Content-Type: application/json and no body (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('deletes as without the header; a DELETE with a malformed body is still 400', async () => {
    const a = await t.bootstrap();
    const made = await t.request('POST', '/me/api-keys', {
      token: a.apiKey,
      body: { name: 'to revoke', scopes: ['members:read'] },
    });
    expect(made.status).toBe(201);
    const broken = await t.request('DELETE', `/me/api-keys/${made.body.id}`, {
      token: a.apiKey,
      raw: '{"x":',
    });
    expect({ status: broken.status, detail: broken.body.detail }).toEqual({
      status: 400,
      detail: 'The request body is not valid JSON',
    });
    const res = await t.request('DELETE', `/me/api-keys/${made.body.id}`, {
      token: a.apiKey,
      raw: '',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(204);
    await t.expectEvents(res, [{ type: 'ApiKeyRevoked' }]);
  });

  it('still refuses an empty JSON body where a body is read (PUT)', async () => {
    const a = await t.bootstrap();
    const res = await t.request('PUT', `/w/${a.workspaceId}`, { token: a.apiKey, raw: '' });
    expect({ status: res.status, detail: res.body.detail }).toEqual({
      status: 400,
      detail: 'The request body is empty; send a JSON document',
    });
  });
});
