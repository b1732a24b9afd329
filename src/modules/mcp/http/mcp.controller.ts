import { Body, Controller, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SelfAccess } from '../../../core/auth/auth.decorators';
import type { AuthenticatedRequest } from '../../../core/auth/auth.guard';
import { MEMBERSHIP_RESOLVER, MembershipResolver } from '../../../core/auth/principal';
import { intersectScopesOnce } from '../../../core/auth/scopes';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { buildMcpServer, McpCaller } from '../server/mcp-server';
import { ToolDispatcher } from '../server/tool-dispatch';

const SERVER_VERSION = '1.0.0';

/**
 * The service's own MCP endpoint (`/mcp`), MCP Streamable HTTP through the SDK's
 * transport in its stateless form: every POST carries one JSON-RPC message (a batch is refused)
 * and is answered as JSON, so no session is kept; GET (a server-to-client stream) and
 * DELETE (ending a session) are not offered, which the router answers 405 with `Allow`.
 *
 * The credential is core's bearer principal (OAuth `wso_` tokens and API keys alike;
 * @SelfAccess: the scopes are checked per tool, as the routes the tools mirror check them,
 * see ToolDispatcher). Core's 401
 * gets `resource_metadata` in its `WWW-Authenticate` challenge (RFC 9728 §5.1, see
 * McpModule), so an MCP client discovers the authorization server from this URL alone.
 */
@ApiTags('mcp')
@Controller()
export class McpController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly modules: ModuleRef,
    private readonly tools: ToolDispatcher,
  ) {}

  /** Core's membership resolver (identity provides it for the guard); looked up, not imported, to stay out of identity's room. */
  private get memberships(): MembershipResolver {
    return this.modules.get<MembershipResolver>(MEMBERSHIP_RESOLVER, { strict: false });
  }

  @Post('mcp')
  @SelfAccess()
  @HttpCode(200)
  @ApiOperation({
    summary: 'The MCP endpoint (Streamable HTTP, stateless)',
    description:
      'JSON-RPC 2.0 over POST (`Accept: application/json, text/event-stream`), answered as JSON. Authorization: Bearer with an OAuth access token or an API key; without a valid one, 401 with `WWW-Authenticate: Bearer resource_metadata="<RFC 9728 document>"`. A browser `Origin` must be one of CORS_ORIGINS (else 403).',
  })
  @ApiBody({
    schema: { type: 'object', description: 'a JSON-RPC request or notification (a batch is refused)' },
  })
  @ApiOkResponse({ description: 'the JSON-RPC response' })
  async post(
    @Body() body: unknown,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<unknown> {
    const origin = req.headers.origin;
    // MCP transport §security: a browser's Origin outside the allow list is refused (DNS rebinding).
    if (origin !== undefined && !this.config.corsOrigins.includes(origin)) {
      void reply.code(403);
      return { detail: `Origin ${origin} is not allowed` };
    }
    const caller = await this.authenticate(req);
    if (!caller) {
      void reply.code(401).header('Cache-Control', 'no-store');
      return {
        detail:
          'The MCP endpoint takes an OAuth access token or an API key (a member token, or a token whose member left the workspace, acts nowhere here)',
      };
    }

    // One message per request: the rate limiter admits each request once (calls, concurrency),
    // so a JSON-RPC batch (up to 100 calls in the SDK's transport, run concurrently) would run
    // many calls on one admission. MCP Streamable HTTP dropped batching in 2025-06-18.
    if (Array.isArray(body)) {
      void reply.code(400);
      return { detail: 'JSON-RPC batches are not accepted: send one message per request' };
    }

    const credential = (req as AuthenticatedRequest).principal!.credential;
    const dispatch = this.tools.forRequest({
      credential,
      requestId: req.id,
      boundWorkspaceId: caller.boundWorkspaceId,
      membership: caller.membership,
    });
    const server = buildMcpServer(caller, dispatch, SERVER_VERSION);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      const response = await transport.handleRequest(webRequestOf(req), { parsedBody: body });
      void reply.code(response.status);
      response.headers.forEach((value, key) => void reply.header(key, value));
      const text = await response.text();
      if (response.status >= 400) return withDetail(text);
      return text === '' ? undefined : text;
    } finally {
      await server.close();
    }
  }

  /** The caller's workspace and scopes, or undefined when the credential cannot act here. */
  private async authenticate(req: FastifyRequest): Promise<McpCaller | undefined> {
    const credential = (req as AuthenticatedRequest).principal?.credential;
    // A member token is one member's own session (web chat), not a client of the API.
    if (!credential || credential.kind === 'member_token') return undefined;
    if (!credential.workspaceId) return { scopes: credential.scopes };
    const membership = await this.memberships.find(credential.workspaceId, credential);
    // The member who consented left the workspace: the token acts nowhere.
    if (!membership) return undefined;
    return {
      boundWorkspaceId: credential.workspaceId,
      membership,
      scopes: intersectScopesOnce(credential.scopes, membership.roleScopes),
    };
  }
}

/** The Fetch API request the SDK's transport reads (its body is passed already parsed). */
function webRequestOf(req: FastifyRequest): Request {
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of [value].flat()) headers.append(key, v);
  }
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url}`, { method: 'POST', headers });
}

/**
 * The transport's refusals (406 without the right Accept, 400 for a body that is not
 * JSON-RPC, 415) are JSON-RPC error objects; they also get the service's `{detail}`, so
 * every 4xx reads alike (JSON-RPC clients ignore the extra member).
 */
function withDetail(text: string): unknown {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown }; detail?: unknown };
    if (body && typeof body === 'object' && !Array.isArray(body) && body.detail === undefined)
      return {
        ...body,
        detail: typeof body.error?.message === 'string' ? body.error.message : 'Invalid MCP request',
      };
    return body;
  } catch {
    return { detail: text || 'Invalid MCP request' };
  }
}
