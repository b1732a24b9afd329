import { startTestApp, TestApp, TestResponse } from '../support/app';

/**
 * Walks every operation of the service's own OpenAPI document with malformed path ids,
 * query values and bodies, so that a route added later is covered without anyone listing
 * it here. What a client may rely on: never a 5xx, every 4xx a JSON `{detail}` string,
 * every non-public operation 401 without credentials (whatever the body), and a server
 * still healthy afterwards.
 */

interface Schema {
  type?: string;
  $ref?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  example?: unknown;
  nullable?: boolean;
  additionalProperties?: boolean | Schema;
}

interface Operation {
  method: string;
  /** Without the /api/v2 prefix, with `{name}` placeholders. */
  path: string;
  pathParams: string[];
  queryParams: string[];
  body?: Schema;
  isPublic: boolean;
}

interface OpenApiDocument {
  paths: Record<
    string,
    Record<
      string,
      {
        security?: unknown[];
        parameters?: Array<{ name: string; in: string }>;
        requestBody?: { content?: Record<string, { schema?: Schema }> };
      }
    >
  >;
  components: { schemas: Record<string, Schema> };
}

const PREFIX = '/api/v2';
const CONCURRENCY = 10;
const TWO_MB = 'x'.repeat(2 * 1024 * 1024);

function nested(depth: number): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
}
const DEEP = nested(2000);

/** Path segments a client might send where an id is expected (already URL-encoded). */
const BAD_PATH_VALUES = ['0', '-1', 'abc', '99999999999999999999', 'a%00b', '%F0%9F%92%A9', 'x'.repeat(600)];

/** Query values for every documented query parameter (already URL-encoded). */
const BAD_QUERY_VALUES = [
  '',
  '0',
  '-1',
  'abc',
  '1.5',
  '1e400',
  '99999999999999999999',
  'a%00b',
  '%ED%A0%80',
  'x'.repeat(600),
  '%25%5F%5C',
  "'%3B--",
  '99999999999999999999-99999999999999999999',
];

/** Values put in place of each field of an otherwise plausible body: wrong types, nulls, hostile strings. */
const BAD_FIELD_VALUES: unknown[] = [
  null,
  123,
  -1,
  1.5,
  1e20,
  true,
  'abc',
  '',
  [],
  {},
  ['abc'],
  [{}],
  'a\u0000b',
  '\ud800',
  TWO_MB,
  DEEP,
];

function operationsOf(doc: OpenApiDocument): Operation[] {
  const ops: Operation[] = [];
  for (const [fullPath, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const params = op.parameters ?? [];
      ops.push({
        method: method.toUpperCase(),
        path: fullPath.startsWith(PREFIX) ? fullPath.slice(PREFIX.length) : fullPath,
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: params.filter((p) => p.in === 'query').map((p) => p.name),
        body: op.requestBody?.content?.['application/json']?.schema,
        isPublic: !op.security?.length,
      });
    }
  }
  return ops;
}

function resolve(doc: OpenApiDocument, s: Schema): Schema {
  return s.$ref ? doc.components.schemas[s.$ref.split('/').pop()!] : s;
}

/** A plausible value for a schema (required and optional fields alike), so a fuzzed field is not the only thing wrong. */
function plausible(doc: OpenApiDocument, schema: Schema, name = '', depth = 0): unknown {
  const s = resolve(doc, schema);
  if (s.enum?.length) return s.enum[0];
  if (s.example !== undefined) return s.example;
  if (s.properties && depth < 4) {
    return Object.fromEntries(
      Object.entries(s.properties).map(([k, v]) => [k, plausible(doc, v, k, depth + 1)]),
    );
  }
  switch (s.type) {
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return s.items && resolve(doc, s.items).properties ? [plausible(doc, s.items, name, depth + 1)] : [];
    case 'object':
      // A documented nullable "object" without properties is a `string | null` field.
      if (!s.nullable || s.additionalProperties) return {};
  }
  if (/email/i.test(name)) return 'robust@example.com';
  if (/phone/i.test(name)) return '+14155550100';
  return 'robust';
}

/** Every field path of a body schema, nested objects and array items included (`["members", 0, "email"]`). */
function fieldPaths(
  doc: OpenApiDocument,
  schema: Schema,
  prefix: Array<string | number> = [],
): Array<Array<string | number>> {
  const s = resolve(doc, schema);
  const out: Array<Array<string | number>> = [];
  if (prefix.length > 4) return out;
  for (const [k, v] of Object.entries(s.properties ?? {})) {
    const path = [...prefix, k];
    out.push(path);
    const child = resolve(doc, v);
    if (child.properties) out.push(...fieldPaths(doc, child, path));
    if (child.type === 'array' && child.items && resolve(doc, child.items).properties)
      out.push(...fieldPaths(doc, child.items, [...path, 0]));
  }
  return out;
}

