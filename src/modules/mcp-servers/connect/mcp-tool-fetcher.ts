import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import {
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { Agent, fetch as undiciFetch } from 'undici';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { assertLiteralAllowed, OutboundPolicy, pinnedAgent } from '../../../core/net/outbound-address';
import type { McpServerTool } from '../domain/mcp-server.events';
import { classify, McpFetchError, speaksOnlySse } from './mcp-errors';

/** How to reach one server: its URL and its credentials, opened (never stored so). */
export interface McpConnection {
  mcpUrl: string;
  supportsDirectAuth: boolean;
  directAuthToken: string | null;
  oauthClientId: string | null;
  oauthClientSecret: string | null;
}

/** A tool's answer: its text content joined, and its structured content when it gave one. */
export interface McpToolResult {
  isError: boolean;
  text: string;
  structuredContent: Record<string, unknown> | null;
}

export interface FetchedTools {
  transport: 'streamable-http' | 'sse';
  tools: McpServerTool[];
}

/** Bounds on what one server may hand us (the list is stored in an event). */
const MAX_PAGES = 50;
const MAX_TOOLS = 1000;
const MAX_SCHEMA_CHARS = 64 * 1024;
/** MCP tool names are 1-128 characters (the specification's tool name guidance). */
const MAX_NAME_CHARS = 128;
const MAX_TITLE_CHARS = 256;
const MAX_DESCRIPTION_CHARS = 16 * 1024;
/** The whole list as stored (one event): far beyond any real server's, far below what would hurt. */
const MAX_LIST_CHARS = 4 * 1024 * 1024;
/**
 * Bytes one answer of the server may carry (an SSE stream counts as one): read as it
 * arrives and cut off past this, so a hostile server cannot make us buffer and parse an
 * unbounded body before the limits above are checked.
 */
const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

/**
 * Lists an external MCP server's tools with the SDK client: Streamable HTTP first, the
 * older HTTP+SSE transport when the server answers that POST with 400/404/405. Every
 * request (OAuth discovery and token included) goes through one undici dispatcher whose
 * sockets connect only to addresses the outbound-address guard passed, so a name that
 * resolves to 127.0.0.1 at refresh time is refused even if it did not at save time.
 */
@Injectable()
export class McpToolFetcher implements OnModuleDestroy {
  private readonly policy: OutboundPolicy;
  private readonly agent: Agent;
  private readonly timeoutMs: number;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.policy = {
      allowHttp: config.webhookAllowHttp,
      allowPrivateNetworks: config.webhookAllowPrivateNetworks,
    };
    this.timeoutMs = config.mcpTimeoutMs;
    this.agent = pinnedAgent(this.policy, { connectTimeoutMs: config.mcpTimeoutMs, connections: 16 });
  }

  async fetchTools(connection: McpConnection): Promise<FetchedTools> {
    return this.withDeadline((fetchFn) => this.run(connection, fetchFn));
  }

  /**
   * Calls one tool of the server with the server's auth, within MCP_TIMEOUT_MS; resolves
   * with the tool's result (an `isError` result is an answer, not a failure) and rejects
   * with an McpFetchError when the server cannot be reached or answers no result.
   */
  async callTool(
    connection: McpConnection,
    name: string,
    args: Record<string, unknown>,
  ): Promise<McpToolResult> {
    return this.withDeadline(async (fetchFn) => {
      const { client } = await this.connect(connection, fetchFn);
      try {
        const result = await client.callTool({ name, arguments: args }, undefined, {
          timeout: this.timeoutMs,
        });
        const content = Array.isArray(result.content)
          ? (result.content as { type: string; text?: string }[])
          : [];
        const text = content
          .filter((c) => c.type === 'text' && typeof c.text === 'string')
          .map((c) => c.text)
          .join('\n');
        return {
          isError: result.isError === true,
          text,
          structuredContent: (result.structuredContent as Record<string, unknown> | undefined) ?? null,
        };
      } finally {
        await client.close().catch(() => undefined);
      }
    });
  }

  /**
   * Runs `work` within MCP_TIMEOUT_MS. The SDK does not pass every wait through our fetch
   * (an SSE stream that never sends its endpoint, say); the deadline ends it regardless.
   */
  private async withDeadline<T>(work: (fetchFn: FetchLike) => Promise<T>): Promise<T> {
    const deadline = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      deadline.abort(new McpFetchError('timeout', `no complete answer within ${this.timeoutMs} ms`));
    }, this.timeoutMs);
    try {
      const expired = new Promise<never>((_, reject) =>
        deadline.signal.addEventListener('abort', () => reject(deadline.signal.reason as Error)),
      );
      return await Promise.race([work(this.guardedFetch(deadline.signal)), expired]);
    } catch (error) {
      throw classify(error, timedOut, this.timeoutMs);
    } finally {
      clearTimeout(timer);
      deadline.abort();
    }
  }

  private async connect(
    connection: McpConnection,
    fetchFn: FetchLike,
  ): Promise<{ client: Client; transport: 'streamable-http' | 'sse' }> {
    const url = new URL(connection.mcpUrl);
    const bearer = connection.supportsDirectAuth
      ? connection.directAuthToken
      : await this.clientCredentialsToken(url, connection, fetchFn);
    const requestInit: RequestInit = bearer ? { headers: { authorization: `Bearer ${bearer}` } } : {};
    const options = { timeout: this.timeoutMs };
    let client = newClient();
    try {
      await client.connect(new StreamableHTTPClientTransport(url, { fetch: fetchFn, requestInit }), options);
      return { client, transport: 'streamable-http' };
    } catch (error) {
      await client.close().catch(() => undefined);
      if (!speaksOnlySse(error)) throw error;
      client = newClient();
      await client.connect(new SSEClientTransport(url, { fetch: fetchFn, requestInit }), options);
      return { client, transport: 'sse' };
    }
  }

  private async run(connection: McpConnection, fetchFn: FetchLike): Promise<FetchedTools> {
    const options = { timeout: this.timeoutMs };
    const { client, transport } = await this.connect(connection, fetchFn);
    try {
      const tools: McpServerTool[] = [];
      let listChars = 0;
      let cursor: string | undefined;
      for (let page = 0; ; page++) {
        if (page >= MAX_PAGES)
          throw new McpFetchError('protocol_error', `tools/list did not end within ${MAX_PAGES} pages`);
        const result = await client.listTools(cursor ? { cursor } : {}, options);
        for (const tool of result.tools) {
          const stored = toolOf(tool);
          listChars += JSON.stringify(stored).length;
          tools.push(stored);
        }
        if (tools.length > MAX_TOOLS)
          throw new McpFetchError('protocol_error', `the server lists more than ${MAX_TOOLS} tools`);
        if (listChars > MAX_LIST_CHARS)
          throw new McpFetchError(
            'protocol_error',
            `the server's tool list exceeds ${MAX_LIST_CHARS} characters in all`,
          );
        cursor = result.nextCursor;
        if (!cursor) break;
      }
      return { transport, tools };
    } finally {
      await client.close().catch(() => undefined);
    }
  }

  /**
   * OAuth 2.0 client credentials: the protected resource's metadata (RFC 9728) names its
   * authorization server (without it, the MCP server's origin is taken, as the MCP
   * authorization spec says); that server's metadata (RFC 8414, or OpenID discovery) gives
   * the token endpoint; the token is asked for this resource (RFC 8707), the client
   * authenticating with HTTP Basic unless the server only takes client_secret_post.
   */
  private async clientCredentialsToken(url: URL, c: McpConnection, fetchFn: FetchLike): Promise<string> {
    if (!c.oauthClientId || !c.oauthClientSecret)
      throw new McpFetchError('oauth', 'no OAuth client id and secret are set');
    let authorizationServer: string = url.origin;
    try {
      const resource = await discoverOAuthProtectedResourceMetadata(url, {}, fetchFn);
      if (resource.authorization_servers?.length) authorizationServer = resource.authorization_servers[0];
    } catch (error) {
      if (error instanceof McpFetchError) throw error;
      const classified = classify(error, false, this.timeoutMs);
      if (classified.reason !== 'protocol_error') throw classified;
      // No protected-resource metadata: fall back to the server's origin.
    }
    const metadata = await discoverAuthorizationServerMetadata(authorizationServer, { fetchFn });
    if (!metadata?.token_endpoint)
      throw new McpFetchError('oauth', `${authorizationServer} publishes no authorization server metadata`);
    if (metadata.grant_types_supported && !metadata.grant_types_supported.includes('client_credentials'))
      throw new McpFetchError(
        'oauth',
        'the authorization server does not offer the client_credentials grant',
      );
    const methods = metadata.token_endpoint_auth_methods_supported;
    const usePost =
      !!methods && !methods.includes('client_secret_basic') && methods.includes('client_secret_post');
    const body = new URLSearchParams({ grant_type: 'client_credentials', resource: url.href });
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    if (usePost) {
      body.set('client_id', c.oauthClientId);
      body.set('client_secret', c.oauthClientSecret);
    } else {
      const enc = (v: string) => encodeURIComponent(v);
      headers.authorization = `Basic ${Buffer.from(`${enc(c.oauthClientId)}:${enc(c.oauthClientSecret)}`).toString('base64')}`;
    }
    const res = await fetchFn(metadata.token_endpoint, { method: 'POST', headers, body: body.toString() });
    const json = (await res.json().catch(() => ({}))) as { access_token?: unknown; error?: unknown };
    if (!res.ok || typeof json.access_token !== 'string')
      throw new McpFetchError(
        'oauth',
        `the token endpoint refused the client credentials (HTTP ${res.status}${typeof json.error === 'string' ? `, ${json.error.slice(0, 100)}` : ''})`,
      );
    return json.access_token;
  }

  /** fetch through the pinned dispatcher, within the refresh's deadline; IP literals checked here. */
  private guardedFetch(deadline: AbortSignal): FetchLike {
    return async (input, init) => {
      const target = new URL(String(input));
      assertLiteralAllowed(target, this.policy);
      const signal = init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
      const res = await undiciFetch(target, {
        ...(init as Parameters<typeof undiciFetch>[1]),
        signal,
        dispatcher: this.agent,
      });
      return capped(res as unknown as Response);
    };
  }

  async onModuleDestroy(): Promise<void> {
    await this.agent.close().catch(() => undefined);
  }
}

