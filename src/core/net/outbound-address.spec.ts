import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fetch } from 'undici';
import { ForbiddenAddressError, ForbiddenSchemeError, pinnedAgent } from './outbound-address';

/**
 * The pinned dispatcher on its own: it refuses a forbidden IP literal at connect time even
 * when its caller never checked that host, as for the target of a redirect that fetch
 * follows through it. A loopback listener counts what reaches it.
 */
describe('pinnedAgent', () => {
  let hits = 0;
  const server = createServer((req, res) => {
    hits++;
    if (req.url === '/hop') res.writeHead(307, { location: `http://127.0.0.1:${port}/target` }).end();
    else res.writeHead(200).end('reached');
  });
  let port = 0;
  beforeAll(
    () =>
      new Promise<void>((done) =>
        server.listen(0, '127.0.0.1', () => ((port = (server.address() as AddressInfo).port), done())),
      ),
  );
  afterAll(() => new Promise<void>((done) => server.close(() => done())));
  beforeEach(() => (hits = 0));

  it.each([`127.0.0.1`, `[::ffff:127.0.0.1]`])(
    'refuses the literal %s at connect time when private networks are off',
    async (host) => {
      const agent = pinnedAgent({ allowHttp: true, allowPrivateNetworks: false }, { connectTimeoutMs: 2000 });
      try {
        const error = (await fetch(`http://${host}:${port}/target`, { dispatcher: agent }).catch(
          (e: unknown) => e,
        )) as Error & { cause?: unknown };
        expect(error).toBeInstanceOf(Error);
        expect(error.cause).toBeInstanceOf(ForbiddenAddressError);
        expect(hits).toBe(0);
      } finally {
        await agent.close();
      }
    },
  );

  it('uses the error its owner gives, and connects when configuration allows private networks', async () => {
    class Mine extends Error {}
    const refusing = pinnedAgent(
      { allowHttp: true, allowPrivateNetworks: false },
      { connectTimeoutMs: 2000, forbidden: (h) => new Mine(h) },
    );
    const allowing = pinnedAgent({ allowHttp: true, allowPrivateNetworks: true }, { connectTimeoutMs: 2000 });
    try {
      const error = (await fetch(`http://127.0.0.1:${port}/target`, { dispatcher: refusing }).catch(
        (e: unknown) => e,
      )) as Error & { cause?: unknown };
      expect(error.cause).toBeInstanceOf(Mine);
      const ok = await fetch(`http://127.0.0.1:${port}/hop`, { dispatcher: allowing });
      expect(await ok.text()).toBe('reached');
      expect(hits).toBe(2);
    } finally {
      await refusing.close();
      await allowing.close();
    }
  });

  it('refuses plain http at connect time when only https is allowed', async () => {
    const agent = pinnedAgent({ allowHttp: false, allowPrivateNetworks: true }, { connectTimeoutMs: 2000 });
    try {
      const error = (await fetch(`http://127.0.0.1:${port}/target`, { dispatcher: agent }).catch(
        (e: unknown) => e,
      )) as Error & { cause?: unknown };
      expect(error.cause).toBeInstanceOf(ForbiddenSchemeError);
      expect((error.cause as Error).message).toMatch(/over plain http/);
      expect(hits).toBe(0);
    } finally {
      await agent.close();
    }
  });
});
