import { startTestApp, TestApp } from '../support/app';

/**
 * Role names are core claims: on EventStoreDB (its in-process stand-in, over the real
 * client) they are claim streams taken with 'no_stream', with the same single winner.
 */
describe('member role names on EventStoreDB (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ eventStoreDb: true });
  });
  afterAll(() => t.close());

  it('twelve concurrent creates of one name make one role; a rename frees the old name', async () => {
    const a = await t.bootstrap();
    const path = `/w/${a.workspaceId}/member-roles`;
    const create = (name: string) =>
      t.request('POST', path, { token: a.apiKey, body: { name, permissions: [] } });
    const same = await Promise.all(Array.from({ length: 12 }, () => create('Dispatch')));
    expect(same.map((r) => r.status).sort()).toEqual([201, ...Array(11).fill(409)]);
    const winner = same.find((r) => r.status === 201)!.body as { id: number };
    for (const r of same.filter((x) => x.status === 409)) {
      expect(r.body.detail).toBe(`name: role ${winner.id} of this workspace is already named "Dispatch"`);
      expect(await t.eventsOf(r)).toEqual([]);
    }
    const list = await t.request('GET', path, { token: a.apiKey });
    expect((list.body.items as { name: string }[]).filter((r) => r.name === 'Dispatch')).toHaveLength(1);

    const renamed = await t.request('PUT', `${path}/${winner.id}`, {
      token: a.apiKey,
      body: { name: 'Dispatch Desk' },
    });
    expect(renamed.status).toBe(200);
    expect((await create('dispatch')).status).toBe(201);
    expect((await create('dispatch desk')).status).toBe(409);
  });
});
