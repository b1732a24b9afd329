import { startTestApp, TestApp } from '../support/app';
import { importMembers, signup } from '../support/identity-fixtures';

/**
 * The claim streams rely only on 'no_stream' and exact expected revisions, so the same
 * uniqueness holds on EventStoreDB (here its in-process stand-in, over the real client).
 */
describe('create-signup on EventStoreDB (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ eventStoreDb: true });
  });
  afterAll(() => t.close());

  it('twenty concurrent signups with one email make exactly one member', async () => {
    const a = await t.bootstrap();
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        t.request('POST', `/w/${a.workspaceId}/create-signup`, {
          token: a.apiKey,
          body: { member: { email: 'race@example.com' } },
        }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([...Array(19).fill(200), 201].sort());
    expect(new Set(results.map((r) => r.body.member.id)).size).toBe(1);
    const list = await t.request('GET', `/w/${a.workspaceId}/members?email=race@example.com`, {
      token: a.apiKey,
    });
    expect(list.body.total).toBe(1);
  });

  it('moves claims on update and frees them on archive', async () => {
    const a = await t.bootstrap();
    const ann = await signup(t, a.workspaceId, a.apiKey, { email: 'ann@example.com' });
    const bob = await signup(t, a.workspaceId, a.apiKey, { email: 'bob@example.com' });
    const taken = await t.request('PUT', `/w/${a.workspaceId}/members/${bob.member.id}`, {
      token: a.apiKey,
      body: { email: 'ann@example.com' },
    });
    expect(taken.status).toBe(409);
    const moved = await t.request('PUT', `/w/${a.workspaceId}/members/${ann.member.id}`, {
      token: a.apiKey,
      body: { email: 'ann2@example.com' },
    });
    expect(moved.status).toBe(200);
    expect(
      (
        await t.request('PUT', `/w/${a.workspaceId}/members/${bob.member.id}`, {
          token: a.apiKey,
          body: { email: 'ann@example.com' },
        })
      ).status,
    ).toBe(200);
    expect(
      (await t.request('DELETE', `/w/${a.workspaceId}/members/${bob.member.id}`, { token: a.apiKey })).status,
    ).toBe(200);
    expect((await signup(t, a.workspaceId, a.apiKey, { email: 'ann@example.com' })).wasCreated).toBe(true);
    expect((await t.request('GET', '/me', { token: ann.token })).status).toBe(200);
  });

  it('imports members one by one, since EventStoreDB has no multi-stream write', async () => {
    const a = await t.bootstrap();
    const old = await signup(t, a.workspaceId, a.apiKey, { email: 'old@example.com' });
    const rows = Array.from({ length: 12 }, (_, i) => ({
      email: `esdb${i}@example.com`,
      externalId: `e-${i}`,
    }));
    rows[6] = { email: 'old@example.com', externalId: 'e-6' };
    const res = await importMembers(t, a.workspaceId, a.apiKey, rows);
    expect(res.body).toMatchObject({ totalCount: 12, importedCount: 11 });
    expect(res.body.errors).toEqual([
      {
        index: 6,
        detail: `email: a member with this email already exists (member ${old.member.id}); send upsert: true to update it`,
      },
    ]);
    const created = (await t.eventsOf(res)).filter((e) => e.type === 'MemberCreated');
    expect(created).toHaveLength(11);
    const list = await t.request('GET', `/w/${a.workspaceId}/members?pageSize=1`, { token: a.apiKey });
    expect(list.body.total).toBe(13);
  });
});
