import { startTestApp, TestApp } from '../support/app';

describe('HTTP conventions (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('answers an unknown route with 404 and a JSON detail', async () => {
    const res = await t.request('GET', '/nope');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(res.body).toEqual({ detail: 'No route matches GET /api/v2/nope' });
  });

  it('returns the caller’s X-Request-Id, or makes one, on every response', async () => {
    const given = await t.request('GET', '/resources/registry', {
      headers: { 'x-request-id': 'trace-abc.123' },
    });
    expect(given.requestId).toBe('trace-abc.123');
    const made = await t.request('GET', '/nope');
    expect(made.requestId).toMatch(/^[0-9a-f-]{36}$/);
    const unsafe = await t.request('GET', '/resources/registry', {
      headers: { 'x-request-id': 'bad id with spaces' },
    });
    expect(unsafe.requestId).not.toBe('bad id with spaces');
  });

  it('answers malformed JSON with 400 and a detail', async () => {
    const a = await t.bootstrap();
    const res = await t.request('PUT', `/w/${a.workspaceId}`, { token: a.apiKey, raw: '{"name":' });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/JSON/);
  });

  it('validates pagination parameters and accepts page_size as an alias', async () => {
    const a = await t.bootstrap();
    const alias = await t.request('GET', '/w?page_size=7', { token: a.apiKey });
    expect(alias.body).toMatchObject({ page: 1, pageSize: 7 });
    const tooBig = await t.request('GET', '/w?pageSize=1001', { token: a.apiKey });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.detail).toMatch(/^pageSize/);
    const notNumber = await t.request('GET', '/w?page=first', { token: a.apiKey });
    expect(notNumber.status).toBe(400);
    expect(notNumber.body.detail).toMatch(/^page:/);
    const unknown = await t.request('GET', '/w?colour=red', { token: a.apiKey });
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toMatch(/colour/);
  });

  it('hides the cause of a 5xx behind the fixed detail', async () => {
    const a = await t.bootstrap();
    // A real fault: the read model's table disappears under the running service.
    await t.app.get(require('typeorm').DataSource).query('ALTER TABLE workspaces RENAME TO workspaces_gone');
    try {
      const res = await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ detail: 'An internal server error occurred' });
    } finally {
      await t.app
        .get(require('typeorm').DataSource)
        .query('ALTER TABLE workspaces_gone RENAME TO workspaces');
    }
  });
});

describe('public resource registry (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('lists every resource kind with all seven fields, without authentication', async () => {
    const res = await t.request('GET', '/resources/registry');
    expect(res.status).toBe(200);
    const slugs = res.body.resources.map((r: { slug: string }) => r.slug);
    for (const kind of [
      'workspace',
      'member',
      'chat',
      'message',
      'data-type',
      'data-record',
      'workflow',
      'task',
      'assignment',
      'inbox',
      'phone-number',
      'calendar',
      'calendar-event',
      'file',
      'custom-toolkit',
      'mcp-server',
      'event-rule',
      'member-role',
    ]) {
      expect(slugs).toContain(kind);
    }
    for (const r of res.body.resources) {
      expect(Object.keys(r).sort()).toEqual([
        'description',
        'label',
        'requiresFeature',
        'scope',
        'slug',
        'unit',
        'unitPlural',
      ]);
      for (const v of Object.values(r)) expect(typeof v).toBe('string');
      expect(['workspace', 'org', 'any']).toContain(r.scope);
    }
    expect(new Set(slugs).size).toBe(slugs.length);
  });

  it('returns one kind by slug, and 404 with a detail for an unknown slug', async () => {
    const one = await t.request('GET', '/resources/phone-number');
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ slug: 'phone-number', requiresFeature: 'Phone', scope: 'workspace' });
    const none = await t.request('GET', '/resources/spaceship');
    expect(none.status).toBe(404);
    expect(none.body.detail).toMatch(/spaceship/);
  });

  it('publishes an OpenAPI document listing the registry paths, and a docs page', async () => {
    const doc = await t.request('GET', '/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining([
        '/api/v2/resources/registry',
        '/api/v2/resources/{slug}',
        '/api/v2/w',
        '/api/v2/w/{wid}',
        '/api/v2/health',
      ]),
    );
    expect(doc.body.components.schemas.ResourceMetadataResponse.required).toEqual(
      expect.arrayContaining([
        'slug',
        'label',
        'unit',
        'unitPlural',
        'description',
        'requiresFeature',
        'scope',
      ]),
    );
    const page = await t.request('GET', '/docs');
    expect(page.status).toBe(200);
    expect(String(page.body)).toMatch(/<html/i);
  });

  it('reports health of PostgreSQL, Redis and the event store', async () => {
    // A check can time out under load: it must come back up, so ask again until then.
    const deadline = Date.now() + 10_000;
    let res = await t.request('GET', '/health');
    while (res.status !== 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      res = await t.request('GET', '/health');
    }
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'up', checks: { postgres: 'up', redis: 'up', eventStore: 'up' } });
  });
});

describe('health with Redis unreachable (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { REDIS_URL: 'redis://127.0.0.1:1' } });
  });
  afterAll(() => t.close());

  it('answers 503 naming Redis', async () => {
    const res = await t.request('GET', '/health');
    expect(res.status).toBe(503);
    expect(res.body.detail).toMatch(/redis/);
    expect(res.body.checks).toMatchObject({ postgres: 'up', redis: 'down' });
  });
});
