/**
 * The mcp-servers feature's public surface: what other features (agents, the MCP
 * endpoint) may use. Everything else under modules/mcp-servers is internal.
 */
export { mcpServerStream, MCP_SERVER_EVENT_TYPES } from './domain/mcp-server.events';
export type { McpFailureReason, McpServerEvent, McpServerTool } from './domain/mcp-server.events';
export { ListEnabledMcpServerToolsQuery } from './queries/enabled-tools.query';
export type { EnabledMcpServerTool } from './queries/enabled-tools.query';
export { CallMcpServerToolCommand, McpToolCallFailed } from './commands/call-tool.command';
export type { McpToolResult } from './connect/mcp-tool-fetcher';
