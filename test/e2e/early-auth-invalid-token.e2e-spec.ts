import * as http from 'node:http';
import { startTestApp, TestApp } from '../support/app';

/** A POST announcing a body larger than the server takes, without sending it. */
function oversizedPost(t: TestApp, path: string, token: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(t.baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        // A connection of its own: the announced body never comes, so the socket cannot be reused.
        agent: false,
        host: hostname,
        port,
        method: 'POST',
        path: `/api/v2${path}`,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': String(30 * 1024 * 1024),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/**
 * Issue 7, item 4: a caller who is not authenticated must not get its body parsed. A
 * made-up bearer token is no credential either, so it is refused in the same first phase:
 * 401, not 400 (malformed JSON), 415 (a form) or 413 (too large).
 */
describe('a bearer token that resolves to no credential is refused before the body is read (e2e)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('answers 401 whatever the body, for made-up, unknown-prefix and revoked tokens', async () => {
    const a = await t.bootstrap();
    const made = await t.request('POST', '/me/api-keys', {
      token: a.apiKey,
      body: { name: 'soon revoked', scopes: ['members:read'] },
    });
    expect(made.status).toBe(201);
    expect((await t.request('DELETE', `/me/api-keys/${made.body.id}`, { token: a.apiKey })).status).toBe(204);
    const tokens = ['wsk_guess', 'wsk_000000000000_notthesecret', 'garbage', made.body.secret as string];
    const bodies: [string, string][] = [
      ['application/json', '{"name":'],
      ['text/plain', 'hello'],
      ['application/x-www-form-urlencoded', 'name=x'],
    ];
    for (const token of tokens) {
      for (const [type, raw] of bodies) {
        const res = await t.request('POST', `/w/${a.workspaceId}/member-roles`, {
          token,
          raw,
          headers: { 'content-type': type },
        });
        expect({ token, type, status: res.status, detail: res.body.detail }).toEqual({
          token,
          type,
          status: 401,
          detail: 'The credential is invalid, expired or revoked',
        });
        expect(res.headers.get('www-authenticate')).toBe('Bearer');
      }
      const big = await oversizedPost(t, '/me/api-keys', token);
      expect({ token, status: big.status }).toEqual({ token, status: 401 });
      expect(JSON.parse(big.body)).toEqual({ detail: 'The credential is invalid, expired or revoked' });
    }
  });

  it('still parses (and refuses) the body of a valid credential, and serves it', async () => {
    const a = await t.bootstrap();
    const bad = await t.request('POST', `/w/${a.workspaceId}/member-roles`, {
      token: a.apiKey,
      raw: '{"name":',
    });
    expect({ status: bad.status, detail: bad.body.detail }).toEqual({
      status: 400,
      detail: 'The request body is not valid JSON',
    });
    const ok = await t.request('POST', `/w/${a.workspaceId}/member-roles`, {
      token: a.apiKey,
      body: { name: 'Readers', permissions: ['members:read'] },
    });
    expect(ok.status).toBe(201);
  });
});