function newClient(): Client {
  return new Client({ name: 'workspace-service', version: '1.0.0' }, { capabilities: {} });
}

/** The response with its body cut off (an error the refresh records) past MAX_RESPONSE_BYTES. */
function capped(res: Response): Response {
  if (!res.body) return res;
  let bytes = 0;
  const meter = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      bytes += chunk.byteLength;
      if (bytes > MAX_RESPONSE_BYTES)
        controller.error(
          new McpFetchError('protocol_error', `an answer of the server exceeds ${MAX_RESPONSE_BYTES} bytes`),
        );
      else controller.enqueue(chunk);
    },
  });
  return new Response(res.body.pipeThrough(meter), {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}

function toolOf(tool: {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
}): McpServerTool {
  const tooLong = (what: string, max: number) =>
    new McpFetchError('protocol_error', `${what} exceeds ${max} characters`);
  if (tool.name.length > MAX_NAME_CHARS)
    throw tooLong(`the name of tool "${tool.name.slice(0, 40)}…"`, MAX_NAME_CHARS);
  if ((tool.title?.length ?? 0) > MAX_TITLE_CHARS)
    throw tooLong(`the title of tool "${tool.name}"`, MAX_TITLE_CHARS);
  if ((tool.description?.length ?? 0) > MAX_DESCRIPTION_CHARS)
    throw tooLong(`the description of tool "${tool.name}"`, MAX_DESCRIPTION_CHARS);
  const inputSchema = tool.inputSchema ?? { type: 'object' };
  if (JSON.stringify(inputSchema).length > MAX_SCHEMA_CHARS)
    throw new McpFetchError(
      'protocol_error',
      `the input schema of tool "${tool.name}" exceeds ${MAX_SCHEMA_CHARS} characters`,
    );
  return {
    name: tool.name,
    title: tool.title ?? null,
    description: tool.description ?? null,
    inputSchema,
  };
}
