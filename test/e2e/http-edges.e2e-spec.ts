import * as http from 'node:http';
import { startTestApp, TestApp } from '../support/app';
import { MAX_PARAM_LENGTH } from '../../src/core/http/transport-errors';

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * A request through node:http, for what fetch will not send: headers larger than the
 * server takes, a Content-Length without the body behind it.
 */
function rawRequest(
  t: TestApp,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<RawResponse> {
  const { hostname, port } = new URL(t.baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, method, path: `/api/v2${path}`, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

function expectDetail(res: RawResponse, status: number, detail: RegExp): void {
  expect({ status: res.status, body: res.body }).toMatchObject({ status });
  expect(res.headers['content-type']).toMatch(/application\/json/);
  expect(JSON.parse(res.body)).toEqual({ detail: expect.stringMatching(detail) });
  expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
}

interface Operation {
  method: string;
  path: string;
}

/** Every operation of the OpenAPI document that needs a credential, with its path filled in. */
async function protectedOperations(t: TestApp): Promise<Operation[]> {
  const doc = (await t.request('GET', '/openapi.json')).body as {
    paths: Record<string, Record<string, { security?: unknown[] }>>;
  };
  const ops: Operation[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!op.security?.length) continue;
      const path = template
        .replace(/^\/api\/v2/, '')
        .replace('{wid}', '6f1c1b52-7d2a-4a55-9d6f-7b4c2a0e9d11')
        .replace(/\{[^}]+\}/g, '1');
      ops.push({ method: method.toUpperCase(), path });
    }
  }
  return ops;
}

describe('anonymous requests are refused before their body is read (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('answers 401 with WWW-Authenticate: Bearer on every non-public operation, whatever the body', async () => {
    const ops = await protectedOperations(t);
    expect(ops.length).toBeGreaterThanOrEqual(25);
    expect(ops).toContainEqual({ method: 'POST', path: '/me/api-keys' });
    const bodies: [string, string][] = [
      ['application/json', '{"name":'],
      ['application/json', JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) })],
      ['application/x-www-form-urlencoded', 'name=x&scopes=workspace%3Aadmin'],
      ['text/plain', 'hello'],
    ];
    for (const op of ops) {
      const variants = op.method === 'GET' ? [undefined] : bodies;
      for (const variant of variants) {
        const res = await t.request(op.method, op.path, {
          ...(variant && { raw: variant[1], headers: { 'content-type': variant[0] } }),
        });
        const seen = { ...op, type: variant?.[0], status: res.status };
        expect(seen).toEqual({ ...op, type: variant?.[0], status: 401 });
        // The scheme, plus an auth-param where the route has one (RFC 6750 §3: /mcp names its resource metadata).
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer(?: resource_metadata="[^"]+")?$/);
        expect(res.body.detail).toMatch(/Authorization: Bearer/);
        expect(res.requestId).toBeTruthy();
      }
    }
  });

  it('refuses a body larger than the server takes with 401, not 413, when there is no credential', async () => {
    const res = await rawRequest(t, 'POST', '/me/api-keys', {
      'content-type': 'application/json',
      'content-length': String(30 * 1024 * 1024),
    });
    expectDetail(res, 401, /Authorization: Bearer/);
  });

  it('still reads the body of public routes and of requests with a credential', async () => {
    const a = await t.bootstrap();
    const bad = await t.request('PUT', `/w/${a.workspaceId}`, { token: a.apiKey, raw: '{"name":' });
    expect(bad.status).toBe(400);
    const wrongCredential = await t.request('POST', '/me/api-keys', { token: 'wsk_guess', body: {} });
    expect(wrongCredential.status).toBe(401);
    expect(wrongCredential.headers.get('www-authenticate')).toBe('Bearer');
  });
});

describe('anonymous refusals count against the client address (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: '2' } });
  });
  afterAll(() => t.close());

  it('answers 429 with Retry-After once the address has used its budget', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await t.request('POST', '/me/api-keys', { raw: '{"x' });
      statuses.push(res.status);
      if (res.status === 429) {
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(res.body.detail).toMatch(/per client address/);
      }
    }
    expect(statuses).toEqual([401, 401, 429]);
  });
});

