import { JsonLogger } from '../../src/core/logging/json-logger';
import { startTestApp, TestApp } from '../support/app';

const TOKEN = 'operator-token-for-login-tests-7c21';

describe('failed operator logins on the queue board (e2e)', () => {
  let t: TestApp;
  let logged: string[];
  beforeAll(async () => {
    // Loopback is a trusted proxy, so X-Forwarded-For stands for distinct client addresses.
    t = await startTestApp({ env: { OPERATOR_TOKEN: TOKEN, TRUST_PROXY: '127.0.0.1' } });
    logged = [];
    const logger = t.app.get(JsonLogger);
    const original = logger.event.bind(logger);
    jest.spyOn(logger, 'event').mockImplementation((level, fields) => {
      logged.push(JSON.stringify({ level, ...fields }));
      original(level, fields);
    });
  });
  afterAll(() => t.close());

  const board = (from: string, authorization?: string) =>
    fetch(`${new URL(t.baseUrl).origin}/admin/queues/api/queues`, {
      headers: { 'x-forwarded-for': from, ...(authorization && { authorization }) },
    });

  it('answers 429 with Retry-After after 10 wrong tokens from one address, even to the right token there', async () => {
    const attacker = '203.0.113.50';
    for (let i = 0; i < 10; i++) {
      const res = await board(attacker, `Bearer wrong-guess-${i}`);
      expect({ i, status: res.status }).toEqual({ i, status: 401 });
    }
    for (const guess of ['Bearer wrong-guess-10', `Bearer ${TOKEN}`]) {
      const res = await board(attacker, guess);
      expect(res.status).toBe(429);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(60);
      expect(res.headers.get('x-request-id')).toBeTruthy();
      expect(((await res.json()) as { detail: string }).detail).toMatch(
        /^Too many failed operator logins from this address: at most 10 a minute/,
      );
    }
    // Another address is not affected: the right token works, a wrong one is a plain 401.
    expect((await board('198.51.100.7', `Bearer ${TOKEN}`)).status).toBe(200);
    expect((await board('198.51.100.7', 'Bearer nope')).status).toBe(401);
  });

  it('does not count successful logins, nor requests that present no token', async () => {
    const operator = '192.0.2.10';
    for (let i = 0; i < 15; i++) expect((await board(operator, `Bearer ${TOKEN}`)).status).toBe(200);
    for (let i = 0; i < 15; i++) expect((await board(operator)).status).toBe(401);
    for (let i = 0; i < 9; i++) expect((await board(operator, 'Bearer nope')).status).toBe(401);
    expect((await board(operator, `Bearer ${TOKEN}`)).status).toBe(200);
  });

  it('logs failed logins with the address and without the token', async () => {
    logged.length = 0;
    const secretGuess = 'guess-that-must-not-be-logged-91f3';
    expect((await board('192.0.2.99', `Bearer ${secretGuess}`)).status).toBe(401);
    const basic = `Basic ${Buffer.from(`op:${secretGuess}`).toString('base64')}`;
    expect((await board('192.0.2.99', basic)).status).toBe(401);
    const failures = logged.filter((line) => line.includes('operator login failed'));
    expect(failures).toHaveLength(2);
    expect(failures[0]).toContain('192.0.2.99');
    for (const line of logged) {
      expect(line).not.toContain(secretGuess);
      expect(line).not.toContain(basic.slice(6));
      expect(line).not.toContain(TOKEN);
    }
  });
});
