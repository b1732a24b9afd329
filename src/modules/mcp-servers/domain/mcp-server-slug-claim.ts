import { ClaimPlan, ClaimRef, ClaimTakenError, defineClaimKind } from '../../../core/claims/claims';
import { fold } from '../../../core/cqrs/decider';
import { ConflictError } from '../../../core/http/domain-errors';
import { mcpServerDecider, McpServerState } from './mcp-server';
import type { McpServerEvent } from './mcp-server.events';

/**
 * An MCP server's slug is unique per workspace: the server holds a core claim (scope:
 * the workspace, value: the slug) taken with McpServerCreated, moved by a change of
 * slug, and released with McpServerDeleted, so racing writes with one slug make one
 * server.
 */
export const MCP_SERVER_SLUG_CLAIM = defineClaimKind({
  name: 'mcp_server_slug',
  holds(events, value, scope) {
    const state = fold(mcpServerDecider, events as McpServerEvent[]);
    return state.status === 'live' && state.server.workspaceId === scope && state.server.slug === value;
  },
});

const claimOf = (workspaceId: string, slug: string): ClaimRef => ({
  scope: workspaceId,
  kind: MCP_SERVER_SLUG_CLAIM,
  value: slug,
});

/** The claims the decided events take and give up. */
export function mcpServerSlugClaims(events: readonly McpServerEvent[], _before: McpServerState): ClaimPlan {
  const take: ClaimRef[] = [];
  const release: ClaimRef[] = [];
  for (const e of events) {
    if (e.type === 'McpServerCreated') take.push(claimOf(e.data.workspaceId, e.data.slug));
    if (e.type === 'McpServerUpdated' && e.data.changes.slug !== undefined) {
      take.push(claimOf(e.data.workspaceId, e.data.changes.slug));
      if (e.data.previousSlug !== undefined) release.push(claimOf(e.data.workspaceId, e.data.previousSlug));
    }
    if (e.type === 'McpServerDeleted') release.push(claimOf(e.data.workspaceId, e.data.slug));
  }
  return { take, release };
}

/** The 409 of a slug another MCP server of the workspace holds (owner: `mcpserver-<id>`). */
export function mcpServerSlugConflict(error: ClaimTakenError, slug: string): ConflictError {
  const holder = /^mcpserver-(\d+)$/.exec(error.owner)?.[1] ?? error.owner;
  return new ConflictError(`slug: MCP server ${holder} of this workspace already has the slug "${slug}"`);
}
