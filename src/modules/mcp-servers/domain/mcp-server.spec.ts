import {
  ConflictError,
  NotFoundError,
  PreconditionFailedError,
  ValidationError,
} from '../../../core/http/domain-errors';
import { deciderSpec } from '../../../core/testing/decider-spec';
import { mcpServerDecider } from './mcp-server';
import { mcpServerSlugClaims } from './mcp-server-slug-claim';
import type { McpServerEvent } from './mcp-server.events';

const spec = deciderSpec(mcpServerDecider);
const ws = '0190a6c4-0000-7000-8000-000000000001';
const other = '0190a6c4-0000-7000-8000-000000000002';
const now = '2026-11-23T10:00:00.000Z';
const target = { serverId: 3, workspaceId: ws, now };
const base = { name: 'CRM', slug: 'crm', mcpUrl: 'https://mcp.example.com/mcp' };

const created: McpServerEvent = {
  type: 'McpServerCreated',
  data: {
    serverId: 3,
    workspaceId: ws,
    name: 'CRM',
    slug: 'crm',
    description: null,
    mcpUrl: 'https://mcp.example.com/mcp',
    supportsDirectAuth: false,
    secrets: { directAuthToken: null, oauthClientId: 'sealed-id', oauthClientSecret: 'sealed-secret' },
    enabled: true,
    createdAt: now,
  },
};

describe('MCP server decider', () => {
  it('creates an enabled server with its sealed OAuth credentials', () =>
    spec
      .given([])
      .when({
        type: 'CreateServer',
        ...target,
        ...base,
        name: ' CRM ',
        supportsDirectAuth: false,
        secrets: { oauthClientId: 'sealed-id', oauthClientSecret: 'sealed-secret' },
      })
      .then([created]));

  it('needs both OAuth credentials without direct auth, and refuses them with it', () => {
    spec
      .given([])
      .when({
        type: 'CreateServer',
        ...target,
        ...base,
        supportsDirectAuth: false,
        secrets: { oauthClientId: 'x' },
      })
      .thenThrows(ValidationError, /^oauthClientSecret: required when supportsDirectAuth is false/);
    spec
      .given([])
      .when({
        type: 'CreateServer',
        ...target,
        ...base,
        supportsDirectAuth: true,
        secrets: { oauthClientSecret: 'x' },
      })
      .thenThrows(ValidationError, /^oauthClientSecret: only when supportsDirectAuth is false/);
    spec
      .given([])
      .when({ type: 'CreateServer', ...target, ...base, slug: 'No', supportsDirectAuth: true, secrets: {} })
      .thenThrows(ValidationError, /^slug:/);
  });

  it('switching to direct auth drops the OAuth credentials; an unchanged update appends nothing', () => {
    spec
      .given([created])
      .when({ type: 'UpdateServer', ...target, supportsDirectAuth: true, ifMatch: [1] })
      .then([
        {
          type: 'McpServerUpdated',
          data: {
            serverId: 3,
            workspaceId: ws,
            changes: { supportsDirectAuth: true, secrets: { oauthClientId: null, oauthClientSecret: null } },
            updatedAt: now,
          },
        },
      ]);
    spec
      .given([created])
      .when({ type: 'UpdateServer', ...target, name: 'CRM' })
      .then([]);
    spec
      .given([created])
      .when({ type: 'UpdateServer', ...target, name: 'x', ifMatch: [7] })
      .thenThrows(PreconditionFailedError);
  });

  it('records fetched tools and failures; refuses a list naming a tool twice', () => {
    const tool = { name: 'a', title: null, description: null, inputSchema: { type: 'object' } };
    spec
      .given([created])
      .when({ type: 'RecordToolsFetched', ...target, transport: 'sse', tools: [tool] })
      .then([
        {
          type: 'McpServerToolsFetched',
          data: { serverId: 3, workspaceId: ws, transport: 'sse', tools: [tool], fetchedAt: now },
        },
      ]);
    spec
      .given([created])
      .when({ type: 'RecordToolsFetched', ...target, transport: 'sse', tools: [tool, tool] })
      .thenThrows(ValidationError, /listed the tool "a" twice/);
    spec
      .given([created])
      .when({ type: 'RecordFetchFailure', ...target, reason: 'timeout', detail: 'slow' })
      .then([
        {
          type: 'McpServerToolsFetchFailed',
          data: { serverId: 3, workspaceId: ws, reason: 'timeout', detail: 'slow', failedAt: now },
        },
      ]);
  });

  it('enables and disables idempotently, hides other workspaces, deletes once', () => {
    spec
      .given([created])
      .when({ type: 'EnableServer', ...target })
      .then([]);
    spec
      .given([created])
      .when({ type: 'DisableServer', ...target })
      .then([{ type: 'McpServerDisabled', data: { serverId: 3, workspaceId: ws, disabledAt: now } }]);
    spec
      .given([created])
      .when({ type: 'DisableServer', ...target, workspaceId: other })
      .thenThrows(NotFoundError);
    const deleted: McpServerEvent = {
      type: 'McpServerDeleted',
      data: { serverId: 3, workspaceId: ws, slug: 'crm', deletedAt: now },
    };
    spec
      .given([created])
      .when({ type: 'DeleteServer', ...target })
      .then([deleted]);
    spec
      .given([created, deleted])
      .when({ type: 'DeleteServer', ...target })
      .thenThrows(NotFoundError);
    spec
      .given([created])
      .when({ type: 'CreateServer', ...target, ...base, supportsDirectAuth: true, secrets: {} })
      .thenThrows(ConflictError);
  });

  it('takes the slug claim on create, moves it on a change of slug, releases it on delete', () => {
    const claim = (value: string) => expect.objectContaining({ scope: ws, value });
    expect(mcpServerSlugClaims([created], { status: 'none' })).toEqual({ take: [claim('crm')], release: [] });
    expect(
      mcpServerSlugClaims(
        [
          {
            type: 'McpServerUpdated',
            data: {
              serverId: 3,
              workspaceId: ws,
              changes: { slug: 'new' },
              previousSlug: 'crm',
              updatedAt: now,
            },
          },
        ],
        { status: 'none' },
      ),
    ).toEqual({ take: [claim('new')], release: [claim('crm')] });
  });
});
