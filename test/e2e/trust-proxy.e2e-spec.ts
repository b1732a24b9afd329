import { startTestApp, TestApp } from '../support/app';

async function exhaust(t: TestApp, forwardedFor: string): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await t.request('GET', '/resources/registry', {
      headers: { 'x-forwarded-for': forwardedFor },
    });
    statuses.push(res.status);
  }
  return statuses;
}

describe('per-address rate limits behind a proxy (e2e)', () => {
  describe('with TRUST_PROXY=127.0.0.1 (the proxy is on loopback)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: '2', TRUST_PROXY: '127.0.0.1' } });
    });
    afterAll(() => t.close());

    it('limits each forwarded client on its own', async () => {
      expect(await exhaust(t, '203.0.113.7')).toEqual([200, 200, 429]);
      expect(await exhaust(t, '198.51.100.9')).toEqual([200, 200, 429]);
    });
  });

  describe('without TRUST_PROXY (the default)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: '2' } });
    });
    afterAll(() => t.close());

    it('ignores X-Forwarded-For, so a client cannot dodge its limit by forging it', async () => {
      expect(await exhaust(t, '203.0.113.7')).toEqual([200, 200, 429]);
      expect((await exhaust(t, '198.51.100.9'))[0]).toBe(429);
    });
  });
});
