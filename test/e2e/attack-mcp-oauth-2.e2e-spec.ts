import { DataSource } from 'typeorm';
import { startTestApp, TestApp, TestResponse } from '../support/app';
import { customRole, keyWithScopes } from '../support/identity-fixtures';
import {
  App,
  authorizeThroughPages,
  authorizeUrl,
  createApp,
  OAuthBrowser,
  Owner,
  PASSWORD,
  ownerWithPassword,
  pkcePair,
  postForm,
  tokensFor,
} from '../support/oauth-browser';
import { createDataType, recordsPath } from '../support/records-fixtures';
import { agentMember, createWorkflow } from '../support/work-fixtures';

const ALLOWED_ORIGIN = 'https://console.example.com';
const FULL_SCOPE =
  'members:read data:read data:write chats:read chats:write task:read task:write calendars:read calendars:write';
const LOOPBACK = 'http://localhost:3000/callback';

/**
 * A hostile client against the MCP endpoint's direct dispatch (scopes, self rules, tenants,
 * validation, rate limits, JSON-RPC batches) and the loopback redirect URIs (RFC 8252 with
 * `localhost`, port-agnostic matching), after the two changes of issue 13's last round.
 */
describe('attack: MCP and OAuth, second round (e2e)', () => {
  let t: TestApp;
  let owner: Owner;
  let other: Owner;
  let app: App;
  let full: string;
  let typeId: number;
  let otherTypeId: number;
  let otherRecordId: number;

  beforeAll(async () => {
    t = await startTestApp({ env: { CORS_ORIGINS: ALLOWED_ORIGIN } });
    owner = await ownerWithPassword(t, 'Attacked');
    other = await ownerWithPassword(t, 'Other tenant');
    app = await createApp(t, owner.apiKey, { scopes: FULL_SCOPE.split(' ') });
    full = (await tokensFor(t, owner, app, FULL_SCOPE)).access_token;
    const fields = [
      { slug: 'name', fieldType: 'text', required: true },
      { slug: 'note', fieldType: 'text' },
    ];
    typeId = (await createDataType(t, owner.workspaceId, owner.apiKey, { slug: 'contacts', fields })).id;
    otherTypeId = (await createDataType(t, other.workspaceId, other.apiKey, { slug: 'contacts', fields })).id;
    const rec = await t.request('POST', recordsPath(other.workspaceId, otherTypeId), {
      token: other.apiKey,
      body: { memberId: other.memberId, fieldValues: { name: 'Other tenant secret' } },
    });
    expect(rec.status).toBe(201);
    otherRecordId = rec.body.id;
  });
  afterAll(() => t.close());

  const mcp = (token: string | undefined, body: unknown, headers: Record<string, string> = {}) =>
    t.request('POST', '/mcp', {
      token,
      body,
      headers: { accept: 'application/json, text/event-stream', ...headers },
    });
  const callMessage = (name: string, args: Record<string, unknown>, id: number | string = 1) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: args },
  });
  const tool = async (token: string, name: string, args: Record<string, unknown>) => {
    const res = await mcp(token, callMessage(name, args));
    expect(res.status).toBe(200);
    return {
      res,
      result: res.body.result as { isError?: boolean; content: { text: string }[]; structuredContent?: any },
    };
  };
  const recordCount = async (wid = owner.workspaceId, tid = typeId, key = owner.apiKey) => {
    const res = await t.request('GET', `${recordsPath(wid, tid)}?pageSize=1`, { token: key });
    expect(res.status).toBe(200);
    return res.body.total as number;
  };
  const noEvents = async (res: TestResponse) => expect(await t.eventsOf(res)).toEqual([]);

  describe('the MCP endpoint', () => {
    it('refuses a JSON-RPC batch, so one request admitted by the rate limiter cannot run many tool calls', async () => {
      const before = await recordCount();
      const two = await mcp(full, [
        callMessage('records.create', { dataTypeId: typeId, fieldValues: { name: 'one' } }, 1),
        callMessage('records.create', { dataTypeId: typeId, fieldValues: { name: 'two' } }, 2),
      ]);
      expect(two.status).toBe(400);
      expect(two.body.detail).toMatch(/batch/i);
      await noEvents(two);
      const many = await mcp(
        full,
        Array.from({ length: 1000 }, (_, i) =>
          callMessage('records.create', { dataTypeId: typeId, fieldValues: { name: `n${i}` } }, i),
        ),
      );
      expect(many.status).toBe(400);
      expect(many.body.detail).toMatch(/batch/i);
      await noEvents(many);
      expect(await recordCount()).toBe(before);
      // A single message still works, and so does a one-element array's absence of effect on it.
      const single = await tool(full, 'records.create', {
        dataTypeId: typeId,
        fieldValues: { name: 'single' },
      });
      expect(single.result.isError).toBeUndefined();
      expect(await recordCount()).toBe(before + 1);
    });

    it('counts every MCP request against the credential’s rate limit', async () => {
      const a = await mcp(full, callMessage('members.search', {}));
      const b = await mcp(full, callMessage('members.search', {}));
      expect(a.status).toBe(200);
      const remaining = (r: TestResponse) => Number(r.headers.get('x-ratelimit-remaining'));
      expect(Number.isFinite(remaining(a))).toBe(true);
      expect(remaining(b)).toBe(remaining(a) - 1);
    });

    it('takes the token from the Authorization header only: not from the query string, not a member token', async () => {
      const res = await fetch(`${t.baseUrl}/mcp?access_token=${encodeURIComponent(full)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(callMessage('members.search', {})),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata="[^"]+"$/);
      const form = await fetch(`${t.baseUrl}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `access_token=${encodeURIComponent(full)}`,
      });
      expect([401, 415]).toContain(form.status);
    });

    it('refuses Origins that only look like an allowed one', async () => {
      for (const origin of [
        'null',
        `${ALLOWED_ORIGIN}.evil.com`,
        'https://console.example.com:444',
        'HTTPS://console.example.com/',
      ]) {
        const res = await mcp(full, callMessage('members.search', {}), { origin });
        expect({ origin, status: res.status }).toEqual({ origin, status: 403 });
      }
    });

    it('does not let a token or an API key without a records scope reach the member’s own records through a tool’s self rule', async () => {
      const own = await t.request('POST', recordsPath(owner.workspaceId, typeId), {
        token: owner.apiKey,
        body: { memberId: owner.memberId, fieldValues: { name: 'own private note' } },
      });
      expect(own.status).toBe(201);
      const token = (await tokensFor(t, owner, app, 'members:read chats:read')).access_token as string;
      const key = await keyWithScopes(t, owner.apiKey, ['members:read', 'chats:read']);
      const before = await recordCount();
      for (const [cred, ws] of [
        [token, {}],
        [key, { workspaceId: owner.workspaceId }],
      ] as const) {
        for (const [name, args] of [
          ['records.get', { dataTypeId: typeId, recordId: own.body.id }],
          ['records.search', { dataTypeId: typeId }],
          ['records.update', { dataTypeId: typeId, recordId: own.body.id, fieldValues: { name: 'x' } }],
          ['records.create', { dataTypeId: typeId, memberId: owner.memberId, fieldValues: { name: 'p' } }],
          [
            'records.upsert',
            { dataTypeId: typeId, externalId: 'e1', memberId: owner.memberId, fieldValues: { name: 'p' } },
          ],
          ['datatypes.get', { dataTypeId: typeId }],
        ] as const) {
          const { res, result } = await tool(cred, name, { ...ws, ...args });
          expect({ name, isError: result.isError }).toEqual({ name, isError: true });
          expect(JSON.stringify(result)).not.toContain('own private note');
          await noEvents(res);
        }
        const listed = await mcp(cred, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
        const names = (listed.body.result.tools as { name: string }[]).map((x) => x.name);
        expect(names.filter((n) => n.startsWith('records.') || n.startsWith('datatypes.'))).toEqual([]);
        const resources = await mcp(cred, { jsonrpc: '2.0', id: 1, method: 'resources/list' });
        expect(resources.body.result.resources).toEqual([]);
      }
      expect(await recordCount()).toBe(before);
      // The REST route refuses the same token the same way.
      const rest = await t.request('GET', `${recordsPath(owner.workspaceId, typeId)}/${own.body.id}`, {
        token,
      });
      expect(rest.status).toBe(403);
    });

    it('narrows every tool at once when the member who consented is demoted', async () => {
      const demoted = await ownerWithPassword(t, 'Demoted');
      const dApp = await createApp(t, demoted.apiKey, { scopes: FULL_SCOPE.split(' ') });
      const token = (await tokensFor(t, demoted, dApp, 'members:read data:write task:write'))
        .access_token as string;
      const type = await createDataType(t, demoted.workspaceId, demoted.apiKey, {
        slug: 'notes',
        fields: [{ slug: 'name', fieldType: 'text' }],
      });
      const ok = await tool(token, 'records.create', {
        dataTypeId: type.id,
        fieldValues: { name: 'before' },
      });
      expect(ok.result.isError).toBeUndefined();
      const role = await customRole(t, demoted.workspaceId, demoted.apiKey, 'Reader', ['members:read']);
      const moved = await t.request('PUT', `/w/${demoted.workspaceId}/members/${demoted.memberId}`, {
        token: demoted.apiKey,
        body: { memberRoleId: role },
      });
      expect(moved.status).toBe(200);
      for (const [name, args] of [
        [
          'records.create',
          { dataTypeId: type.id, memberId: demoted.memberId, fieldValues: { name: 'after' } },
        ],
        ['records.search', { dataTypeId: type.id }],
        ['tasks.create', { name: 'after' }],
        ['tasks.list', {}],
      ] as const) {
        const { res, result } = await tool(token, name, args);
        expect({ name, isError: result.isError }).toEqual({ name, isError: true });
        await noEvents(res);
      }
      const listed = await mcp(token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect((listed.body.result.tools as { name: string }[]).map((x) => x.name).sort()).toEqual([
        'members.get',
        'members.search',
      ]);
    });

    it('keeps another workspace’s ids and wid out of reach of a token and of a key', async () => {
      const attempts: [string, string, Record<string, unknown>][] = [
        [full, 'records.get', { dataTypeId: otherTypeId, recordId: otherRecordId }],
        [
          full,
          'records.get',
          { workspaceId: other.workspaceId, dataTypeId: otherTypeId, recordId: otherRecordId },
        ],
        [full, 'records.search', { workspaceId: other.workspaceId.toUpperCase(), dataTypeId: otherTypeId }],
        [
          full,
          'records.update',
          { dataTypeId: otherTypeId, recordId: otherRecordId, fieldValues: { name: 'pwned' } },
        ],
        [
          full,
          'records.create',
          { workspaceId: other.workspaceId, dataTypeId: otherTypeId, fieldValues: { name: 'x' } },
        ],
        [
          owner.apiKey,
          'records.get',
          { workspaceId: other.workspaceId, dataTypeId: otherTypeId, recordId: otherRecordId },
        ],
        [
          owner.apiKey,
          'records.upsert',
          {
            workspaceId: other.workspaceId,
            dataTypeId: otherTypeId,
            externalId: 'x',
            fieldValues: { name: 'x' },
          },
        ],
        [owner.apiKey, 'members.get', { workspaceId: other.workspaceId, memberId: other.memberId }],
        [owner.apiKey, 'members.get', { workspaceId: owner.workspaceId, memberId: other.memberId }],
      ];
      for (const [cred, name, args] of attempts) {
        const { res, result } = await tool(cred, name, args);
        expect({ name, args, isError: result.isError }).toEqual({ name, args, isError: true });
        expect(JSON.stringify(result)).not.toContain('Other tenant secret');
        await noEvents(res);
      }
      for (const cred of [full, owner.apiKey]) {
        const read = await mcp(cred, {
          jsonrpc: '2.0',
          id: 1,
          method: 'resources/read',
          params: { uri: `workspace://${other.workspaceId}/data-types/${otherTypeId}` },
        });
        expect(read.body.error).toBeDefined();
        expect(JSON.stringify(read.body)).not.toContain('"name"');
      }
      expect(await recordCount(other.workspaceId, otherTypeId, other.apiKey)).toBe(1);
      const still = await t.request(
        'GET',
        `${recordsPath(other.workspaceId, otherTypeId)}/${otherRecordId}`,
        {
          token: other.apiKey,
        },
      );
      expect(still.body.fieldValues).toEqual({ name: 'Other tenant secret' });
    });

    it('refuses bad arguments with the REST route’s {detail}, writing nothing', async () => {
      const before = await recordCount();
      const rest = await t.request('POST', recordsPath(owner.workspaceId, typeId), {
        token: full,
        body: { fieldValues: 'not an object' },
      });
      expect(rest.status).toBe(400);
      const wrongType = await tool(full, 'records.create', {
        dataTypeId: typeId,
        fieldValues: 'not an object',
      });
      expect(wrongType.result.isError).toBe(true);
      expect(wrongType.result.content[0].text).toBe(`400: ${rest.body.detail}`);
      await noEvents(wrongType.res);

      const cases: [string, Record<string, unknown>][] = [
        ['records.create', { dataTypeId: typeId, fieldValues: {} }],
        ['records.create', { dataTypeId: typeId, fieldValues: { name: 'x'.repeat(200_000) } }],
        ['records.create', { dataTypeId: typeId, fieldValues: { name: 'x', nope: 1 } }],
        ['records.create', { dataTypeId: { $gt: 0 }, fieldValues: { name: 'x' } }],
        ['records.create', { dataTypeId: '1 OR 1=1', fieldValues: { name: 'x' } }],
        ['records.create', { dataTypeId: typeId, memberId: 'me', fieldValues: { name: 'x' } }],
        [
          'records.upsert',
          { dataTypeId: typeId, externalId: 'e'.repeat(10_000), fieldValues: { name: 'x' } },
        ],
        ['records.upsert', { dataTypeId: typeId, externalId: '   ', fieldValues: { name: 'x' } }],
        ['records.update', { dataTypeId: typeId, recordId: [1, 2], fieldValues: { name: 'x' } }],
        ['records.search', { dataTypeId: typeId, pageSize: 100_000 }],
        ['records.search', { dataTypeId: typeId, page: -1 }],
        ['tasks.create', { name: '' }],
        ['tasks.create', { name: 'x', dueAt: 'yesterday' }],
        ['tasks.create', { name: 'x', assignees: ['a'] }],
        ['calendar_events.create', { title: 'x', startTime: 'never' }],
        ['chats.send_assistant_message', { chatId: 1, message: '' }],
      ];
      for (const [name, args] of cases) {
        const { res, result } = await tool(full, name, args);
        expect({ name, args: JSON.stringify(args).slice(0, 80), isError: result.isError }).toEqual({
          name,
          args: JSON.stringify(args).slice(0, 80),
          isError: true,
        });
        expect(result.content[0].text).toMatch(/\S/);
        await noEvents(res);
      }
      // NUL characters and lone surrogates are refused before anything runs, naming the field.
      for (const bad of ['a\u0000b', 'a\ud800b']) {
        const res = await mcp(
          full,
          callMessage('records.create', { dataTypeId: typeId, fieldValues: { name: bad } }),
        );
        expect(res.status).toBe(400);
        expect(res.body.detail).toMatch(/fieldValues\.name/);
        await noEvents(res);
      }
      expect(await recordCount()).toBe(before);
    });

    it('stops a deleted app’s token at once on the MCP endpoint', async () => {
      const doomed = await createApp(t, owner.apiKey, { scopes: ['members:read'] });
      const token = (await tokensFor(t, owner, doomed, 'members:read')).access_token as string;
      expect((await tool(token, 'members.search', {})).result.isError).toBeUndefined();
      const del = await t.request('DELETE', `/me/apps/${doomed.id}`, { token: owner.apiKey });
      expect(del.status).toBe(204);
      const after = await mcp(token, callMessage('members.search', {}));
      expect(after.status).toBe(401);
    });
  });

  describe('the authorization server', () => {
    it('re-checks a tampered consent form: another workspace, a wider scope, another redirect URI, no PKCE, no CSRF field', async () => {
      const native = await createApp(t, owner.apiKey, {
        clientType: 'public',
        redirectUris: [LOOPBACK],
        scopes: ['members:read'],
      });
      const browser = new OAuthBrowser();
      let page = await browser.get(
        authorizeUrl(t, {
          response_type: 'code',
          client_id: native.clientId,
          redirect_uri: 'http://localhost:4242/callback',
          scope: 'members:read',
          state: 'st',
          code_challenge: pkcePair().challenge,
          code_challenge_method: 'S256',
        }),
      );
      page = await browser.submit(page.form(), { email: owner.email, password: PASSWORD });
      expect(page.status).toBe(303);
      page = await browser.get(page.location!);
      const consent = page.form();
      const submit = (hidden: Record<string, string>, fields: Record<string, string> = {}) =>
        browser.submit(
          { ...consent, hidden },
          { decision: 'approve', workspace_id: owner.workspaceId, ...fields },
        );
      const foreign = await submit(consent.hidden, { workspace_id: other.workspaceId });
      expect({ status: foreign.status, location: foreign.location }).toEqual({ status: 400, location: null });
      const wider = await submit({ ...consent.hidden, scope: 'members:read members:write' });
      expect(new URL(wider.location!).searchParams.get('error')).toBe('invalid_scope');
      expect(new URL(wider.location!).searchParams.get('code')).toBeNull();
      const elsewhere = await submit({
        ...consent.hidden,
        redirect_uri: 'https://evil.example.com/callback',
      });
      expect({ status: elsewhere.status, location: elsewhere.location }).toEqual({
        status: 400,
        location: null,
      });
      const { code_challenge: _c, code_challenge_method: _m, ...withoutPkce } = consent.hidden;
      const noPkce = await submit(withoutPkce);
      expect(new URL(noPkce.location!).searchParams.get('error')).toBe('invalid_request');
      expect(new URL(noPkce.location!).searchParams.get('code')).toBeNull();
      const { csrf_token: _x, ...withoutCsrf } = consent.hidden;
      const forged = await submit(withoutCsrf);
      expect({ status: forged.status, location: forged.location }).toEqual({ status: 403, location: null });
      const grants = await t.app
        .get(DataSource)
        .query(
          `SELECT count(*)::int AS n FROM oauth_grants g JOIN oauth_apps a ON a.id = g.app_id WHERE a.client_id = $1`,
          [native.clientId],
        );
      expect(grants[0].n).toBe(0);
      const honest = await submit(consent.hidden);
      expect(new URL(honest.location!).origin).toBe('http://localhost:4242');
      expect(new URL(honest.location!).searchParams.get('code')).toBeTruthy();
    });

    it('accepts an access token only as a bearer, and a refresh token only at the token endpoint', async () => {
      const tokens = await tokensFor(t, owner, app, 'members:read');
      const asBearer = await mcp(tokens.refresh_token, callMessage('members.search', {}));
      expect(asBearer.status).toBe(401);
      const rest = await t.request('GET', `/w/${owner.workspaceId}/members`, { token: tokens.refresh_token });
      expect(rest.status).toBe(401);
      const asRefresh = await postForm(t, '/oauth/token', {
        grant_type: 'refresh_token',
        refresh_token: tokens.access_token,
        client_id: app.clientId,
        client_secret: app.clientSecret!,
      });
      expect(asRefresh.body.error).toBe('invalid_grant');
      expect((await mcp(tokens.access_token, callMessage('members.search', {}))).status).toBe(200);
    });
  });

  describe('self rules of the REST routes an OAuth token reaches', () => {
    it('does not let a token or key without a members scope read or change the person’s own member through the self rule', async () => {
      const self = await ownerWithPassword(t, 'Self rule');
      const selfApp = await createApp(t, self.apiKey, {
        scopes: ['workspace:read', 'members:read', 'members:write'],
      });
      const token = (await tokensFor(t, self, selfApp, 'workspace:read')).access_token as string;
      const key = await keyWithScopes(t, self.apiKey, ['workspace:read']);
      const base = `/w/${self.workspaceId}/members/${self.memberId}`;
      for (const cred of [token, key]) {
        for (const [method, path, body] of [
          ['GET', base, undefined],
          ['PUT', base, { name: 'Renamed by an app', email: 'attacker@evil.example.com' }],
          ['DELETE', `${base}/tokens`, undefined],
        ] as const) {
          const res = await t.request(method, path, { token: cred, body });
          expect({ method, path, status: res.status }).toEqual({ method, path, status: 403 });
          expect(JSON.stringify(res.body)).not.toContain(self.email);
          await noEvents(res);
        }
        const viaMcp = await tool(cred, 'members.get', {
          workspaceId: self.workspaceId,
          memberId: self.memberId,
        });
        expect(viaMcp.result.isError).toBe(true);
      }
      const still = await t.request('GET', base, { token: self.apiKey });
      expect(still.body.email).toBe(self.email);
      // Consented, the same routes answer as the person.
      const read = (await tokensFor(t, self, selfApp, 'members:read')).access_token as string;
      expect((await t.request('GET', base, { token: read })).status).toBe(200);
      expect((await t.request('PUT', base, { token: read, body: { name: 'x' } })).status).toBe(403);
      const write = (await tokensFor(t, self, selfApp, 'members:write')).access_token as string;
      const renamed = await t.request('PUT', base, { token: write, body: { name: 'Renamed with consent' } });
      expect(renamed.status).toBe(200);
      expect(renamed.body.name).toBe('Renamed with consent');
    });
  });

  describe('self rules of the work routes an OAuth token reaches', () => {
    it('does not let a token or key without a task scope read the person’s own assignments or start one for them', async () => {
      const self = await ownerWithPassword(t, 'Assignments self rule');
      const selfApp = await createApp(t, self.apiKey, {
        scopes: ['workspace:read', 'task:read', 'task:write'],
      });
      const wf = await createWorkflow(t, self.workspaceId, self.apiKey, {
        name: 'Intake',
        agentId: await agentMember(t, self.workspaceId, self.apiKey),
      });
      const base = `/w/${self.workspaceId}/assignments`;
      const own = await t.request('POST', base, {
        token: self.apiKey,
        body: { workflowId: wf.id, memberId: self.memberId },
      });
      expect(own.status).toBe(201);
      const token = (await tokensFor(t, self, selfApp, 'workspace:read')).access_token as string;
      const key = await keyWithScopes(t, self.apiKey, ['workspace:read']);
      for (const cred of [token, key]) {
        const list = await t.request('GET', base, { token: cred });
        expect(list.status).toBe(200);
        expect(list.body.total).toBe(0);
        expect((await t.request('GET', `${base}/${own.body.id}`, { token: cred })).status).toBe(404);
        const start = await t.request('POST', base, {
          token: cred,
          body: { workflowId: wf.id, memberId: self.memberId },
        });
        expect(start.status).toBe(403);
        await noEvents(start);
      }
      // Consented, the same routes answer as the person.
      const read = (await tokensFor(t, self, selfApp, 'task:read')).access_token as string;
      const listed = await t.request('GET', base, { token: read });
      expect(listed.body.items.map((a: { id: number }) => a.id)).toEqual([own.body.id]);
      expect(
        (await t.request('POST', base, { token: read, body: { workflowId: wf.id, memberId: self.memberId } }))
          .status,
      ).toBe(403);
      const write = (await tokensFor(t, self, selfApp, 'task:write')).access_token as string;
      const started = await t.request('POST', base, {
        token: write,
        body: { workflowId: wf.id, memberId: self.memberId },
      });
      expect(started.status).toBe(201);
    });
  });

  describe('self rules of the inbox routes an OAuth token reaches', () => {
    it('does not let a token or key without an inboxes scope read the inboxes the person owns', async () => {
      const self = await ownerWithPassword(t, 'Inboxes self rule');
      const selfApp = await createApp(t, self.apiKey, { scopes: ['workspace:read', 'inboxes:read'] });
      const inbox = await t.request('POST', `/w/${self.workspaceId}/inboxes`, {
        token: self.apiKey,
        body: { email: `owned-${Date.now()}@inbox.example.com`, name: 'Private inbox' },
      });
      expect(inbox.status).toBe(201);
      const base = `/w/${self.workspaceId}/inboxes`;
      const token = (await tokensFor(t, self, selfApp, 'workspace:read')).access_token as string;
      const key = await keyWithScopes(t, self.apiKey, ['workspace:read']);
      for (const cred of [token, key]) {
        const list = await t.request('GET', base, { token: cred });
        expect(list.status).toBe(200);
        expect(list.body.total).toBe(0);
        const one = await t.request('GET', `${base}/${inbox.body.id}`, { token: cred });
        expect(one.status).toBe(404);
        expect(JSON.stringify(one.body)).not.toContain('Private inbox');
      }
      const read = (await tokensFor(t, self, selfApp, 'inboxes:read')).access_token as string;
      expect((await t.request('GET', `${base}/${inbox.body.id}`, { token: read })).status).toBe(200);
    });
  });

  describe('loopback redirect URIs', () => {
    let native: App;

    beforeAll(async () => {
      native = await createApp(t, owner.apiKey, {
        clientType: 'public',
        redirectUris: [LOOPBACK, 'http://127.0.0.1/cb', 'http://[::1]/cb'],
        scopes: ['members:read'],
      });
    });

    it.each([
      'http://localhost.evil.com/callback',
      'http://localhost.evil.com:3000/callback',
      'http://localhost@evil.com/callback',
      'http://localhost:3000@evil.com/callback',
      'http://localhost:3000\\@evil.com/callback',
      'http://evil.com@localhost:3000/callback',
      'http://user:pw@localhost:3000/callback',
      'http://127.0.0.1.nip.io/cb',
      'http://127.0.0.1.nip.io:3000/cb',
      'http://LOCALHOST:3000/callback',
      'HTTP://localhost:3000/callback',
      'https://localhost:3000/callback',
      'http://localhost:3000/callback#frag',
      'http://localhost:3000/callback/../evil',
      'http://localhost:3000/callback/%2e%2e/evil',
      'http://localhost:3000/callback%2F..%2Fevil',
      'http://localhost:3000/Callback',
      'http://localhost:3000/callback/',
      'http://localhost:3000/callback?x=1',
      'http://localhost:3000//evil.com/callback',
      'http://localhost:/callback',
      'http://localhost:99999/callback',
      'http://localhost:+3000/callback',
      'http://localhost./callback',
      'http://foo.localhost/callback',
      'http://localhost%2eevil.com/callback',
      'http://127.0.0.1:3000/callback',
      'http://[::1]:3000/callback',
      'http://[0:0:0:0:0:0:0:1]/cb',
      'http://[::ffff:127.0.0.1]/cb',
      'http://127.1/cb',
      'http://2130706433/cb',
      'http://0x7f.0.0.1/cb',
      '//localhost:3000/callback',
      ' http://localhost:3000/callback',
      'http://localhost:3000/call\tback',
    ])('never redirects to %j', async (redirectUri) => {
      const page = await new OAuthBrowser().get(
        authorizeUrl(t, {
          response_type: 'code',
          client_id: native.clientId,
          redirect_uri: redirectUri,
          code_challenge: pkcePair().challenge,
          code_challenge_method: 'S256',
        }),
      );
      expect({ redirectUri, status: page.status, location: page.location }).toEqual({
        redirectUri,
        status: 400,
        location: null,
      });
    });

    it('refuses look-alike loopback redirect URIs at registration', async () => {
      for (const uri of [
        'http://localhost.evil.com/cb',
        'http://localhost@evil.com/cb',
        'http://u@localhost/cb',
        'http://127.0.0.1.nip.io/cb',
        'http://[::ffff:127.0.0.1]/cb',
        'http://foo.localhost/cb',
        'http://localhost./cb',
        'http://localhost/cb#f',
        'http://0.0.0.0/cb',
      ]) {
        const res = await t.request('POST', '/me/apps', {
          token: owner.apiKey,
          body: { name: 'x', redirectUris: [uri], scopes: ['members:read'], clientType: 'public' },
        });
        expect({ uri, status: res.status }).toEqual({ uri, status: 400 });
        await noEvents(res);
        const dcr = await t.request('POST', '/oauth/register', {
          body: { client_name: 'x', redirect_uris: [uri], token_endpoint_auth_method: 'none' },
        });
        expect({ uri, status: dcr.status }).toEqual({ uri, status: 400 });
      }
    });

    it('needs PKCE from a public client on a loopback URI, and binds the code to the exact URI, port included', async () => {
      const noPkce = await new OAuthBrowser().get(
        authorizeUrl(t, {
          response_type: 'code',
          client_id: native.clientId,
          redirect_uri: 'http://localhost:51234/callback',
          state: 'st',
        }),
      );
      expect(noPkce.status).toBe(302);
      const back = new URL(noPkce.location!);
      expect(`${back.origin}${back.pathname}`).toBe('http://localhost:51234/callback');
      expect(back.searchParams.get('error')).toBe('invalid_request');
      expect(back.searchParams.get('code')).toBeNull();

      const given = 'http://localhost:51234/callback';
      const { verifier, challenge } = pkcePair();
      const redirect = await authorizeThroughPages(t, owner, {
        client_id: native.clientId,
        redirect_uri: given,
        scope: 'members:read',
        state: 's',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      expect(`${redirect.origin}${redirect.pathname}`).toBe(given);
      const code = redirect.searchParams.get('code')!;
      for (const other of [
        LOOPBACK,
        'http://localhost:51235/callback',
        'http://localhost/callback',
        'http://127.0.0.1:51234/callback',
      ]) {
        const res = await postForm(t, '/oauth/token', {
          grant_type: 'authorization_code',
          code,
          redirect_uri: other,
          client_id: native.clientId,
          code_verifier: verifier,
        });
        expect({ other, status: res.status, error: res.body.error }).toEqual({
          other,
          status: 400,
          error: 'invalid_grant',
        });
      }
      const noVerifier = await postForm(t, '/oauth/token', {
        grant_type: 'authorization_code',
        code,
        redirect_uri: given,
        client_id: native.clientId,
      });
      expect(noVerifier.body.error).toBe('invalid_grant');
      const ok = await postForm(t, '/oauth/token', {
        grant_type: 'authorization_code',
        code,
        redirect_uri: given,
        client_id: native.clientId,
        code_verifier: verifier,
      });
      expect(ok.status).toBe(200);
      expect(ok.body.scope).toBe('members:read');
    });
  });
});
