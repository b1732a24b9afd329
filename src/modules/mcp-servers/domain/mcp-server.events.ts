/**
 * The events of an external MCP server a workspace connects (stream `mcpserver-<id>`).
 * Credentials travel only sealed (core/crypto/secret-box.ts, context
 * `mcpserver:<id>:<field>`); the tools are stored as each refresh found them. Plain typed
 * objects; this file loads nothing of the feature's internals, so index.ts can export it.
 */

export const mcpServerStream = (id: number): string => `mcpserver-${id}`;

/** One tool as the server's tools/list described it. */
export interface McpServerTool {
  name: string;
  title: string | null;
  description: string | null;
  inputSchema: Record<string, unknown>;
}

/** Sealed credentials; null when not set. */
export interface McpServerSecrets {
  /** The bearer sent as is when supportsDirectAuth (none: no Authorization header). */
  directAuthToken: string | null;
  oauthClientId: string | null;
  oauthClientSecret: string | null;
}

/** Why a refresh failed: what the details show as `lastRefreshError.reason`. */
export type McpFailureReason =
  'unreachable' | 'tls' | 'unauthorized' | 'oauth' | 'protocol_error' | 'timeout' | 'forbidden_address';

export interface McpServerCreated {
  type: 'McpServerCreated';
  data: {
    serverId: number;
    workspaceId: string;
    name: string;
    slug: string;
    description: string | null;
    mcpUrl: string;
    supportsDirectAuth: boolean;
    secrets: McpServerSecrets;
    enabled: boolean;
    createdAt: string;
  };
}

export interface McpServerChanges {
  name?: string;
  slug?: string;
  description?: string | null;
  mcpUrl?: string;
  supportsDirectAuth?: boolean;
  secrets?: Partial<McpServerSecrets>;
}

export interface McpServerUpdated {
  type: 'McpServerUpdated';
  data: {
    serverId: number;
    workspaceId: string;
    changes: McpServerChanges;
    /** The slug before a change of slug (the claim released with it); absent otherwise. */
    previousSlug?: string;
    updatedAt: string;
  };
}

export interface McpServerEnabled {
  type: 'McpServerEnabled';
  data: { serverId: number; workspaceId: string; enabledAt: string };
}

export interface McpServerDisabled {
  type: 'McpServerDisabled';
  data: { serverId: number; workspaceId: string; disabledAt: string };
}

export interface McpServerToolsFetched {
  type: 'McpServerToolsFetched';
  data: {
    serverId: number;
    workspaceId: string;
    transport: 'streamable-http' | 'sse';
    tools: McpServerTool[];
    fetchedAt: string;
  };
}

export interface McpServerToolsFetchFailed {
  type: 'McpServerToolsFetchFailed';
  data: {
    serverId: number;
    workspaceId: string;
    reason: McpFailureReason;
    detail: string;
    failedAt: string;
  };
}

export interface McpServerDeleted {
  type: 'McpServerDeleted';
  data: { serverId: number; workspaceId: string; slug: string; deletedAt: string };
}

export type McpServerEvent =
  | McpServerCreated
  | McpServerUpdated
  | McpServerEnabled
  | McpServerDisabled
  | McpServerToolsFetched
  | McpServerToolsFetchFailed
  | McpServerDeleted;

export const MCP_SERVER_EVENT_TYPES: readonly McpServerEvent['type'][] = [
  'McpServerCreated',
  'McpServerUpdated',
  'McpServerEnabled',
  'McpServerDisabled',
  'McpServerToolsFetched',
  'McpServerToolsFetchFailed',
  'McpServerDeleted',
];
