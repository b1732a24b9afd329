import { startTestApp, TestApp } from '../support/app';

describe('bootstrap member and signup (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('a signup with the bootstrap member’s email finds that member instead of creating another', async () => {
    const a = await t.bootstrap('Acme', 'Founder@Example.com');
    const res = await t.request('POST', `/w/${a.workspaceId}/create-signup`, {
      token: a.apiKey,
      body: { member: { email: 'founder@example.com' } },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      wasCreated: false,
      member: { id: a.memberId, email: 'founder@example.com' },
    });
    const list = await t.request('GET', `/w/${a.workspaceId}/members?email=founder@example.com`, {
      token: a.apiKey,
    });
    expect(list.body.total).toBe(1);
  });
});
