import { ValidationError } from '../../../core/http/domain-errors';
import { expandOAuthScopes, narrowToApp, parseScopeParameter, scopeInWords } from './oauth-scopes';
import { checkPassword, hashPassword, verifyPassword } from './password';
import { isValidCodeChallenge, verifierMatches } from './pkce';
import { matchesRegisteredUri, redirectUriProblem } from './redirect-uri';
import { resourceProblem } from './resource-indicator';

describe('PKCE (RFC 7636)', () => {
  it('verifies S256 with the RFC 7636 Appendix B example', () => {
    const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
    const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
    expect(verifierMatches(verifier, challenge)).toBe(true);
    expect(verifierMatches(verifier.replace(/.$/, 'N'), challenge)).toBe(false);
  });

  it('accepts verifiers and challenges of 43-128 unreserved characters only', () => {
    expect(isValidCodeChallenge('a'.repeat(43))).toBe(true);
    expect(isValidCodeChallenge('a'.repeat(42))).toBe(false);
    expect(isValidCodeChallenge('a'.repeat(129))).toBe(false);
    expect(isValidCodeChallenge(`${'a'.repeat(42)}+`)).toBe(false);
    expect(verifierMatches('short', 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM')).toBe(false);
  });
});

describe('redirect URIs (RFC 6749 §3.1.2, RFC 8252 §7.3, RFC 9700 §4.1.3)', () => {
  it('registers https URLs and http to the loopback hosts (127.0.0.1, [::1], localhost), nothing else', () => {
    expect(redirectUriProblem('https://app.example.com/cb?x=1')).toBeUndefined();
    expect(redirectUriProblem('http://127.0.0.1/cb')).toBeUndefined();
    expect(redirectUriProblem('http://[::1]:8080/cb')).toBeUndefined();
    expect(redirectUriProblem('http://localhost/cb')).toBeUndefined();
    expect(redirectUriProblem('http://localhost:6274/oauth/callback')).toBeUndefined();
    expect(redirectUriProblem('http://LOCALHOST:6274/callback')).toBeUndefined();
    expect(redirectUriProblem('http://app.localhost/cb')).toMatch(/loopback/);
    expect(redirectUriProblem('http://localhost./cb')).toMatch(/loopback/);
    expect(redirectUriProblem('http://localhost.example.com/cb')).toMatch(/loopback/);
    expect(redirectUriProblem('http://127.0.0.2/cb')).toMatch(/loopback/);
    expect(redirectUriProblem('http://user@localhost/cb')).toMatch(/credentials/);
    expect(redirectUriProblem('http://app.example.com/cb')).toMatch(/loopback/);
    expect(redirectUriProblem('https://app.example.com/cb#x')).toMatch(/fragment/);
    expect(redirectUriProblem('javascript:alert(1)')).toMatch(/https/);
    expect(redirectUriProblem('cb')).toMatch(/absolute/);
  });

  it('matches exactly, except the port of a loopback URI', () => {
    const registered = ['https://app.example.com/cb', 'http://127.0.0.1/cb', 'http://[::1]:3000/cb?x=1'];
    expect(matchesRegisteredUri('https://app.example.com/cb', registered)).toBe(true);
    expect(matchesRegisteredUri('https://app.example.com/cb/', registered)).toBe(false);
    expect(matchesRegisteredUri('https://app.example.com:443/cb?', registered)).toBe(false);
    expect(matchesRegisteredUri('https://APP.example.com/cb', registered)).toBe(false);
    expect(matchesRegisteredUri('https://app.example.com:8443/cb', registered)).toBe(false);
    expect(matchesRegisteredUri('http://127.0.0.1:49152/cb', registered)).toBe(true);
    expect(matchesRegisteredUri('http://127.0.0.1:49152/cb2', registered)).toBe(false);
    expect(matchesRegisteredUri('http://[::1]:1/cb?x=1', registered)).toBe(true);
    expect(matchesRegisteredUri('http://[::1]:1/cb?x=2', registered)).toBe(false);
    expect(matchesRegisteredUri('http://localhost:49152/cb', registered)).toBe(false);
  });

  it('matches a registered localhost URI on any port, and only on localhost', () => {
    const registered = ['http://localhost:6274/oauth/callback', 'http://localhost/cb'];
    expect(matchesRegisteredUri('http://localhost:6274/oauth/callback', registered)).toBe(true);
    expect(matchesRegisteredUri('http://localhost:51000/oauth/callback', registered)).toBe(true);
    expect(matchesRegisteredUri('http://localhost/oauth/callback', registered)).toBe(true);
    expect(matchesRegisteredUri('http://localhost:1/cb', registered)).toBe(true);
    expect(matchesRegisteredUri('http://LOCALHOST:6274/oauth/callback', registered)).toBe(false);
    expect(matchesRegisteredUri('http://localhost:6274/oauth/callback2', registered)).toBe(false);
    expect(matchesRegisteredUri('http://localhost:6274/oauth/callback?x=1', registered)).toBe(false);
    expect(matchesRegisteredUri('http://127.0.0.1:6274/oauth/callback', registered)).toBe(false);
    expect(matchesRegisteredUri('http://[::1]:6274/oauth/callback', registered)).toBe(false);
    expect(matchesRegisteredUri('https://localhost:6274/oauth/callback', registered)).toBe(false);
    expect(matchesRegisteredUri('http://app.localhost:6274/oauth/callback', registered)).toBe(false);
    expect(matchesRegisteredUri('http://user@localhost:6274/oauth/callback', registered)).toBe(false);
    expect(matchesRegisteredUri('http://localhost:6274/oauth/callback#x', registered)).toBe(false);
    expect(matchesRegisteredUri('http://localhost:6274/oauth/../oauth/callback', registered)).toBe(false);
    expect(matchesRegisteredUri('http://localhost:6274@evil.example.com/oauth/callback', registered)).toBe(
      false,
    );
    expect(matchesRegisteredUri('http://localhost:99999/oauth/callback', registered)).toBe(false);
    expect(matchesRegisteredUri('http://localhost:6274', ['http://localhost'])).toBe(true);
  });
});

describe('OAuth scopes', () => {
  it('expands the shorthands data:X and task:X and keeps the others', () => {
    expect(expandOAuthScopes(['data:write', 'task:read', 'chats:read', 'records:read'])).toEqual([
      'assignments:read',
      'chats:read',
      'datatypes:write',
      'records:read',
      'records:write',
    ]);
  });

  it('parses a space-separated scope parameter of known scopes only', () => {
    expect(parseScopeParameter('data:read  members:write data:read')).toEqual(['data:read', 'members:write']);
    expect(parseScopeParameter('calendars:admin')).toEqual(['calendars:admin']);
    expect(parseScopeParameter('account:admin')).toBeUndefined();
    expect(parseScopeParameter('data:admin')).toBeUndefined();
    expect(parseScopeParameter('')).toBeUndefined();
  });

  it("narrows granted scopes to the app's current ones, never wider", () => {
    const granted = ['workspace:read', 'members:read', 'data:write'];
    expect(narrowToApp(granted, ['workspace:read', 'members:read', 'data:write'])).toEqual(granted);
    expect(narrowToApp(granted, ['workspace:read', 'records:read'])).toEqual([
      'workspace:read',
      'records:read',
    ]);
    expect(narrowToApp(granted, ['data:read'])).toEqual(['datatypes:read', 'records:read']);
    expect(narrowToApp(['records:read'], ['data:write'])).toEqual(['records:read']);
    expect(narrowToApp(granted, ['chats:read'])).toEqual([]);
  });

  it('puts scopes in words for the consent page', () => {
    expect(scopeInWords('chats:write')).toBe('See and change chats and their messages');
    expect(scopeInWords('member_roles:admin')).toBe('See, change and delete member roles');
  });
});

describe('passwords', () => {
  it('needs 12 to 256 characters, counted as typed', () => {
    expect(() => checkPassword('short')).toThrow(ValidationError);
    expect(() => checkPassword('x'.repeat(257))).toThrow(/at most 256/);
    expect(() => checkPassword(' '.repeat(12))).toThrow(/blank/);
    expect(checkPassword('🔑'.repeat(12))).toBe('🔑'.repeat(12));
  });

  it('hashes with scrypt and a salt of its own each time', async () => {
    const a = await hashPassword('a long enough password');
    const b = await hashPassword('a long enough password');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(await verifyPassword('a long enough password', a)).toBe(true);
    expect(await verifyPassword('a long enough passwore', a)).toBe(false);
    expect(await verifyPassword('anything', 'not-a-hash')).toBe(false);
  });
});

describe('resource indicators (RFC 8707)', () => {
  const issuer = 'https://api.example.com/api/v2';

  it('serves the issuer and what is under it', () => {
    for (const r of [issuer, `${issuer}/`, `${issuer}/mcp`, 'HTTPS://API.example.com/api/v2/mcp'])
      expect({ r, problem: resourceProblem(r, issuer) }).toEqual({ r, problem: undefined });
  });

  it('refuses other resources, look-alikes and fragments', () => {
    for (const r of [
      'https://evil.example/api/v2/mcp',
      'https://api.example.com/api/v2evil',
      'https://api.example.com/api/v2/../v3/mcp',
      'https://api.example.com/api/v2/%2e%2e/v3',
      'https://api.example.com.evil.example/api/v2/mcp',
      'http://api.example.com/api/v2/mcp',
      'https://api.example.com:8443/api/v2/mcp',
      'https://user@api.example.com/api/v2/mcp',
      `${issuer}/mcp#x`,
      'mcp',
    ])
      expect({ r, problem: resourceProblem(r, issuer) }).toEqual({ r, problem: expect.any(String) });
  });
});
