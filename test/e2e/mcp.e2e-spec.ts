import { startTestApp, TestApp } from '../support/app';
import { keyWithScopes } from '../support/identity-fixtures';
import { mcpSession } from '../support/mcp-client';
import { createApp, Owner, ownerWithPassword, tokensFor } from '../support/oauth-browser';
import { createDataType } from '../support/records-fixtures';
import { MCP_TOOLS } from '../../src/modules/mcp/server/tools';

const ALLOWED_ORIGIN = 'https://console.example.com';
const ALL_TOOLS = [
  'calendar_events.create',
  'calendar_events.list',
  'chats.list',
  'chats.messages',
  'chats.send_assistant_message',
  'datatypes.get',
  'datatypes.list',
  'members.get',
  'members.search',
  'records.create',
  'records.get',
  'records.search',
  'records.update',
  'records.upsert',
  'tasks.create',
  'tasks.list',
  'tasks.update',
];
const FULL_SCOPE =
  'members:read data:read data:write chats:read chats:write task:read task:write calendars:read calendars:write';

type ToolResult = { isError?: boolean; structuredContent?: any; content: { type: string; text?: string }[] };

/**
 * The service's own MCP endpoint (issue 13 items 8 and 9) driven by the MCP SDK's Client
 * over HTTP, with OAuth access tokens obtained through the real authorization-code flow
 * and with API keys.
 */
