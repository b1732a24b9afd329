/**
 * For other features (the assistant) through the CommandBus: calls one tool of an
 * enabled MCP server of the workspace with the server's own auth. Resolves with the
 * tool's answer (McpToolResult: `isError` is the tool's own refusal); rejects with
 * NotFoundError when the workspace has no such enabled server, or McpToolCallFailed when
 * the server cannot be reached or answers no result. Message only; the handler is internal.
 */
export class CallMcpServerToolCommand {
  constructor(
    readonly workspaceId: string,
    readonly serverId: number,
    readonly toolName: string,
    readonly args: Record<string, unknown>,
  ) {}
}

/** The server could not be reached or gave no result: `reason` as McpFailureReason names it. */
export class McpToolCallFailed extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'McpToolCallFailed';
  }
}
