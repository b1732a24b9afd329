import { QueryBus } from '@nestjs/cqrs';
import { ValidateCustomToolArgumentsQuery, ValidatedToolCall } from '../../src/modules/toolkits';
import { startTestApp, TestApp } from '../support/app';
import { keyWithScopes } from '../support/identity-fixtures';

const orderSchema = {
  type: 'object',
  properties: {
    orderId: { type: 'string', description: 'the order number', minLength: 3 },
    count: { type: 'integer', minimum: 1 },
  },
  required: ['orderId'],
  additionalProperties: false,
};

describe('custom tools (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  async function toolkit(wid: string, token: string, slug = 'kit'): Promise<string> {
    const res = await t.request('POST', `/w/${wid}/custom-toolkits`, { token, body: { name: 'Kit', slug } });
    expect(res.status).toBe(201);
    return `/w/${wid}/custom-toolkits/${res.body.id}/tools`;
  }

  it('creates, reads, updates and deletes a tool, with its events, ETags and Location', async () => {
    const a = await t.bootstrap();
    const tools = await toolkit(a.workspaceId, a.apiKey);
    const toolkitId = Number(tools.split('/')[4]);
    const res = await t.request('POST', tools, {
      token: a.apiKey,
      body: {
        name: 'lookup_order',
        displayName: 'Look up an order',
        description: 'Finds an order by its number',
        prompt: 'Look the order up in the CRM.',
        chatModel: 'gpt-4o-mini',
        inputSchema: orderSchema,
      },
    });
    expect(res.status).toBe(201);
    const id = res.body.id as number;
    expect(res.body).toEqual({
      id,
      toolkitId,
      name: 'lookup_order',
      displayName: 'Look up an order',
      description: 'Finds an order by its number',
      prompt: 'Look the order up in the CRM.',
      chatModel: 'gpt-4o-mini',
      inputSchema: orderSchema,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(res.headers.get('location')).toBe(`/api/v2${tools}/${id}`);
    expect(res.headers.get('etag')).toBe('"1"');
    await t.expectEvents(res, [
      {
        type: 'CustomToolCreated',
        stream: `customtoolkit-${toolkitId}`,
        data: { toolkitId, toolId: id, tool: { name: 'lookup_order', inputSchema: orderSchema } },
      },
    ]);

    const path = `${tools}/${id}`;
    const get = await t.request('GET', path, { token: a.apiKey });
    expect(get.status).toBe(200);
    expect(get.body).toEqual(res.body);
    expect(get.headers.get('etag')).toBe('"1"');

    // A sibling's changes leave this tool's version alone: If-Match "1" still applies.
    const sibling = await t.request('POST', tools, { token: a.apiKey, body: { name: 'sibling' } });
    expect(sibling.status).toBe(201);
    expect(sibling.body).toMatchObject({
      displayName: 'sibling',
      description: null,
      prompt: null,
      chatModel: null,
      inputSchema: { type: 'object', properties: {} },
    });
    await t.request('PUT', `${tools}/${sibling.body.id}`, { token: a.apiKey, body: { prompt: 'x' } });

    const put = await t.request('PUT', path, {
      token: a.apiKey,
      headers: { 'if-match': '"1"' },
      body: { displayName: 'Find order', description: null, chatModel: null },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ displayName: 'Find order', description: null, chatModel: null });
    expect(put.headers.get('etag')).toBe('"2"');
    await t.expectEvents(put, [
      {
        type: 'CustomToolUpdated',
        stream: `customtoolkit-${toolkitId}`,
        data: { toolId: id, changes: { displayName: 'Find order', description: null, chatModel: null } },
      },
    ]);
    const stale = await t.request('PUT', path, {
      token: a.apiKey,
      headers: { 'if-match': '"1"' },
      body: { displayName: 'Stale' },
    });
    expect(stale.status).toBe(412);
    expect(stale.body.detail).toMatch(/now at "2"/);
    await t.expectEvents(stale, []);
    const same = await t.request('PUT', path, { token: a.apiKey, body: { inputSchema: orderSchema } });
    expect(same.status).toBe(200);
    expect(same.headers.get('etag')).toBe('"2"');
    await t.expectEvents(same, []);

    const list = await t.request('GET', tools, { token: a.apiKey });
    expect(list.body).toMatchObject({ total: 2, page: 1, pageSize: 50 });
    expect(list.body.items.map((i: { name: string }) => i.name)).toEqual(['lookup_order', 'sibling']);
    expect((await t.request('GET', `${tools}?search=FIND`, { token: a.apiKey })).body.items).toEqual([
      expect.objectContaining({ id }),
    ]);

    const del = await t.request('DELETE', path, { token: a.apiKey, headers: { 'if-match': '"2"' } });
    expect(del.status).toBe(204);
    await t.expectEvents(del, [
      {
        type: 'CustomToolDeleted',
        stream: `customtoolkit-${toolkitId}`,
        data: { toolId: id, name: 'lookup_order' },
      },
    ]);
    expect((await t.request('GET', path, { token: a.apiKey })).status).toBe(404);
    // Its name is free again.
    expect((await t.request('POST', tools, { token: a.apiKey, body: { name: 'lookup_order' } })).status).toBe(
      201,
    );
  });

  it('keeps names valid and unique in the toolkit, whatever the case; other toolkits may reuse them', async () => {
    const a = await t.bootstrap();
    const tools = await toolkit(a.workspaceId, a.apiKey);
    const other = await toolkit(a.workspaceId, a.apiKey, 'other');
    const first = await t.request('POST', tools, { token: a.apiKey, body: { name: 'search' } });
    expect(first.status).toBe(201);
    for (const name of ['Search', 'SEARCH']) {
      const dup = await t.request('POST', tools, { token: a.apiKey, body: { name } });
      expect(dup.status).toBe(409);
      expect(dup.body.detail).toBe(`name: tool ${first.body.id} of this toolkit is already named "search"`);
      await t.expectEvents(dup, []);
    }
    expect((await t.request('POST', other, { token: a.apiKey, body: { name: 'search' } })).status).toBe(201);
    const second = await t.request('POST', tools, { token: a.apiKey, body: { name: 'fetch' } });
    const rename = await t.request('PUT', `${tools}/${second.body.id}`, {
      token: a.apiKey,
      body: { name: 'Search' },
    });
    expect(rename.status).toBe(409);
    await t.expectEvents(rename, []);

    for (const name of ['1tool', '_tool', 'has space', 'dots.not', 'ünicode', 'a'.repeat(65)]) {
      const res = await t.request('POST', tools, { token: a.apiKey, body: { name } });
      expect({ name, status: res.status }).toEqual({ name, status: 400 });
      expect(res.body.detail).toMatch(/^name: /);
      await t.expectEvents(res, []);
    }
    expect(
      (await t.request('POST', tools, { token: a.apiKey, body: { name: `A${'b-_9'.repeat(15)}xyz` } }))
        .status,
    ).toBe(201);
  });

  it('refuses an invalid input schema with 400 naming the schema path, and changes nothing', async () => {
    const a = await t.bootstrap();
    const tools = await toolkit(a.workspaceId, a.apiKey);
    const cases: [unknown, string | RegExp][] = [
      [{ type: 'array' }, 'inputSchema.type: must be "object": a tool takes its arguments as an object'],
      [{ properties: { a: { type: 'string' } } }, /^inputSchema\.type: must be "object"/],
      [
        { type: 'object', properties: { count: { type: 'integr' } } },
        'inputSchema.properties.count.type: must be equal to one of the allowed values',
      ],
      [
        { type: 'object', properties: { a: { type: 'string', maxLenght: 3 } } },
        'inputSchema.properties.a.maxLenght: unknown keyword "maxLenght"',
      ],
      [
        { type: 'object', properties: { a: { type: 'string' } }, required: ['a', 'b'] },
        'inputSchema.required: "b" is not a declared property',
      ],
      [
        { type: 'object', properties: { a: { $ref: 'http://169.254.169.254/schema' } } },
        'inputSchema.properties.a.$ref: only references within the schema ("#/$defs/...") are allowed',
      ],
      [
        { type: 'object', properties: { a: { type: 'string', pattern: '^(a+)+$' } } },
        /^inputSchema\.properties\.a\.pattern: must not repeat a group/,
      ],
      [
        { type: 'object', properties: { a: { type: 'string', format: 'colour' } } },
        /^inputSchema\.properties\.a\.format: unknown format "colour"/,
      ],
      [[{ type: 'object' }], /^inputSchema: /],
      ['{"type":"object"}', /^inputSchema: /],
      [null, 'inputSchema: must not be null'],
    ];
    for (const [inputSchema, detail] of cases) {
      const res = await t.request('POST', tools, { token: a.apiKey, body: { name: 'tool', inputSchema } });
      expect({ inputSchema, status: res.status }).toEqual({ inputSchema, status: 400 });
      if (typeof detail === 'string') expect(res.body.detail).toBe(detail);
      else expect(res.body.detail).toMatch(detail);
      await t.expectEvents(res, []);
    }
    // The same rules on PUT.
    const ok = await t.request('POST', tools, {
      token: a.apiKey,
      body: { name: 'tool', inputSchema: orderSchema },
    });
    expect(ok.status).toBe(201);
    const bad = await t.request('PUT', `${tools}/${ok.body.id}`, {
      token: a.apiKey,
      body: { inputSchema: { ...orderSchema, required: ['orderId', 'customer'] } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toBe('inputSchema.required: "customer" is not a declared property');
    await t.expectEvents(bad, []);
    const others: [Record<string, unknown>, RegExp][] = [
      [{ name: 'x', displayName: '' }, /^displayName: /],
      [{ name: 'x', chatModel: '' }, /^chatModel: /],
      [{ name: 'x', prompt: 'p'.repeat(50_001) }, /^prompt: /],
      [{ name: 'x', colour: 'red' }, /^colour: unknown field$/],
    ];
    for (const [body, detail] of others) {
      const res = await t.request('POST', tools, { token: a.apiKey, body });
      expect({ body: Object.keys(body), status: res.status }).toEqual({
        body: Object.keys(body),
        status: 400,
      });
      expect(res.body.detail).toMatch(detail);
    }
  });

  it('validates tool-call arguments against the stored schema, per tool version', async () => {
    const a = await t.bootstrap();
    const b = await t.bootstrap();
    const tools = await toolkit(a.workspaceId, a.apiKey);
    const created = await t.request('POST', tools, {
      token: a.apiKey,
      body: { name: 'lookup_order', inputSchema: orderSchema },
    });
    const toolId = created.body.id as number;
    const queries = t.app.get(QueryBus);
    const validate = (args: unknown, workspaceId = a.workspaceId) =>
      queries.execute<ValidateCustomToolArgumentsQuery, ValidatedToolCall>(
        new ValidateCustomToolArgumentsQuery(workspaceId, toolId, args),
      );

    await expect(validate({ orderId: 'A-17', count: 2 })).resolves.toEqual({
      toolId,
      toolkitId: created.body.toolkitId,
      name: 'lookup_order',
      toolkitSlug: 'kit',
      toolkitEnabled: true,
      version: 1,
      arguments: { orderId: 'A-17', count: 2 },
    });
    await expect(validate({ orderId: 'A-17', count: 'two' })).rejects.toMatchObject({
      status: 400,
      message: 'arguments.count: must be integer',
    });
    await expect(validate({ count: 2 })).rejects.toMatchObject({ message: 'arguments.orderId: is required' });
    await expect(validate({ orderId: 'A-17', extra: true })).rejects.toMatchObject({
      message: 'arguments.extra: is not an argument of this tool',
    });
    // Another workspace has no such tool.
    await expect(validate({ orderId: 'A-17' }, b.workspaceId)).rejects.toMatchObject({ status: 404 });

    // A new schema is a new version: the next call is checked against it.
    const put = await t.request('PUT', `${tools}/${toolId}`, {
      token: a.apiKey,
      body: {
        inputSchema: { type: 'object', properties: { orderId: { type: 'integer' } }, required: ['orderId'] },
      },
    });
    expect(put.status).toBe(200);
    await expect(validate({ orderId: 'A-17' })).rejects.toMatchObject({
      message: 'arguments.orderId: must be integer',
    });
    await expect(validate({ orderId: 17 })).resolves.toMatchObject({
      version: 2,
      arguments: { orderId: 17 },
    });

    // A disabled toolkit's tools still validate, but say so.
    await t.request('POST', `${tools.replace(/\/tools$/, '')}/disable`, { token: a.apiKey });
    await expect(validate({ orderId: 17 })).resolves.toMatchObject({ toolkitEnabled: false });
  });

  it('needs apps:read to read, apps:write to create and change, apps:admin to delete tools', async () => {
    const a = await t.bootstrap();
    const tools = await toolkit(a.workspaceId, a.apiKey);
    const tool = await t.request('POST', tools, { token: a.apiKey, body: { name: 'tool' } });
    const path = `${tools}/${tool.body.id}`;
    const none = await keyWithScopes(t, a.apiKey, ['members:read']);
    const reader = await keyWithScopes(t, a.apiKey, ['apps:read']);
    const writer = await keyWithScopes(t, a.apiKey, ['apps:write']);
    expect((await t.request('GET', tools, { token: none })).status).toBe(403);
    expect((await t.request('GET', path, { token: none })).status).toBe(403);
    expect((await t.request('GET', tools, { token: reader })).status).toBe(200);
    expect((await t.request('GET', path, { token: reader })).status).toBe(200);
    const create = await t.request('POST', tools, { token: reader, body: { name: 'other' } });
    expect(create.status).toBe(403);
    expect(create.body.detail).toMatch(/apps:write/);
    await t.expectEvents(create, []);
    expect((await t.request('PUT', path, { token: reader, body: { prompt: 'p' } })).status).toBe(403);
    expect((await t.request('POST', tools, { token: writer, body: { name: 'other' } })).status).toBe(201);
    expect((await t.request('PUT', path, { token: writer, body: { prompt: 'p' } })).status).toBe(200);
    const del = await t.request('DELETE', path, { token: writer });
    expect(del.status).toBe(403);
    expect(del.body.detail).toMatch(/apps:admin/);
    await t.expectEvents(del, []);
    expect((await t.request('DELETE', path, { token: a.apiKey })).status).toBe(204);
  });

  it('answers 404 for tools of another toolkit or another workspace', async () => {
    const a = await t.bootstrap();
    const b = await t.bootstrap();
    const mine = await toolkit(a.workspaceId, a.apiKey);
    const mine2 = await toolkit(a.workspaceId, a.apiKey, 'second');
    const theirs = await toolkit(b.workspaceId, b.apiKey);
    const myTool = await t.request('POST', mine, { token: a.apiKey, body: { name: 'tool' } });
    const theirTool = await t.request('POST', theirs, { token: b.apiKey, body: { name: 'tool' } });
    const cases: [string, string][] = [
      // Their tool through their toolkit, from workspace A's path.
      [
        `${theirs.replace(b.workspaceId, a.workspaceId)}/${theirTool.body.id}`,
        'their toolkit in my workspace',
      ],
      // Their tool through my toolkit.
      [`${mine}/${theirTool.body.id}`, 'their tool in my toolkit'],
      // My tool through my other toolkit.
      [`${mine2}/${myTool.body.id}`, 'my tool in my other toolkit'],
    ];
    for (const [path, label] of cases)
      for (const [method, body] of [
        ['GET', undefined],
        ['PUT', { prompt: 'mine' }],
        ['DELETE', undefined],
      ] as const) {
        const res = await t.request(method, path, { token: a.apiKey, body });
        expect({ label, method, status: res.status }).toEqual({ label, method, status: 404 });
        await t.expectEvents(res, []);
      }
    expect((await t.request('GET', theirs, { token: a.apiKey })).status).toBe(404);
    expect((await t.request('GET', mine2, { token: a.apiKey })).body.total).toBe(0);
    const still = await t.request('GET', `${theirs}/${theirTool.body.id}`, { token: b.apiKey });
    expect(still.body).toMatchObject({ name: 'tool', prompt: null });
  });
});
