import { startTestApp, TestApp } from '../support/app';
import { importMembers } from '../support/identity-fixtures';

/**
 * Concurrent member updates: the members projection writes a run of MemberUpdated of
 * distinct members changing the same fields in one statement, and must keep apart what
 * it cannot merge (other fields, a second change of one member).
 */
describe('concurrent member updates (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('concurrent PUTs of many members, the same fields or not, each show their own change and version', async () => {
    const a = await t.bootstrap();
    const imported = await importMembers(
      t,
      a.workspaceId,
      a.apiKey,
      Array.from({ length: 24 }, (_, i) => ({ email: `batch${i}@example.com`, name: `Before ${i}` })),
    );
    expect(imported.status).toBe(200);
    const list = await t.request('GET', `/w/${a.workspaceId}/members?search=batch&pageSize=100`, {
      token: a.apiKey,
    });
    const ids = (list.body.items as { id: number }[]).map((m) => m.id);
    expect(ids).toHaveLength(24);
    // Names for most, a phone and notifySms for some, two changes of one member: runs the
    // projection may write together, and changes it must keep apart.
    const body = (i: number) =>
      i % 6 === 5 ? { phone: `+1415555${String(1000 + i)}`, notifySms: true } : { name: `After ${i}` };
    const responses = await Promise.all([
      ...ids.map((id, i) =>
        t.request('PUT', `/w/${a.workspaceId}/members/${id}`, { token: a.apiKey, body: body(i) }),
      ),
      t.request('PUT', `/w/${a.workspaceId}/members/${ids[0]}`, {
        token: a.apiKey,
        body: { externalId: 'twice' },
      }),
    ]);
    expect(responses.map((r) => r.status)).toEqual(Array(25).fill(200));
    for (const [i, id] of ids.entries()) {
      const got = await t.request('GET', `/w/${a.workspaceId}/members/${id}`, { token: a.apiKey });
      const expected =
        i % 6 === 5
          ? { name: `Before ${i}`, phone: `+1415555${String(1000 + i)}`, notifySms: true }
          : { name: `After ${i}`, notifySms: false };
      expect(got.body).toMatchObject(expected);
      expect(got.headers.get('etag')).toBe(i === 0 ? '"3"' : '"2"');
    }
    const first = await t.request('GET', `/w/${a.workspaceId}/members/${ids[0]}`, { token: a.apiKey });
    expect(first.body).toMatchObject({ name: 'After 0', externalId: 'twice' });
  });
});
