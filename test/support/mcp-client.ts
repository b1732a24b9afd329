import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestApp, TestResponse } from './app';

/**
 * The MCP SDK's own client over HTTP, against the service's /mcp with a bearer token.
 * `last()` is the request id of the latest HTTP exchange, so a tool call's events can be
 * asserted with t.expectEvents like a REST call's.
 */
export interface McpSession {
  client: Client;
  last(): TestResponse;
  close(): Promise<void>;
}

export async function mcpSession(
  t: TestApp,
  token: string,
  headers: Record<string, string> = {},
): Promise<McpSession> {
  let requestId = '';
  const transport = new StreamableHTTPClientTransport(new URL(`${t.baseUrl}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}`, ...headers } },
    fetch: async (url, init) => {
      const res = await fetch(url, init);
      requestId = res.headers.get('x-request-id') ?? requestId;
      return res;
    },
  });
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    last: () => ({ status: 200, headers: new Headers(), body: undefined, requestId }),
    close: () => client.close(),
  };
}
