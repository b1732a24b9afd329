import { startTestApp, TestApp } from '../support/app';

/**
 * Toolkit slugs are core claims: on EventStoreDB (its in-process stand-in, over the real
 * client) they are claim streams taken with 'no_stream', with the same single winner; a
 * toolkit's tools live on its own stream there too.
 */
describe('custom toolkits on EventStoreDB (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ eventStoreDb: true });
  });
  afterAll(() => t.close());

  it('one winner for a slug, a new slug frees the old, and a delete takes the tools along', async () => {
    const a = await t.bootstrap();
    const path = `/w/${a.workspaceId}/custom-toolkits`;
    const create = (slug: string) =>
      t.request('POST', path, { token: a.apiKey, body: { name: 'Kit', slug } });
    const same = await Promise.all(Array.from({ length: 8 }, () => create('kit')));
    expect(same.map((r) => r.status).sort()).toEqual([201, ...Array(7).fill(409)]);
    const winner = same.find((r) => r.status === 201)!.body as { id: number };
    for (const r of same.filter((x) => x.status === 409)) {
      expect(r.body.detail).toBe(
        `slug: custom toolkit ${winner.id} of this workspace already has the slug "kit"`,
      );
      expect(await t.eventsOf(r)).toEqual([]);
    }

    const moved = await t.request('PUT', `${path}/${winner.id}`, {
      token: a.apiKey,
      body: { slug: 'kit-2' },
    });
    expect(moved.status).toBe(200);
    expect((await create('kit')).status).toBe(201);
    expect((await create('kit-2')).status).toBe(409);

    const tool = await t.request('POST', `${path}/${winner.id}/tools`, {
      token: a.apiKey,
      body: { name: 'lookup', inputSchema: { type: 'object', properties: { id: { type: 'integer' } } } },
    });
    expect(tool.status).toBe(201);
    const del = await t.request('DELETE', `${path}/${winner.id}`, { token: a.apiKey });
    expect(del.status).toBe(204);
    await t.expectEvents(del, [
      { type: 'CustomToolDeleted', stream: `customtoolkit-${winner.id}`, data: { toolId: tool.body.id } },
      { type: 'CustomToolkitDeleted', stream: `customtoolkit-${winner.id}`, data: { slug: 'kit-2' } },
      // EventStoreDB has no multi-stream transaction: the slug's claim stream records the release.
      { type: 'ClaimReleased', stream: /^claim-custom_toolkit_slug-/ },
    ]);
    expect(
      (await t.request('GET', `${path}/${winner.id}/tools/${tool.body.id}`, { token: a.apiKey })).status,
    ).toBe(404);
    expect((await create('kit-2')).status).toBe(201);
  });
});
