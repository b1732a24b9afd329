import { Decider } from '../../../core/cqrs/decider';
import { assertIfMatch, optionalText, requiredText } from '../../../core/cqrs/fields';
import { ConflictError, NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import type {
  McpFailureReason,
  McpServerChanges,
  McpServerEvent,
  McpServerSecrets,
  McpServerTool,
} from './mcp-server.events';

export const MCP_SERVER_NAME_MAX = 200;
export const MCP_SERVER_SLUG_MAX = 100;
export const MCP_SERVER_DESCRIPTION_MAX = 10_000;
export const MCP_SECRET_MAX = 4096;
/** Lower-case letters, digits, `-` and `_`, starting with a letter or digit (like toolkit slugs). */
export const MCP_SERVER_SLUG_PATTERN = /^[a-z0-9][a-z0-9_-]*$/;

export interface McpServerSnapshot {
  id: number;
  workspaceId: string;
  name: string;
  slug: string;
  description: string | null;
  mcpUrl: string;
  supportsDirectAuth: boolean;
  secrets: McpServerSecrets;
  enabled: boolean;
  version: number;
}

export type McpServerState =
  { status: 'none' } | { status: 'live'; server: McpServerSnapshot } | { status: 'deleted' };

/** Credentials as the command gives them: sealed already (the handler seals), null clears. */
export type SecretsInput = Partial<McpServerSecrets>;

export interface McpServerInput {
  name: string;
  slug: string;
  description?: string | null;
  /** Already through the outbound-address guard (the handler checks, with DNS). */
  mcpUrl: string;
  supportsDirectAuth: boolean;
  secrets: SecretsInput;
}

interface Target {
  serverId: number;
  workspaceId: string;
  now: string;
}
type Conditional = { ifMatch?: number[] };

export type McpServerCommand =
  | ({ type: 'CreateServer' } & Target & McpServerInput)
  | ({ type: 'UpdateServer' } & Target & Conditional & Partial<McpServerInput>)
  | ({ type: 'EnableServer' } & Target)
  | ({ type: 'DisableServer' } & Target)
  | ({ type: 'RecordToolsFetched'; transport: 'streamable-http' | 'sse'; tools: McpServerTool[] } & Target)
  | ({ type: 'RecordFetchFailure'; reason: McpFailureReason; detail: string } & Target)
  | ({ type: 'DeleteServer' } & Target & Conditional);

function slugOf(raw: string): string {
  if (raw.length > MCP_SERVER_SLUG_MAX || !MCP_SERVER_SLUG_PATTERN.test(raw))
    throw new ValidationError(
      `slug: must be 1-${MCP_SERVER_SLUG_MAX} lower-case letters, digits, "-" or "_", starting with a letter or digit`,
    );
  return raw;
}

function live(state: McpServerState, workspaceId: string): McpServerSnapshot {
  if (state.status !== 'live' || state.server.workspaceId !== workspaceId)
    throw new NotFoundError('MCP server not found');
  return state.server;
}

const NO_SECRETS: McpServerSecrets = { directAuthToken: null, oauthClientId: null, oauthClientSecret: null };

/**
 * The credentials a server holds after a write: direct auth keeps at most a bearer; OAuth
 * (supportsDirectAuth false) needs a client id and secret, and holds no bearer. Switching
 * mode drops the other mode's credentials, so nothing unused stays sealed at rest.
 */
function resolveSecrets(
  supportsDirectAuth: boolean,
  given: SecretsInput,
  current: McpServerSecrets,
  switching: boolean,
): McpServerSecrets {
  if (supportsDirectAuth) {
    if (given.oauthClientId)
      throw new ValidationError('oauthClientId: only when supportsDirectAuth is false');
    if (given.oauthClientSecret)
      throw new ValidationError('oauthClientSecret: only when supportsDirectAuth is false');
    return {
      directAuthToken:
        given.directAuthToken !== undefined
          ? given.directAuthToken
          : switching
            ? null
            : current.directAuthToken,
      oauthClientId: null,
      oauthClientSecret: null,
    };
  }
  if (given.directAuthToken)
    throw new ValidationError('directAuthToken: only when supportsDirectAuth is true');
  const oauthClientId = given.oauthClientId !== undefined ? given.oauthClientId : current.oauthClientId;
  const oauthClientSecret =
    given.oauthClientSecret !== undefined ? given.oauthClientSecret : current.oauthClientSecret;
  if (!oauthClientId) throw new ValidationError('oauthClientId: required when supportsDirectAuth is false');
  if (!oauthClientSecret)
    throw new ValidationError('oauthClientSecret: required when supportsDirectAuth is false');
  return { directAuthToken: null, oauthClientId, oauthClientSecret };
}

export const mcpServerDecider: Decider<McpServerState, McpServerCommand, McpServerEvent> = {
  initialState: () => ({ status: 'none' }),

  evolve(state, event) {
    if (event.type === 'McpServerCreated') {
      const d = event.data;
      return {
        status: 'live',
        server: {
          id: d.serverId,
          workspaceId: d.workspaceId,
          name: d.name,
          slug: d.slug,
          description: d.description,
          mcpUrl: d.mcpUrl,
          supportsDirectAuth: d.supportsDirectAuth,
          secrets: d.secrets,
          enabled: d.enabled,
          version: 1,
        },
      };
    }
    if (state.status !== 'live') return state;
    const server = state.server;
    switch (event.type) {
      case 'McpServerUpdated': {
        const { secrets, ...rest } = event.data.changes;
        return {
          status: 'live',
          server: {
            ...server,
            ...rest,
            secrets: { ...server.secrets, ...secrets },
            version: server.version + 1,
          },
        };
      }
      case 'McpServerEnabled':
        return { status: 'live', server: { ...server, enabled: true, version: server.version + 1 } };
      case 'McpServerDisabled':
        return { status: 'live', server: { ...server, enabled: false, version: server.version + 1 } };
      case 'McpServerToolsFetched':
      case 'McpServerToolsFetchFailed':
        // What the details show changed: the resource's version moves with it.
        return { status: 'live', server: { ...server, version: server.version + 1 } };
      case 'McpServerDeleted':
        return { status: 'deleted' };
    }
  },

  decide(command, state) {
    const { serverId, workspaceId, now } = command;
    switch (command.type) {
      case 'CreateServer': {
        if (state.status !== 'none') throw new ConflictError('An MCP server with this id already exists');
        return [
          {
            type: 'McpServerCreated',
            data: {
              serverId,
              workspaceId,
              name: requiredText('name', command.name, MCP_SERVER_NAME_MAX),
              slug: slugOf(command.slug),
              description: optionalText('description', command.description, MCP_SERVER_DESCRIPTION_MAX),
              mcpUrl: command.mcpUrl,
              supportsDirectAuth: command.supportsDirectAuth,
              secrets: resolveSecrets(command.supportsDirectAuth, command.secrets, NO_SECRETS, false),
              enabled: true,
              createdAt: now,
            },
          },
        ];
      }
      case 'UpdateServer': {
        const server = live(state, workspaceId);
        assertIfMatch(command.ifMatch, server.version);
        const changes: McpServerChanges = {};
        if (command.name !== undefined) {
          const name = requiredText('name', command.name, MCP_SERVER_NAME_MAX);
          if (name !== server.name) changes.name = name;
        }
        if (command.slug !== undefined) {
          const slug = slugOf(command.slug);
          if (slug !== server.slug) changes.slug = slug;
        }
        if (command.description !== undefined) {
          const description = optionalText('description', command.description, MCP_SERVER_DESCRIPTION_MAX);
          if (description !== server.description) changes.description = description;
        }
        if (command.mcpUrl !== undefined && command.mcpUrl !== server.mcpUrl) changes.mcpUrl = command.mcpUrl;
        const mode = command.supportsDirectAuth ?? server.supportsDirectAuth;
        if (mode !== server.supportsDirectAuth) changes.supportsDirectAuth = mode;
        const secrets = resolveSecrets(
          mode,
          command.secrets ?? {},
          server.secrets,
          mode !== server.supportsDirectAuth,
        );
        const moved: Partial<McpServerSecrets> = {};
        for (const key of ['directAuthToken', 'oauthClientId', 'oauthClientSecret'] as const)
          if (secrets[key] !== server.secrets[key]) moved[key] = secrets[key];
        if (Object.keys(moved).length) changes.secrets = moved;
        if (!Object.keys(changes).length) return [];
        return [
          {
            type: 'McpServerUpdated',
            data: {
              serverId,
              workspaceId,
              changes,
              ...(changes.slug !== undefined ? { previousSlug: server.slug } : {}),
              updatedAt: now,
            },
          },
        ];
      }
      case 'EnableServer': {
        const server = live(state, workspaceId);
        if (server.enabled) return [];
        return [{ type: 'McpServerEnabled', data: { serverId, workspaceId, enabledAt: now } }];
      }
      case 'DisableServer': {
        const server = live(state, workspaceId);
        if (!server.enabled) return [];
        return [{ type: 'McpServerDisabled', data: { serverId, workspaceId, disabledAt: now } }];
      }
      case 'RecordToolsFetched': {
        live(state, workspaceId);
        const seen = new Set<string>();
        for (const tool of command.tools) {
          if (seen.has(tool.name))
            throw new ValidationError(`tools: the server listed the tool "${tool.name}" twice`);
          seen.add(tool.name);
        }
        return [
          {
            type: 'McpServerToolsFetched',
            data: {
              serverId,
              workspaceId,
              transport: command.transport,
              tools: command.tools,
              fetchedAt: now,
            },
          },
        ];
      }
      case 'RecordFetchFailure': {
        live(state, workspaceId);
        return [
          {
            type: 'McpServerToolsFetchFailed',
            data: { serverId, workspaceId, reason: command.reason, detail: command.detail, failedAt: now },
          },
        ];
      }
      case 'DeleteServer': {
        const server = live(state, workspaceId);
        assertIfMatch(command.ifMatch, server.version);
        return [
          { type: 'McpServerDeleted', data: { serverId, workspaceId, slug: server.slug, deletedAt: now } },
        ];
      }
    }
  },
};
