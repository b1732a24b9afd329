import { startTestApp, TestApp } from '../support/app';
import { importMembers, signup } from '../support/identity-fixtures';

type Row = Record<string, unknown>;

/**
 * An agent member's assistant settings (agentModel, agentInstructions): set on import and
 * PUT, carried in MemberCreated / MemberUpdated, shown in the member representation,
 * refused on persons and when malformed (400 naming the field, nothing appended).
 */
describe('members: agent assistant settings (e2e)', () => {
  let t: TestApp;
  let wid: string;
  let key: string;
  beforeAll(async () => {
    t = await startTestApp();
    ({ workspaceId: wid, apiKey: key } = await t.bootstrap('Agents Clinic'));
  });
  afterAll(() => t.close());

  const get = (id: number) => t.request('GET', `/w/${wid}/members/${id}`, { token: key });
  const put = (id: number, body: unknown) =>
    t.request('PUT', `/w/${wid}/members/${id}`, { token: key, body });
  const memberEvents = async (id: number) => t.store.readStream(`member-${id}`);

  it('imports agents with their settings (one by one and in a batch): MemberCreated carries them, GET and the list show them', async () => {
    const one = await importMembers(t, wid, key, [
      {
        name: 'Nurse Joy',
        kind: 'agent',
        agentModel: ' llama-3.1:8b ',
        agentInstructions: '  Sign as Joy.\nBe brief.  ',
      },
      { name: 'Plain agent', kind: 'agent' },
    ]);
    expect(one.status).toBe(200);
    expect(one.body.errors).toBeNull();
    const [joy, plain] = one.body.results.map((r: { memberId: number }) => r.memberId) as number[];
    const [created] = await memberEvents(joy);
    expect(created.type).toBe('MemberCreated');
    expect(created.data).toMatchObject({
      kind: 'agent',
      agentModel: 'llama-3.1:8b',
      agentInstructions: 'Sign as Joy.\nBe brief.',
    });
    expect((await memberEvents(plain))[0].data).toMatchObject({ agentModel: null, agentInstructions: null });
    expect((await get(joy)).body).toMatchObject({
      kind: 'agent',
      agentModel: 'llama-3.1:8b',
      agentInstructions: 'Sign as Joy.\nBe brief.',
    });
    expect((await get(plain)).body).toMatchObject({ agentModel: null, agentInstructions: null });

    // Eight rows go in one atomic batch (the import's other write path).
    const batch = await importMembers(
      t,
      wid,
      key,
      Array.from({ length: 8 }, (_, i) => ({
        name: `Batch agent ${i}`,
        kind: 'agent',
        agentModel: `model-${i}`,
        agentInstructions: `Instructions ${i}`,
      })),
    );
    expect(batch.body.errors).toBeNull();
    const ids = batch.body.results.map((r: { memberId: number }) => r.memberId) as number[];
    expect((await memberEvents(ids[5]))[0].data).toMatchObject({
      agentModel: 'model-5',
      agentInstructions: 'Instructions 5',
    });
    const list = await t.request('GET', `/w/${wid}/members?search=Batch%20agent&pageSize=50`, { token: key });
    expect(list.status).toBe(200);
    expect((list.body.items as Row[]).map((m) => [m.name, m.agentModel, m.agentInstructions]).sort()).toEqual(
      Array.from({ length: 8 }, (_, i) => [`Batch agent ${i}`, `model-${i}`, `Instructions ${i}`]),
    );
  });

  it('fails an import row that gives a person settings, or malformed ones, naming the field', async () => {
    const person = await signup(t, wid, key, { email: 'upsert-person@example.com', name: 'Pat' });
    const res = await importMembers(t, wid, key, [
      { name: 'P1', kind: 'person', agentModel: 'gpt-4o' },
      { name: 'P2', agentInstructions: 'Be nice' },
      { name: 'A1', kind: 'agent', agentModel: 'has space' },
      { name: 'A2', kind: 'agent', agentInstructions: 'x'.repeat(8_001) },
      { name: 'A3', kind: 'agent', agentModel: 42 },
      { name: 'A4', kind: 'agent', agentModel: 'ok-model' },
    ]);
    expect(res.status).toBe(200);
    expect(res.body.errors).toEqual([
      { index: 0, detail: 'agentModel: only for agent members (kind agent); this member is a person' },
      { index: 1, detail: 'agentInstructions: only for agent members (kind agent); this member is a person' },
      {
        index: 2,
        detail: 'agentModel: must be a model name of 1 to 200 printable characters without spaces',
      },
      { index: 3, detail: 'agentInstructions: must be at most 8000 characters' },
      { index: 4, detail: 'agentModel: must be a string' },
    ]);
    expect(res.body.results.map((r: { index: number }) => r.index)).toEqual([5]);
    // An upsert meeting an existing person fails the same way, and changes nothing.
    const before = (await memberEvents(person.member.id)).length;
    const upsert = await importMembers(
      t,
      wid,
      key,
      [{ email: 'upsert-person@example.com', agentModel: 'gpt-4o' }],
      true,
    );
    expect(upsert.body.errors).toEqual([
      { index: 0, detail: 'agentModel: only for agent members (kind agent); this member is a person' },
    ]);
    expect(await memberEvents(person.member.id)).toHaveLength(before);
  });

  it('PUT sets, changes and clears (null) an agent’s settings, with MemberUpdated carrying the changes', async () => {
    const agent = (await importMembers(t, wid, key, [{ name: 'Agent Put', kind: 'agent' }])).body.results[0]
      .memberId as number;
    const set = await put(agent, { agentModel: 'qwen2.5:7b', agentInstructions: 'Always greet by name.' });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ agentModel: 'qwen2.5:7b', agentInstructions: 'Always greet by name.' });
    let events = await memberEvents(agent);
    expect(events.at(-1)).toMatchObject({
      type: 'MemberUpdated',
      data: {
        changes: { agentModel: 'qwen2.5:7b', agentInstructions: 'Always greet by name.' },
        member: { agentModel: 'qwen2.5:7b', agentInstructions: 'Always greet by name.' },
      },
    });
    // The same values again: no change, no event.
    expect((await put(agent, { agentModel: 'qwen2.5:7b' })).status).toBe(200);
    expect(await memberEvents(agent)).toHaveLength(events.length);

    const cleared = await put(agent, { agentModel: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ agentModel: null, agentInstructions: 'Always greet by name.' });
    events = await memberEvents(agent);
    expect(events.at(-1)!.data).toMatchObject({ changes: { agentModel: null } });
    expect(Object.keys((events.at(-1)!.data as { changes: Row }).changes)).toEqual(['agentModel']);
  });

  it('refuses malformed settings and any on a person with 400 naming the field; nothing is appended', async () => {
    const agent = (await importMembers(t, wid, key, [{ name: 'Agent Bad', kind: 'agent' }])).body.results[0]
      .memberId as number;
    const person = (await signup(t, wid, key, { email: 'not-an-agent@example.com', name: 'Nora' })).member
      .id as number;
    const agentBefore = (await memberEvents(agent)).length;
    const personBefore = (await memberEvents(person)).length;
    const cases: [number, Row, RegExp][] = [
      [agent, { agentModel: 'two words' }, /^agentModel: must be a model name/],
      [agent, { agentModel: '' }, /^agentModel: must be a model name/],
      [agent, { agentModel: 'm'.repeat(201) }, /^agentModel: /],
      [agent, { agentModel: 7 }, /^agentModel: /],
      [agent, { agentInstructions: '   ' }, /^agentInstructions: must not be empty/],
      [agent, { agentInstructions: 'x'.repeat(8_001) }, /^agentInstructions: /],
      [
        agent,
        { agentInstructions: 'bad \u0007 bell' },
        /^agentInstructions: must not hold control characters/,
      ],
      [agent, { agentInstructions: 'bad \u0000 byte' }, /^agentInstructions: must not contain NUL/],
      [agent, { agentInstructions: ['a'] }, /^agentInstructions: /],
      [person, { agentModel: 'gpt-4o' }, /^agentModel: only for agent members \(kind agent\)/],
      [person, { name: 'Nora B', agentInstructions: 'Obey' }, /^agentInstructions: only for agent members/],
    ];
    for (const [id, body, detail] of cases) {
      const res = await put(id, body);
      expect([JSON.stringify(body).slice(0, 60), res.status]).toEqual([
        JSON.stringify(body).slice(0, 60),
        400,
      ]);
      expect(res.body.detail).toMatch(detail);
    }
    expect(await memberEvents(agent)).toHaveLength(agentBefore);
    expect(await memberEvents(person)).toHaveLength(personBefore);
    expect((await get(person)).body).toMatchObject({
      name: 'Nora',
      agentModel: null,
      agentInstructions: null,
    });
    // null on a person clears nothing there is: accepted, nothing appended.
    expect((await put(person, { agentModel: null, agentInstructions: null })).status).toBe(200);
    expect(await memberEvents(person)).toHaveLength(personBefore);
    // Instructions of exactly 8,000 characters, with line breaks and tabs, are fine.
    const long = `Line one\n\tindented\r\n${'y'.repeat(8_000 - 20)}`;
    expect(long.length).toBe(8_000);
    const ok = await put(agent, { agentInstructions: long });
    expect(ok.status).toBe(200);
    expect(ok.body.agentInstructions).toBe(long);
  });

  it('documents the settings in the OpenAPI document', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body as {
      components: { schemas: Record<string, { properties: Record<string, Row> }> };
    };
    const update = doc.components.schemas.UpdateMemberDto.properties;
    expect(update.agentModel).toMatchObject({ type: 'string', maxLength: 200, nullable: true });
    expect(update.agentInstructions).toMatchObject({ type: 'string', maxLength: 8000, nullable: true });
    const response = doc.components.schemas.MemberResponse.properties;
    expect(response.agentModel).toMatchObject({ type: 'string', nullable: true });
    expect(response.agentInstructions).toMatchObject({ type: 'string', nullable: true });
  });
});
