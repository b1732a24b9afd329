import { startTestApp, TestApp } from '../support/app';

const APP = 'https://app.example.com';
const OTHER = 'https://evil.example.net';

const preflight = (origin: string, method = 'PUT') => ({
  headers: {
    origin,
    'access-control-request-method': method,
    'access-control-request-headers': 'authorization, content-type, if-match',
  },
});

describe('CORS with CORS_ORIGINS set (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { CORS_ORIGINS: `${APP}, http://localhost:5173` } });
  });
  afterAll(() => t.close());

  it('answers a preflight from an allowed origin with 204 and what a browser client needs', async () => {
    const a = await t.bootstrap();
    const res = await t.request('OPTIONS', `/w/${a.workspaceId}`, preflight(APP));
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(APP);
    expect(res.headers.get('access-control-allow-methods')).toBe('GET, HEAD, POST, PUT, DELETE');
    expect(res.headers.get('access-control-allow-headers')).toBe(
      'Authorization, Content-Type, Idempotency-Key, If-Match, X-Request-Id, Mcp-Protocol-Version',
    );
    expect(res.headers.get('access-control-max-age')).toBe('600');
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    expect(res.headers.get('vary')).toMatch(/Origin/);
    // No credential needed for a preflight: browsers never send one.
    const second = await t.request('OPTIONS', '/me/api-keys', preflight('http://localhost:5173', 'POST'));
    expect(second.status).toBe(204);
    expect(second.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
  });

  it('gives another origin no CORS header: its preflight is an ordinary OPTIONS (405 with Allow)', async () => {
    const a = await t.bootstrap();
    const res = await t.request('OPTIONS', `/w/${a.workspaceId}`, preflight(OTHER));
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, PUT');
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('access-control-allow-methods')).toBeNull();
    expect(res.headers.get('vary')).toMatch(/Origin/);
    const get = await t.request('GET', `/w/${a.workspaceId}`, {
      token: a.apiKey,
      headers: { origin: OTHER },
    });
    expect(get.status).toBe(200);
    expect(get.headers.get('access-control-allow-origin')).toBeNull();
    expect(get.headers.get('access-control-expose-headers')).toBeNull();
    // An OPTIONS without Access-Control-Request-Method is no preflight, even from an allowed origin.
    const plain = await t.request('OPTIONS', `/w/${a.workspaceId}`, { headers: { origin: APP } });
    expect(plain.status).toBe(405);
  });

  it('lets an allowed origin read responses, errors included, and the headers of our conventions', async () => {
    const a = await t.bootstrap();
    const exposed =
      'X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, ETag, Location, Retry-After, WWW-Authenticate';
    const responses = [
      await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey, headers: { origin: APP } }),
      await t.request('GET', `/w/${a.workspaceId}/member-roles/999999`, {
        token: a.apiKey,
        headers: { origin: APP },
      }),
      await t.request('POST', '/me/api-keys', { headers: { origin: APP }, raw: '{"x' }),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 404, 401]);
    for (const res of responses) {
      expect(res.headers.get('access-control-allow-origin')).toBe(APP);
      expect(res.headers.get('access-control-expose-headers')).toBe(exposed);
      expect(res.headers.get('vary')).toMatch(/Origin/);
    }
  });
});

describe('CORS without CORS_ORIGINS (the default) (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('sends no CORS header at all, and a preflight is an ordinary OPTIONS', async () => {
    const a = await t.bootstrap();
    const get = await t.request('GET', `/w/${a.workspaceId}`, { token: a.apiKey, headers: { origin: APP } });
    expect(get.status).toBe(200);
    const pre = await t.request('OPTIONS', `/w/${a.workspaceId}`, preflight(APP));
    expect(pre.status).toBe(405);
    for (const res of [get, pre]) {
      const cors = [...res.headers.keys()].filter((h) => h.startsWith('access-control-'));
      expect(cors).toEqual([]);
    }
  });
});
