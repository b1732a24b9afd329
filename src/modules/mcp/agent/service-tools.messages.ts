/**
 * The service's own tools (the MCP endpoint's), for a chat's assistant acting as its
 * workflow's agent member. Messages only; the handlers are in service-tools.handlers.ts.
 */

/** One of the endpoint's tools as the agent member sees it. */
export interface ServiceTool {
  /** The endpoint's name (`records.search`). */
  name: string;
  title: string;
  description: string;
  /** The arguments' JSON Schema (the workspace is the agent's own: no `workspaceId`). */
  inputSchema: Record<string, unknown>;
  readOnly: boolean;
  /** The scope of the REST route it mirrors. */
  scope: string;
  /** Whether the agent member's role holds that scope now: only these may be offered. */
  granted: boolean;
}

/**
 * Every tool of the MCP endpoint, each marked `granted` when the agent member (an active
 * agent of this workspace) holds its scope through its role. For any other member, or
 * none, nothing is granted.
 */
export class ListServiceToolsQuery {
  constructor(
    readonly workspaceId: string,
    readonly agentMemberId: number,
  ) {}
}

/**
 * `ok`: the route's answer (`body`); `invalid_arguments`: its 400 (`detail` names the
 * argument); `refused`: the agent may not (no such tool, not an active agent here, another
 * workspace, the scope or the route's own policy: 401/403); `error`: the route's other 4xx
 * (404, 409...); `failed`: a 5xx (its cause logged with the request id, never given).
 */
export type ServiceToolAnswer =
  | { outcome: 'ok'; status: number; body: unknown }
  | {
      outcome: 'invalid_arguments' | 'refused' | 'error' | 'failed';
      status: number;
      detail: string;
    };

/**
 * Calls one tool as the agent member: the principal is core's `principalOf` over the
 * member's membership with the `assistant` credential (its role's scopes, nothing more),
 * the tool's scope is checked as the endpoint checks it, and the call runs the route's
 * commands and queries (ToolDispatcher), so its events carry the member as actor
 * (`kind: assistant`) and the current job's correlation id.
 */
export class CallServiceToolCommand {
  constructor(
    readonly workspaceId: string,
    readonly agentMemberId: number,
    readonly name: string,
    readonly args: Record<string, unknown>,
  ) {}
}
