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

/**
 * The tools of a workspace's enabled custom toolkits, as an agent is offered them (its
 * name, description, prompt, chat model and argument schema). Message only.
 */
export class ListEnabledCustomToolsQuery {
  constructor(readonly workspaceId: string) {}
}

export interface EnabledCustomTool {
  toolId: number;
  toolkitId: number;
  toolkitSlug: string;
  name: string;
  displayName: string;
  description: string | null;
  prompt: string | null;
  chatModel: string | null;
  inputSchema: Record<string, unknown>;
}
