/**
 * The message that starts a workflow for a member. Its own file, free of the handler's
 * imports, so that index.ts can export it: messaging starts the workflow of a chat
 * through it (the command bus routes it to work's handler, role gate included).
 */

/** The caller as a request names it (scopes, own member, role id). */
export interface StartAssignmentCaller {
  scopes: readonly string[];
  memberId: number | undefined;
  roleId: number | null | undefined;
  /**
   * An API key's or OAuth token's own scopes (undefined for a member token): starting a
   * workflow for oneself with a scoped credential needs assignments:write in the credential,
   * on every path that starts one (POST /assignments, and a chat created with workflowId).
   */
  credentialScopes?: readonly string[];
}

export class StartAssignmentCommand {
  constructor(
    readonly workspaceId: string,
    readonly workflowId: number,
    /** The member the workflow runs for; undefined: the caller's own member. */
    readonly memberId: number | undefined,
    readonly caller: StartAssignmentCaller,
  ) {}
}
