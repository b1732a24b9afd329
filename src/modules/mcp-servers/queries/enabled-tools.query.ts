import type { McpServerTool } from '../domain/mcp-server.events';

/** One tool of an enabled external MCP server, as agents are offered it. */
export interface EnabledMcpServerTool extends McpServerTool {
  serverId: number;
  serverSlug: string;
  mcpUrl: string;
}

/**
 * For other features (agents, the MCP endpoint) through the QueryBus: the tools of a
 * workspace's enabled MCP servers. A disabled server's tools are in no answer.
 */
export class ListEnabledMcpServerToolsQuery {
  constructor(readonly workspaceId: string) {}
}