describe('answers written before a route runs (e2e)', () => {
  let t: TestApp;
  let token: string;
  let wid: string;
  beforeAll(async () => {
    t = await startTestApp();
    const a = await t.bootstrap();
    token = a.apiKey;
    wid = a.workspaceId;
  });
  afterAll(() => t.close());

  it('414 for a path parameter longer than the router takes', async () => {
    const res = await rawRequest(t, 'GET', `/w/${'a'.repeat(MAX_PARAM_LENGTH + 1)}`, {
      authorization: `Bearer ${token}`,
    });
    expectDetail(res, 414, new RegExp(`longer than ${MAX_PARAM_LENGTH} characters`));
  });

  it('400 for a path that is not valid percent-encoding', async () => {
    const res = await rawRequest(t, 'GET', '/w/%E0%A4%A', { authorization: `Bearer ${token}` });
    expectDetail(res, 400, /percent-encoding/);
  });

  it('431 for headers larger than the server takes', async () => {
    const res = await rawRequest(t, 'GET', '/w', {
      authorization: `Bearer ${token}`,
      'x-padding': 'a'.repeat(20_000),
    });
    expectDetail(res, 431, /headers are larger than 16 KB/);
  });

  it('413 for a body larger than the limit', async () => {
    const res = await rawRequest(t, 'PUT', `/w/${wid}`, {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'content-length': String(26 * 1024 * 1024),
    });
    expectDetail(res, 413, /too large/);
  });

  it('400 for malformed or empty JSON, and no event', async () => {
    for (const raw of ['{"name":', '']) {
      const res = await t.request('PUT', `/w/${wid}`, { token, raw });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(raw ? /not valid JSON/ : /body is empty/);
      expect(res.requestId).toBeTruthy();
      expect(await t.eventsOf(res)).toEqual([]);
    }
  });

  it('415 naming application/json for a form-encoded, text, XML or untyped body, and no event', async () => {
    for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'application/xml']) {
      const res = await t.request('PUT', `/w/${wid}`, {
        token,
        raw: 'name=Renamed',
        headers: { 'content-type': type },
      });
      expect({ type, status: res.status }).toEqual({ type, status: 415 });
      expect(res.body.detail).toBe(`Content-Type ${type} is not supported; send application/json`);
      expect(await t.eventsOf(res)).toEqual([]);
    }
    const untyped = await rawRequest(t, 'PUT', `/w/${wid}`, { authorization: `Bearer ${token}` }, 'name=x');
    expectDetail(untyped, 415, /no Content-Type; send application\/json/);
    expect((await t.request('GET', `/w/${wid}`, { token })).body.name).not.toBe('Renamed');
  });

  it('400 naming the key for __proto__ or constructor.prototype anywhere in a body, and no event', async () => {
    const cases: [string, string][] = [
      ['{"name":"x","__proto__":{"isAdmin":true}}', '__proto__: the key "__proto__" is not allowed'],
      [
        '{"settings":{"features":{"\\u005f_proto__":{"a":1}}}}',
        'settings.features.__proto__: the key "__proto__" is not allowed',
      ],
      [
        '{"name":"x","constructor":{"prototype":{"isAdmin":true}}}',
        'constructor.prototype: the key "constructor" with a "prototype" is not allowed',
      ],
    ];
    for (const [raw, detail] of cases) {
      const res = await t.request('PUT', `/w/${wid}`, { token, raw });
      expect({ raw, status: res.status, body: res.body }).toEqual({ raw, status: 400, body: { detail } });
      expect(await t.eventsOf(res)).toEqual([]);
    }
    // A key merely named "constructor" or "prototype" was deleted on the way in (200 without
    // it): now a 400 naming it, and nothing changes.
    for (const key of ['constructor', 'prototype']) {
      const res = await t.request('PUT', `/w/${wid}`, {
        token,
        body: { settings: { features: { [key]: true, beta: true } } },
      });
      expect({ key, status: res.status, detail: res.body.detail }).toEqual({
        key,
        status: 400,
        detail: `settings.features.${key}: the key "${key}" is not accepted (JavaScript objects reserve it); use another name`,
      });
      expect(await t.eventsOf(res)).toEqual([]);
    }
    // Other keys Object.prototype holds are data like any other, kept as sent.
    const fine = await t.request('PUT', `/w/${wid}`, {
      token,
      body: { settings: { features: { toString: true, valueOf: false, beta: true } } },
    });
    expect(fine.status).toBe(200);
    const read = await t.request('GET', `/w/${wid}`, { token });
    expect(read.body.settings.features).toMatchObject({ toString: true, valueOf: false, beta: true });
  });

  it("keeps a tool schema's properties named like Object.prototype's keys, and refuses constructor / prototype", async () => {
    const kit = await t.request('POST', `/w/${wid}/custom-toolkits`, {
      token,
      body: { name: 'Keys', slug: 'proto_keys' },
    });
    expect(kit.status).toBe(201);
    const tools = `/w/${wid}/custom-toolkits/${kit.body.id}/tools`;
    const inputSchema = {
      type: 'object',
      properties: { toString: { type: 'string' }, valueOf: { type: 'number' }, id: { type: 'string' } },
      required: ['toString', 'id'],
    };
    const created = await t.request('POST', tools, { token, body: { name: 'lookup', inputSchema } });
    expect(created.status).toBe(201);
    expect(created.body.inputSchema).toEqual(inputSchema);
    const read = await t.request('GET', `${tools}/${created.body.id}`, { token });
    expect(read.body.inputSchema).toEqual(inputSchema);
    const refused = await t.request('POST', tools, {
      token,
      body: {
        name: 'ctor',
        inputSchema: { type: 'object', properties: { constructor: { type: 'string' } } },
      },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toMatch(
      /^inputSchema\.properties\.constructor: the key "constructor" is not accepted/,
    );
    expect(await t.eventsOf(refused)).toEqual([]);
  });
});

describe('a known path with a method it does not serve (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('is 405 with Allow listing the methods the path serves, and {detail}', async () => {
    const a = await t.bootstrap();
    const cases: [string, string, string][] = [
      ['PATCH', `/w/${a.workspaceId}`, 'GET, HEAD, PUT'],
      ['DELETE', `/w/${a.workspaceId}`, 'GET, HEAD, PUT'],
      ['POST', `/w/${a.workspaceId}/member-roles/7`, 'DELETE, GET, HEAD, PUT'],
      ['PUT', '/me/api-keys', 'GET, HEAD, POST'],
      ['OPTIONS', '/resources/registry', 'GET, HEAD'],
    ];
    for (const [method, path, allow] of cases) {
      const res = await t.request(method, path, { token: a.apiKey });
      expect({ method, path, status: res.status, allow: res.headers.get('allow') }).toEqual({
        method,
        path,
        status: 405,
        allow,
      });
      expect(res.body.detail).toBe(`${method} is not allowed on /api/v2${path}; allowed: ${allow}`);
      expect(res.requestId).toBeTruthy();
    }
    // An unknown path stays 404.
    const unknown = await t.request('PATCH', '/nothing-here', { token: a.apiKey });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('allow')).toBeNull();
  });
});
