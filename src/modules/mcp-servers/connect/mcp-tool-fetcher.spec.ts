import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppConfig } from '../../../core/config/config';
import { McpFetchError } from './mcp-errors';
import { McpToolFetcher } from './mcp-tool-fetcher';

/**
 * The guard at connect time: with private networks off, a refresh never reaches a
 * loopback listener, whether the URL names it by IP literal or by a name resolving to it
 * (the pinned lookup). The listener counts what reaches it.
 */
describe('McpToolFetcher under the outbound-address guard', () => {
  let hits = 0;
  const server = createServer((_req, res) => {
    hits++;
    res.writeHead(500).end();
  });
  let port = 0;
  beforeAll(
    () =>
      new Promise<void>((done) =>
        server.listen(0, '127.0.0.1', () => ((port = (server.address() as AddressInfo).port), done())),
      ),
  );
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  const fetcher = (allowPrivateNetworks: boolean) =>
    new McpToolFetcher({
      webhookAllowHttp: true,
      webhookAllowPrivateNetworks: allowPrivateNetworks,
      mcpTimeoutMs: 2000,
    } as AppConfig);
  const direct = (mcpUrl: string) => ({
    mcpUrl,
    supportsDirectAuth: true,
    directAuthToken: null,
    oauthClientId: null,
    oauthClientSecret: null,
  });

  it.each(['127.0.0.1', 'localhost'])('refuses %s when private networks are off', async (host) => {
    const f = fetcher(false);
    try {
      const error = await f.fetchTools(direct(`http://${host}:${port}/mcp`)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpFetchError);
      expect((error as McpFetchError).reason).toBe('forbidden_address');
      expect(hits).toBe(0);
    } finally {
      await f.onModuleDestroy();
    }
  });

  it('reaches it when configuration allows private networks (and reports the 500 as a protocol error)', async () => {
    const f = fetcher(true);
    try {
      const error = await f.fetchTools(direct(`http://127.0.0.1:${port}/mcp`)).catch((e: unknown) => e);
      expect((error as McpFetchError).reason).toBe('protocol_error');
      expect(hits).toBeGreaterThan(0);
    } finally {
      await f.onModuleDestroy();
    }
  });
});
