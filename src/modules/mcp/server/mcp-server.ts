import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import {
  CallToolRequestSchema,
  CallToolResult,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Membership } from '../../../core/auth/principal';
import { grants } from '../../../core/auth/scopes';
import { dataTypeSchema, dataTypeUri, parseDataTypeUri } from './data-type-schema';
import type { Dispatch, ToolAnswer } from './tool-dispatch';
import { inputSchemaOf, MCP_TOOLS, McpTool, missingParam } from './tools';

/** Who calls, as far as listing goes: the workspace the credential is bound to, and its scopes there. */
export interface McpCaller {
  /** The workspace an OAuth token was granted for; undefined for an API key (tools take `workspaceId`). */
  boundWorkspaceId?: string;
  /** The member's place in the bound workspace (the tools' principal there). */
  membership?: Membership;
  /** Effective scopes: the credential's ∩ the member's role scopes when the workspace is known. */
  scopes: readonly string[];
}

/**
 * The SDK's Server builds an Ajv instance (with its formats) per Server unless given one: a
 * third of an MCP request's own CPU time in the bench's profile, since the endpoint is
 * stateless and builds a Server per request. One validator serves them all (it is used
 * for elicitation only, which these tools do not ask for).
 */
let validator: AjvJsonSchemaValidator | undefined;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function toolError(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}

/**
 * An MCP server for one HTTP request (the endpoint is stateless, so nothing outlives the
 * request): tools/list shows the tools the caller's scopes allow; tools/call checks the
 * same scope, then runs what the REST route the tool mirrors runs (tool-dispatch.ts): its
 * membership and scope check, validation, commands and queries, events.
 */
export function buildMcpServer(caller: McpCaller, dispatch: Dispatch, version: string): Server {
  const server = new Server(
    { name: 'workspace-service', version },
    {
      capabilities: { tools: {}, resources: {} },
      jsonSchemaValidator: (validator ??= new AjvJsonSchemaValidator()),
      instructions:
        'Tools act in one workspace: an OAuth token is bound to the one chosen at consent; with an API key pass workspaceId.',
    },
  );
  const usable = (tool: McpTool) => grants(caller.scopes, tool.scope);
  const bound = caller.boundWorkspaceId !== undefined;

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: MCP_TOOLS.filter(usable).map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: inputSchemaOf(tool, bound),
      outputSchema: tool.output,
      annotations: { readOnlyHint: tool.readOnly },
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = MCP_TOOLS.find((t) => t.name === request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${request.params.name}`);
    if (!usable(tool)) return toolError(`This credential lacks the scope ${tool.scope}`);
    const args = request.params.arguments ?? {};
    const wid = workspaceOf(caller, args.workspaceId);
    if (!wid) return toolError('workspaceId: a workspace UUID is required with this credential');
    const missing = missingParam(tool, args);
    if (missing) return toolError(`${missing}: required`);
    const res = await dispatch(tool, wid, args);
    return resultOf(res);
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    const wid = caller.boundWorkspaceId;
    if (!wid || !grants(caller.scopes, 'datatypes:read')) return { resources: [] };
    const res = await dispatch(toolNamed('datatypes.list'), wid, { pageSize: 1000 });
    if (res.status !== 200) return { resources: [] };
    const items = (res.body as { items: { id: number; name: string; slug: string }[] }).items;
    return {
      resources: items.map((dt) => ({
        uri: dataTypeUri(wid, dt.id),
        name: dt.slug,
        title: dt.name,
        description: `JSON Schema of the field values of "${dt.name}" records`,
        mimeType: 'application/schema+json',
      })),
    };
  });

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const ref = parseDataTypeUri(request.params.uri);
    if (!ref || !workspaceOf(caller, ref.workspaceId) || !grants(caller.scopes, 'datatypes:read'))
      throw new McpError(ErrorCode.InvalidParams, `Resource not found: ${request.params.uri}`);
    const res = await dispatch(toolNamed('datatypes.get'), ref.workspaceId, { dataTypeId: ref.dataTypeId });
    if (res.status !== 200)
      throw new McpError(ErrorCode.InvalidParams, `Resource not found: ${request.params.uri}`);
    return {
      contents: [
        {
          uri: request.params.uri,
          mimeType: 'application/schema+json',
          text: JSON.stringify(dataTypeSchema(request.params.uri, res.body as never)),
        },
      ],
    };
  });
  return server;
}

/** The workspace a call acts in: the bound one (another is refused), else the argument. */
function workspaceOf(caller: McpCaller, given: unknown): string | undefined {
  if (caller.boundWorkspaceId) {
    if (given === undefined || (typeof given === 'string' && given.toLowerCase() === caller.boundWorkspaceId))
      return caller.boundWorkspaceId;
    return undefined;
  }
  return typeof given === 'string' && UUID.test(given) ? given.toLowerCase() : undefined;
}

function toolNamed(name: string): McpTool {
  return MCP_TOOLS.find((t) => t.name === name)!;
}

/** The route's answer as a tool result: the body as structured content, an error's detail as text. */
function resultOf(res: ToolAnswer): CallToolResult {
  if (res.status >= 400) {
    const detail = (res.body as { detail?: string } | undefined)?.detail ?? `HTTP ${res.status}`;
    return toolError(`${res.status}: ${detail}`);
  }
  const structured =
    res.body && typeof res.body === 'object' && !Array.isArray(res.body)
      ? (res.body as Record<string, unknown>)
      : { result: res.body ?? null };
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}