describe('MCP endpoint', () => {
  let t: TestApp;
  let owner: Owner;
  let other: Owner;
  let clientId: string;
  let full: string;
  let narrow: string;
  let typeId: number;

  beforeAll(async () => {
    t = await startTestApp({ env: { CORS_ORIGINS: ALLOWED_ORIGIN } });
    owner = await ownerWithPassword(t, 'Acme');
    other = await ownerWithPassword(t, 'Other');
    const app = await createApp(t, owner.apiKey, { scopes: FULL_SCOPE.split(' ') });
    clientId = app.clientId;
    full = (await tokensFor(t, owner, app, FULL_SCOPE)).access_token;
    narrow = (await tokensFor(t, owner, app, 'members:read data:read')).access_token;
    typeId = (
      await createDataType(t, owner.workspaceId, owner.apiKey, {
        slug: 'contacts',
        fields: [
          { slug: 'name', fieldType: 'text', required: true, shouldIndex: true },
          { slug: 'age', fieldType: 'number' },
        ],
      })
    ).id;
  });
  afterAll(() => t.close());

  const call = async (token: string, name: string, args: Record<string, unknown>) => {
    const s = await mcpSession(t, token);
    try {
      const result = (await s.client.callTool({ name, arguments: args })) as ToolResult;
      return { result, response: s.last() };
    } finally {
      await s.close();
    }
  };
  const toolNames = async (token: string) => {
    const s = await mcpSession(t, token);
    try {
      return (await s.client.listTools()).tools.map((tool) => tool.name).sort();
    } finally {
      await s.close();
    }
  };

  it('lists the tools the token’s scopes allow, each with JSON Schemas for input and output', async () => {
    expect(await toolNames(full)).toEqual(ALL_TOOLS);
    expect(await toolNames(narrow)).toEqual([
      'datatypes.get',
      'datatypes.list',
      'members.get',
      'members.search',
      'records.get',
      'records.search',
    ]);
    const s = await mcpSession(t, full);
    const { tools } = await s.client.listTools();
    await s.close();
    const create = tools.find((tool) => tool.name === 'records.create')!;
    expect(create.inputSchema).toMatchObject({
      type: 'object',
      properties: { dataTypeId: { type: 'integer' }, fieldValues: { type: 'object' } },
      required: ['dataTypeId', 'fieldValues'],
    });
    // A tool's schema advertises the limits its route enforces (a message over 10,000 characters is a 400 there).
    expect(tools.find((tool) => tool.name === 'chats.send_assistant_message')!.inputSchema).toMatchObject({
      properties: { message: { type: 'string', minLength: 1, maxLength: 10_000 } },
      required: ['chatId', 'message'],
    });
    expect(tools.find((tool) => tool.name === 'records.search')!.outputSchema).toMatchObject({
      required: ['items', 'total', 'page', 'pageSize'],
    });
  });

  it('lists by an API key’s own scopes when no workspace is bound', async () => {
    const key = await keyWithScopes(t, owner.apiKey, ['records:read']);
    // An API key is not bound to a workspace: its own scopes decide what is listed.
    expect(await toolNames(key)).toEqual(['records.get', 'records.search']);
  });

  it('runs every tool as the REST route it mirrors, with the same events and the OAuth app as the actor’s client', async () => {
    const wid = owner.workspaceId;
    const created = await call(full, 'records.create', {
      dataTypeId: typeId,
      fieldValues: { name: 'Ada', age: 36 },
      externalId: 'crm-1',
    });
    expect(created.result.isError).toBeFalsy();
    const record = created.result.structuredContent;
    expect(record).toMatchObject({ fieldValues: { name: 'Ada', age: 36 } });
    const [event] = await t.expectEvents(created.response, [{ type: 'DataRecordCreated' }]);
    expect(event.metadata.actor).toMatchObject({ kind: 'oauth', clientId, accountUuid: owner.accountUuid });

    const updated = await call(full, 'records.update', {
      dataTypeId: typeId,
      recordId: record.id,
      fieldValues: { age: 37 },
    });
    expect(updated.result.structuredContent).toMatchObject({ fieldValues: { name: 'Ada', age: 37 } });
    await t.expectEvents(updated.response, [{ type: 'DataRecordUpdated' }]);

    const upserted = await call(full, 'records.upsert', {
      dataTypeId: typeId,
      externalId: 'crm-2',
      fieldValues: { name: 'Grace' },
    });
    expect(upserted.result.isError).toBeFalsy();
    await t.expectEvents(upserted.response, [{ type: 'DataRecordCreated' }]);

    const found = await call(full, 'records.search', { dataTypeId: typeId, search: 'Grace' });
    expect(found.result.structuredContent).toMatchObject({ total: 1, items: [{ externalId: 'crm-2' }] });
    const got = await call(narrow, 'records.get', { dataTypeId: typeId, recordId: record.id });
    expect(got.result.structuredContent).toMatchObject({ id: record.id });

    const types = await call(narrow, 'datatypes.list', {});
    expect(types.result.structuredContent.items.map((d: { slug: string }) => d.slug)).toContain('contacts');
    const type = await call(narrow, 'datatypes.get', { dataTypeId: typeId });
    expect(type.result.structuredContent).toMatchObject({ slug: 'contacts' });

    const members = await call(narrow, 'members.search', {});
    expect(members.result.structuredContent.items.map((m: { id: number }) => m.id)).toContain(owner.memberId);
    const member = await call(narrow, 'members.get', { memberId: owner.memberId });
    expect(member.result.structuredContent).toMatchObject({ id: owner.memberId });

    const chat = await t.request('POST', `/w/${wid}/chats`, {
      token: owner.apiKey,
      body: { channel: 'web-chat', memberId: owner.memberId },
    });
    expect(chat.status).toBe(201);
    const sent = await call(full, 'chats.send_assistant_message', {
      chatId: chat.body.id,
      message: 'Hello from MCP',
    });
    expect(sent.result.structuredContent).toMatchObject({ role: 'assistant', content: 'Hello from MCP' });
    await t.expectEvents(sent.response, [{ type: 'MessageSent', data: { role: 'assistant' } }]);
    const chats = await call(full, 'chats.list', {});
    expect(chats.result.structuredContent.items.map((c: { id: number }) => c.id)).toContain(chat.body.id);
    const messages = await call(full, 'chats.messages', { chatId: chat.body.id });
    expect(messages.result.structuredContent.items.map((m: { content: string }) => m.content)).toEqual([
      'Hello from MCP',
    ]);

    const task = await call(full, 'tasks.create', { name: 'Call Ada back', priority: 'high' });
    expect(task.result.isError).toBeFalsy();
    await t.expectEvents(task.response, [{ type: 'TaskCreated' }]);
    const taskUpdated = await call(full, 'tasks.update', {
      taskId: task.result.structuredContent.id,
      title: 'Call Ada',
    });
    expect(taskUpdated.result.structuredContent).toMatchObject({ title: 'Call Ada' });
    const tasks = await call(full, 'tasks.list', {});
    expect(tasks.result.structuredContent.items.map((x: { id: number }) => x.id)).toContain(
      task.result.structuredContent.id,
    );

    const ev = await call(full, 'calendar_events.create', {
      title: 'Intake',
      startTime: '2031-03-01T09:00:00Z',
      endTime: '2031-03-01T10:00:00Z',
    });
    expect(ev.result.isError).toBeFalsy();
    await t.expectEvents(ev.response, [{ type: 'CalendarEventCreated' }]);
    const inWindow = await call(full, 'calendar_events.list', {
      startTime: '2031-03-01T00:00:00Z',
      endTime: '2031-03-02T00:00:00Z',
    });
    expect(inWindow.result.structuredContent.items.map((e: { id: number }) => e.id)).toEqual([
      ev.result.structuredContent.id,
    ]);
    const outside = await call(full, 'calendar_events.list', {
      startTime: '2031-04-01T00:00:00Z',
      endTime: '2031-04-02T00:00:00Z',
    });
    expect(outside.result.structuredContent.items).toEqual([]);
  });

  it('answers what the REST route answers, reads its own writes, and names the member and the MCP request in its events', async () => {
    const wid = owner.workspaceId;
    const created = await call(full, 'records.create', {
      dataTypeId: typeId,
      fieldValues: { name: 'Lin', age: 51 },
      externalId: 'same-1',
    });
    expect(created.result.isError).toBeFalsy();
    const record = created.result.structuredContent;
    // The tool's answer is sent once the projections passed its write: REST sees it at once.
    const rest = await t.request('GET', `/w/${wid}/data-types/${typeId}/records/${record.id}`, {
      token: full,
    });
    expect(rest.status).toBe(200);
    expect(record).toEqual(rest.body);
    const [event] = await t.expectEvents(created.response, [{ type: 'DataRecordCreated' }]);
    expect(event.metadata.correlationId).toBe(created.response.requestId);
    expect(event.metadata.actor).toMatchObject({
      kind: 'oauth',
      clientId,
      accountUuid: owner.accountUuid,
      memberId: owner.memberId,
    });

    const pairs: [string, Record<string, unknown>, string][] = [
      [
        'records.get',
        { dataTypeId: typeId, recordId: record.id },
        `/data-types/${typeId}/records/${record.id}`,
      ],
      [
        'records.search',
        { dataTypeId: typeId, search: 'lin', pageSize: 5 },
        `/data-types/${typeId}/records?search=lin&pageSize=5`,
      ],
      [
        'records.search',
        { dataTypeId: typeId, externalId: 'same-1' },
        `/data-types/${typeId}/records?externalId=same-1`,
      ],
      ['datatypes.get', { dataTypeId: typeId }, `/data-types/${typeId}`],
      ['members.get', { memberId: owner.memberId }, `/members/${owner.memberId}`],
      ['members.search', { page: 1, pageSize: 10 }, '/members?page=1&pageSize=10'],
      ['tasks.list', {}, '/tasks'],
    ];
    for (const [name, args, path] of pairs) {
      const viaMcp = await call(full, name, args);
      const viaRest = await t.request('GET', `/w/${wid}${path}`, { token: full });
      expect({ name, status: viaRest.status }).toEqual({ name, status: 200 });
      expect({ name, body: viaMcp.result.structuredContent }).toEqual({ name, body: viaRest.body });
    }

    // Refusals read as the route's: the same status and detail, from the same validation and rules.
    const refusals: [string, Record<string, unknown>, string, string, unknown][] = [
      [
        'records.create',
        { dataTypeId: typeId, fieldValues: { age: 'old' } },
        'POST',
        `/data-types/${typeId}/records`,
        { fieldValues: { age: 'old' } },
      ],
      [
        'records.create',
        { dataTypeId: typeId, fieldValues: 'x' },
        'POST',
        `/data-types/${typeId}/records`,
        { fieldValues: 'x' },
      ],
      [
        'records.get',
        { dataTypeId: typeId, recordId: 999999 },
        'GET',
        `/data-types/${typeId}/records/999999`,
        undefined,
      ],
      [
        'records.get',
        { dataTypeId: typeId, recordId: '0' },
        'GET',
        `/data-types/${typeId}/records/0`,
        undefined,
      ],
      [
        'records.search',
        { dataTypeId: typeId, pageSize: 5000 },
        'GET',
        `/data-types/${typeId}/records?pageSize=5000`,
        undefined,
      ],
      ['tasks.create', { name: '' }, 'POST', '/tasks', { name: '' }],
      ['calendar_events.list', { startTime: 'soon' }, 'GET', '/calendar-events?startTime=soon', undefined],
    ];
    for (const [name, args, method, path, body] of refusals) {
      const viaMcp = await call(full, name, args);
      const viaRest = await t.request(method as 'GET', `/w/${wid}${path}`, { token: full, body });
      expect(viaRest.status).toBeGreaterThanOrEqual(400);
      expect({ name, args, isError: viaMcp.result.isError, text: viaMcp.result.content[0].text }).toEqual({
        name,
        args,
        isError: true,
        text: `${viaRest.status}: ${viaRest.body.detail}`,
      });
      expect(await t.eventsOf(viaMcp.response)).toEqual([]);
    }
  });

  it('gives each tool the scope and the self-access of the route it names, as the OpenAPI document states them', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, { 'x-required-scope'?: string; description?: string }>>;
    };
    expect(MCP_TOOLS.map((tool) => tool.name).sort()).toEqual(ALL_TOOLS);
    for (const tool of MCP_TOOLS) {
      const [, method, path] = /\((GET|POST|PUT) (\/w\/\{wid\}[^ ;)]*)/.exec(tool.description) ?? [];
      const op = doc.paths[`/api/v2${path}`]?.[method?.toLowerCase()];
      expect({ tool: tool.name, found: !!op }).toEqual({ tool: tool.name, found: true });
      expect({ tool: tool.name, scope: op['x-required-scope'] }).toEqual({
        tool: tool.name,
        scope: tool.scope,
      });
      expect({ tool: tool.name, self: /acting on itself/.test(op.description ?? '') }).toEqual({
        tool: tool.name,
        self: tool.selfAccess,
      });
      expect({ tool: tool.name, readOnly: method === 'GET' }).toEqual({
        tool: tool.name,
        readOnly: tool.readOnly,
      });
      const params = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).filter((p) => p !== 'wid');
      expect({ tool: tool.name, params }).toEqual({ tool: tool.name, params: [...tool.params] });
    }
  });

  it('refuses a tool the token lacks the scope of, and a REST rule as the route does, changing nothing', async () => {
    const refused = await call(narrow, 'records.create', {
      dataTypeId: typeId,
      fieldValues: { name: 'Eve' },
    });
    expect(refused.result.isError).toBe(true);
    expect(refused.result.content[0].text).toMatch(/lacks the scope records:write/);
    expect(await t.eventsOf(refused.response)).toEqual([]);

    const invalid = await call(full, 'records.create', { dataTypeId: typeId, fieldValues: { age: 'old' } });
    expect(invalid.result.isError).toBe(true);
    expect(invalid.result.content[0].text).toMatch(/^400: .*(name|age)/);
    expect(await t.eventsOf(invalid.response)).toEqual([]);
  });

  it('serves the workspace’s data types as JSON Schema resources', async () => {
    const s = await mcpSession(t, narrow);
    const { resources } = await s.client.listResources();
    const contacts = resources.find((r) => r.name === 'contacts')!;
    expect(contacts).toMatchObject({ mimeType: 'application/schema+json' });
    const read = await s.client.readResource({ uri: contacts.uri });
    await s.close();
    const schema = JSON.parse((read.contents[0] as { text: string }).text);
    expect(schema).toMatchObject({
      type: 'object',
      properties: { name: { type: 'string' }, age: { type: 'number' } },
      required: ['name'],
    });
  });

  it('answers 401 with resource_metadata, whose document names the authorization server (the discovery chain)', async () => {
    const res = await fetch(`${t.baseUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    const challenge = res.headers.get('www-authenticate')!;
    const url = /^Bearer resource_metadata="([^"]+)"$/.exec(challenge)?.[1];
    // The documents name PUBLIC_BASE_URL (the test server's is not its listening port): reach them here.
    const base = t.config.publicBaseUrl;
    const here = (u: string) => `${new URL(t.baseUrl).origin}${new URL(u).pathname}`;
    expect(url).toBe(`${new URL(base).origin}/.well-known/oauth-protected-resource/api/v2/mcp`);
    const prm = (await (await fetch(here(url!))).json()) as { authorization_servers: string[] };
    expect(prm).toMatchObject({ resource: `${base}/mcp`, authorization_servers: [base] });
    const issuer = new URL(prm.authorization_servers[0]);
    const as = await fetch(here(`${issuer.origin}/.well-known/oauth-authorization-server${issuer.pathname}`));
    expect(as.status).toBe(200);
    expect(await as.json()).toMatchObject({
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      registration_endpoint: `${base}/oauth/register`,
      code_challenge_methods_supported: ['S256'],
    });
    const bad = await fetch(`${t.baseUrl}/mcp`, {
      method: 'POST',
      headers: { authorization: 'Bearer wso_not-a-token', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toBe(challenge);
  });

  it('refuses a browser Origin outside CORS_ORIGINS and serves an allowed one; GET and DELETE are 405', async () => {
    const post = (origin: string) =>
      fetch(`${t.baseUrl}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${full}`,
          origin,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    const evil = await post('https://evil.example.com');
    expect(evil.status).toBe(403);
    expect(evil.headers.get('access-control-allow-origin')).toBeNull();
    const ok = await post(ALLOWED_ORIGIN);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
    expect(((await ok.json()) as { result: { tools: unknown[] } }).result.tools.length).toBe(
      ALL_TOOLS.length,
    );
    // A browser MCP client's preflight: the MCP header is allowed, and a 401's challenge is readable.
    const preflight = await fetch(`${t.baseUrl}/mcp`, {
      method: 'OPTIONS',
      headers: {
        origin: ALLOWED_ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type, mcp-protocol-version',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Mcp-Protocol-Version/);
    const anonymous = await fetch(`${t.baseUrl}/mcp`, {
      method: 'POST',
      headers: { origin: ALLOWED_ORIGIN },
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('access-control-expose-headers')).toMatch(/WWW-Authenticate/);
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${t.baseUrl}/mcp`, { method, headers: { authorization: `Bearer ${full}` } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
  });

  it('keeps tenants apart: a token acts only in its workspace, an API key only where its account is a member', async () => {
    const foreign = await call(full, 'members.search', { workspaceId: other.workspaceId });
    expect(foreign.result.isError).toBe(true);
    const key = await call(owner.apiKey, 'members.search', { workspaceId: other.workspaceId });
    expect(key.result.isError).toBe(true);
    expect(key.result.content[0].text).toMatch(/^404: /);
    const own = await call(other.apiKey, 'members.search', { workspaceId: other.workspaceId });
    expect(own.result.structuredContent.items.map((m: { id: number }) => m.id)).toEqual([other.memberId]);
    const missing = await call(other.apiKey, 'members.search', {});
    expect(missing.result.content[0].text).toMatch(/workspaceId/);
  });
});