function withField(base: unknown, path: Array<string | number>, value: unknown): unknown {
  const copy = structuredClone(base) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) {
    if (typeof node[key] !== 'object' || node[key] === null) node[key] = typeof key === 'number' ? [] : {};
    node = node[key] as Record<string | number, unknown>;
  }
  node[path[path.length - 1]] = value;
  return copy;
}

function describeValue(v: unknown): string {
  if (v === TWO_MB) return '<2 MB string>';
  if (v === DEEP) return '<2000-deep nesting>';
  return JSON.stringify(v);
}

async function inPool<T>(items: T[], run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < items.length) await run(items[next++]);
    }),
  );
}

interface Probe {
  op: Operation;
  label: string;
  path: string;
  token?: string;
  body?: unknown;
  raw?: string;
  /** The path parameter a path probe replaced, and with what. */
  param?: string;
  value?: string;
}

/** What is wrong with a response to a malformed request, or null. */
function complaint(res: TestResponse): string | null {
  if (res.status >= 500) return `${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
  if (res.status >= 400) {
    if (!(res.headers.get('content-type') ?? '').includes('application/json'))
      return `${res.status} without a JSON body (${res.headers.get('content-type')})`;
    const detail = (res.body as { detail?: unknown })?.detail;
    if (typeof detail !== 'string' || !detail)
      return `${res.status} without a {detail} string: ${JSON.stringify(res.body).slice(0, 200)}`;
  }
  return null;
}

describe('Robustness: every documented operation against malformed input (e2e)', () => {
  let t: TestApp;
  let doc: OpenApiDocument;
  let ops: Operation[];
  let key: string;
  let wid: string;
  const validPath: Record<string, string> = {};

  function pathWith(op: Operation, overrides: Record<string, string> = {}): string {
    return op.path.replace(/\{(\w+)\}/g, (_, name: string) => overrides[name] ?? validPath[name] ?? '1');
  }

  async function probe(probes: Probe[], expectStatus?: (p: Probe) => number | undefined): Promise<string[]> {
    const problems: string[] = [];
    await inPool(probes, async (p) => {
      const res = await t.request(p.op.method, p.path, {
        token: p.token,
        body: p.body,
        raw: p.raw,
      });
      const expected = expectStatus?.(p);
      const wrong =
        expected !== undefined && res.status !== expected
          ? `${res.status} where ${expected} was expected: ${JSON.stringify(res.body).slice(0, 200)}`
          : complaint(res);
      if (wrong) problems.push(`${p.op.method} ${p.op.path} [${p.label}]: ${wrong}`);
    });
    return problems.sort();
  }

  beforeAll(async () => {
    t = await startTestApp();
    const owner = await t.bootstrap();
    key = owner.apiKey;
    wid = owner.workspaceId;
    const spec = await t.request('GET', '/openapi.json');
    expect(spec.status).toBe(200);
    doc = spec.body as OpenApiDocument;
    ops = operationsOf(doc);

    // Real ids, so that bodies and queries reach the handlers rather than stopping at a 404.
    const signup = await t.request('POST', `/w/${wid}/create-signup`, {
      token: key,
      body: { member: { email: 'target@example.com', name: 'Target' } },
    });
    const role = await t.request('POST', `/w/${wid}/member-roles`, {
      token: key,
      body: { name: 'robust role', permissions: ['members:read'] },
    });
    const invitation = await t.request('POST', `/w/${wid}/invitations`, {
      token: key,
      body: { email: 'invitee@example.com' },
    });
    const apiKey = await t.request('POST', '/me/api-keys', {
      token: key,
      body: { name: 'robust key', scopes: ['members:read'] },
    });
    expect([signup.status, role.status, invitation.status, apiKey.status]).toEqual([201, 201, 201, 201]);
    Object.assign(validPath, {
      wid,
      memberId: String(signup.body.member.id),
      roleId: String(role.body.id),
      invitationId: String(invitation.body.id),
      keyId: String(apiKey.body.id),
      streamName: `member-${signup.body.member.id}`,
      slug: 'members',
    });
  }, 60_000);
  afterAll(() => t.close());

  it('reads every operation from the OpenAPI document', () => {
    // A floor, not a list: new routes join the walk by themselves.
    expect(ops.length).toBeGreaterThanOrEqual(33);
    expect(ops.filter((o) => o.body).length).toBeGreaterThanOrEqual(10);
    expect(ops.filter((o) => o.queryParams.includes('page')).length).toBeGreaterThanOrEqual(7);
  });

  it('answers malformed path ids with a 4xx {detail}, never a 5xx, and ids that cannot exist with 404', async () => {
    const probes: Probe[] = ops.flatMap((op) =>
      op.pathParams.flatMap((name) =>
        BAD_PATH_VALUES.map((value) => ({
          op,
          label: `path ${name}=${value.slice(0, 30)}`,
          path: pathWith(op, { [name]: value }),
          token: key,
          // A plausible body, so that only the path is wrong.
          body: op.body ? plausible(doc, op.body) : undefined,
          param: name,
          value,
        })),
      ),
    );
    expect(probes.length).toBeGreaterThan(0);
    // An id that is not a positive number the column can hold names nothing: 404, as an
    // id that does not exist, never a 400 on one route and a 404 on the next.
    const notAnId = new Set(['0', '-1', 'abc', '99999999999999999999']);
    const expectStatus = (p: Probe) =>
      /^(wid|\w+Id)$/.test(p.param ?? '') && notAnId.has(p.value ?? '') ? 404 : undefined;
    expect(await probe(probes, expectStatus)).toEqual([]);
  }, 120_000);

  it('answers malformed query values with a 4xx {detail} or a success, never a 5xx', async () => {
    const probes: Probe[] = ops.flatMap((op) =>
      op.queryParams.flatMap((name) => [
        ...BAD_QUERY_VALUES.map((value) => ({
          op,
          label: `query ${name}=${value.slice(0, 30)}`,
          path: `${pathWith(op)}?${name}=${value}`,
          token: key,
        })),
        { op, label: `query ${name} twice`, path: `${pathWith(op)}?${name}=1&${name}=2`, token: key },
        { op, label: `query ${name}[a]`, path: `${pathWith(op)}?${name}[a]=1`, token: key },
      ]),
    );
    expect(probes.length).toBeGreaterThan(0);
    expect(await probe(probes)).toEqual([]);
  }, 120_000);

  it('answers malformed bodies with a 4xx {detail} or a success, never a 5xx', async () => {
    const probes: Probe[] = [];
    for (const op of ops.filter((o) => o.body)) {
      const base = plausible(doc, op.body!);
      const path = pathWith(op);
      const whole: Array<[string, Partial<Probe>]> = [
        ['truncated JSON', { raw: JSON.stringify(base).slice(0, -3) }],
        ['empty body', { raw: '' }],
        ['null body', { raw: 'null' }],
        ['array body', { raw: '[]' }],
        ['string body', { raw: '"abc"' }],
        ['number body', { raw: '1' }],
        ['2000-deep body', { body: DEEP }],
        ['2000-deep arrays', { raw: `${'['.repeat(2000)}${']'.repeat(2000)}` }],
        ['NUL in a field name', { body: { ...(base as object), 'a\u0000b': 1 } }],
        ['unknown field', { body: { ...(base as object), colour: 'red' } }],
      ];
      for (const [label, p] of whole) probes.push({ op, label, path, token: key, ...p });
      for (const field of fieldPaths(doc, op.body!)) {
        // Size and depth are the body's as a whole: tried on top-level fields only.
        const values =
          field.length > 1 ? BAD_FIELD_VALUES.filter((v) => v !== TWO_MB && v !== DEEP) : BAD_FIELD_VALUES;
        for (const value of values) {
          probes.push({
            op,
            label: `${field.join('.')}=${describeValue(value).slice(0, 30)}`,
            path,
            token: key,
            body: withField(base, field, value),
          });
        }
      }
    }
    expect(probes.length).toBeGreaterThan(100);
    expect(await probe(probes)).toEqual([]);
  }, 180_000);

  it('answers every non-public operation without credentials with 401, whatever the body', async () => {
    const probes: Probe[] = [];
    for (const op of ops.filter((o) => !o.isPublic)) {
      const path = pathWith(op);
      probes.push({ op, label: 'no body', path });
      if (op.body) {
        probes.push({ op, label: 'truncated JSON', path, raw: '{"name":' });
        probes.push({ op, label: 'NUL in a string', path, body: { name: 'a\u0000b' } });
        probes.push({ op, label: '2000-deep body', path, body: DEEP });
      }
    }
    const problems: string[] = [];
    await inPool(probes, async (p) => {
      const res = await t.request(p.op.method, p.path, { body: p.body, raw: p.raw });
      if (res.status !== 401 || typeof res.body?.detail !== 'string')
        problems.push(
          `${p.op.method} ${p.op.path} [${p.label}]: ${res.status} ${JSON.stringify(res.body).slice(0, 120)}`,
        );
      // RFC 6750 §3: the Bearer challenge, possibly with auth-params (/mcp names its resource_metadata, RFC 9728 §5.1).
      else if (!/^Bearer(?: [a-z_]+="[^"]*")?$/.test(res.headers.get('www-authenticate') ?? ''))
        problems.push(`${p.op.method} ${p.op.path} [${p.label}]: 401 without WWW-Authenticate: Bearer`);
    });
    expect(problems.sort()).toEqual([]);
  }, 60_000);

  it('stays healthy afterwards: /health is 200 and an authenticated request still works', async () => {
    const health = await t.request('GET', '/health');
    expect(health.status).toBe(200);
    const workspace = await t.request('GET', `/w/${wid}`, { token: key });
    expect(workspace.status).toBe(200);
    expect(workspace.body.id ?? workspace.body.uuid).toBe(wid);
  });
});
