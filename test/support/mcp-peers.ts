import { createServer, IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  CallToolResult,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

/**
 * Real MCP protocol peers for the tests, made with the SDK's server: one speaking
 * Streamable HTTP (stateless), one speaking only the older HTTP+SSE transport, and a
 * small OAuth authorization server (RFC 8414 metadata and a client-credentials token
 * endpoint) on node:http.
 */
export interface PeerTool {
  name: string;
  description?: string;
  inputSchema: { type: 'object'; properties?: Record<string, object>; required?: string[] };
}

export interface Peer {
  url: string;
  origin: string;
  /** Authorization headers the MCP endpoint received. */
  authorizations: (string | undefined)[];
  close(): Promise<void>;
}

/** Answers tools/call (the assistant's tests); a throw is the server's JSON-RPC error. */
export type PeerToolCall = (
  name: string,
  args: Record<string, unknown>,
) => CallToolResult | Promise<CallToolResult>;

/** An SDK server whose tools/list pages through `tools()` two at a time. */
function mcpServer(tools: () => PeerTool[], call?: PeerToolCall): Server {
  const server = new Server({ name: 'test-peer', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    const all = tools();
    const start = request.params?.cursor ? Number(request.params.cursor) : 0;
    const page = all.slice(start, start + 2);
    return { tools: page, ...(start + 2 < all.length ? { nextCursor: String(start + 2) } : {}) };
  });
  if (call)
    server.setRequestHandler(CallToolRequestSchema, (request) =>
      call(request.params.name, request.params.arguments ?? {}),
    );
  return server;
}

function listen(server: HttpServer, path: string, authorizations: (string | undefined)[]): Promise<Peer> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      const origin = `http://127.0.0.1:${port}`;
      resolve({
        url: `${origin}${path}`,
        origin,
        authorizations,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    }),
  );
}

export interface StreamableOptions {
  /** When set, /mcp answers 401 unless the bearer is this. */
  requiredBearer?: string;
  /** Protected resource metadata (RFC 9728) naming this authorization server. */
  authorizationServer?: string;
  /** Answers tools/call; without it the peer has no tools/call handler. */
  call?: PeerToolCall;
}

export function startStreamableMcp(tools: () => PeerTool[], options: StreamableOptions = {}): Promise<Peer> {
  const authorizations: (string | undefined)[] = [];
  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      if (req.url?.startsWith('/.well-known/oauth-protected-resource') && options.authorizationServer) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            resource: `http://${req.headers.host}/mcp`,
            authorization_servers: [options.authorizationServer],
          }),
        );
        return;
      }
      if (!req.url?.startsWith('/mcp')) {
        res.writeHead(404).end();
        return;
      }
      authorizations.push(req.headers.authorization);
      if (options.requiredBearer && req.headers.authorization !== `Bearer ${options.requiredBearer}`) {
        res.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
        return;
      }
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      const server = mcpServer(tools, options.call);
      res.on('close', () => void transport.close().then(() => server.close()));
      await server.connect(transport);
      await transport.handleRequest(req, res);
    })().catch(() => res.writeHead(500).end());
  });
  return listen(http, '/mcp', authorizations);
}

/** Speaks only HTTP+SSE: GET /sse opens the stream, POST /messages carries requests; POST /sse is 405. */
export function startSseOnlyMcp(tools: () => PeerTool[]): Promise<Peer> {
  const authorizations: (string | undefined)[] = [];
  const sessions = new Map<string, SSEServerTransport>();
  const http = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://x');
      authorizations.push(req.headers.authorization);
      if (url.pathname === '/sse' && req.method === 'GET') {
        const transport = new SSEServerTransport('/messages', res);
        sessions.set(transport.sessionId, transport);
        res.on('close', () => sessions.delete(transport.sessionId));
        await mcpServer(tools).connect(transport);
        return;
      }
      if (url.pathname === '/messages' && req.method === 'POST') {
        const transport = sessions.get(url.searchParams.get('sessionId') ?? '');
        if (!transport) {
          res.writeHead(404).end();
          return;
        }
        await transport.handlePostMessage(req, res);
        return;
      }
      res.writeHead(405).end();
    })().catch(() => res.writeHead(500).end());
  });
  return listen(http, '/sse', authorizations);
}

/** Accepts connections and never answers. */
export function startSilentServer(): Promise<Peer> {
  return listen(
    createServer(() => undefined),
    '/mcp',
    [],
  );
}

export interface AuthServer extends Peer {
  /** Token requests: their client (from HTTP Basic), grant type and resource. */
  tokenRequests: { clientId: string; grantType: string | null; resource: string | null }[];
}

/** RFC 8414 metadata and a client-credentials token endpoint for one client. */
export async function startAuthServer(
  client: { id: string; secret: string },
  token: string,
): Promise<AuthServer> {
  const tokenRequests: AuthServer['tokenRequests'] = [];
  let origin = '';
  const http = createServer((req, res) => {
    if (req.url === '/.well-known/oauth-authorization-server') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          issuer: origin,
          authorization_endpoint: `${origin}/authorize`,
          token_endpoint: `${origin}/token`,
          response_types_supported: ['code'],
          grant_types_supported: ['client_credentials'],
          token_endpoint_auth_methods_supported: ['client_secret_basic'],
        }),
      );
      return;
    }
    if (req.url === '/token' && req.method === 'POST') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        const basic = Buffer.from(
          (req.headers.authorization ?? '').replace(/^Basic /, ''),
          'base64',
        ).toString();
        const [id, secret] = basic.split(':').map(decodeURIComponent);
        tokenRequests.push({
          clientId: id,
          grantType: form.get('grant_type'),
          resource: form.get('resource'),
        });
        if (id !== client.id || secret !== client.secret || form.get('grant_type') !== 'client_credentials') {
          res
            .writeHead(401, { 'content-type': 'application/json' })
            .end(JSON.stringify({ error: 'invalid_client' }));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: 300 }));
      });
      return;
    }
    res.writeHead(404).end();
  });
  const peer = await listen(http, '', []);
  origin = peer.origin;
  return { ...peer, tokenRequests };
}
