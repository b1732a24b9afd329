/**
 * What agents and the MCP endpoint ask before running a custom tool: are these arguments
 * valid for it? Answers the arguments with the tool's identity, or fails with a
 * ValidationError (400) naming the argument (`arguments.count: must be integer`), or a
 * NotFoundError when the workspace has no such tool. Message only; the handler is beside it.
 */
export class ValidateCustomToolArgumentsQuery {
  constructor(
    readonly workspaceId: string,
    readonly toolId: number,
    readonly args: unknown,
  ) {}
}

export interface ValidatedToolCall {
  toolId: number;
  toolkitId: number;
  /** The tool's MCP name. */
  name: string;
  /** Its toolkit's slug. */
  toolkitSlug: string;
  /** Whether its toolkit is enabled: a disabled toolkit's tools are offered to nobody. */
  toolkitEnabled: boolean;
  /** The tool's version whose schema the arguments were checked against. */
  version: number;
  arguments: Record<string, unknown>;
}
