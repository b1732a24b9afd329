import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { ClaimTakenError } from '../../../core/claims/claims';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { SecretBox } from '../../../core/crypto/secret-box';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { nextId } from '../../../core/database/ids';
import { NotFoundError } from '../../../core/http/domain-errors';
import { checkOutboundUrl } from '../../../core/net/outbound-address';
import { McpFetchError } from '../connect/mcp-errors';
import { McpToolFetcher, McpToolResult } from '../connect/mcp-tool-fetcher';
import { CallMcpServerToolCommand, McpToolCallFailed } from './call-tool.command';
import { mcpServerDecider, McpServerCommand, SecretsInput } from '../domain/mcp-server';
import { mcpServerSlugClaims, mcpServerSlugConflict } from '../domain/mcp-server-slug-claim';
import { McpServerSecrets, mcpServerStream } from '../domain/mcp-server.events';
import { McpServerEntity } from '../projections/mcp-server.entity';

export const MCP_SECRET_BOX = Symbol('MCP_SECRET_BOX');

/** What the API takes: plain credentials (sealed before anything is decided or stored). */
export interface McpServerBody {
  name?: string;
  slug?: string;
  description?: string | null;
  mcpUrl?: string;
  supportsDirectAuth?: boolean;
  directAuthToken?: string | null;
  oauthClientId?: string | null;
  oauthClientSecret?: string | null;
}

export class CreateMcpServerCommand {
  constructor(
    readonly workspaceId: string,
    readonly body: Required<Pick<McpServerBody, 'name' | 'slug' | 'mcpUrl' | 'supportsDirectAuth'>> &
      McpServerBody,
  ) {}
}

export class UpdateMcpServerCommand {
  constructor(
    readonly workspaceId: string,
    readonly serverId: number,
    readonly body: McpServerBody,
    readonly ifMatch?: number[],
  ) {}
}

export class SetMcpServerEnabledCommand {
  constructor(
    readonly workspaceId: string,
    readonly serverId: number,
    readonly enabled: boolean,
  ) {}
}

export class RefreshMcpServerToolsCommand {
  constructor(
    readonly workspaceId: string,
    readonly serverId: number,
  ) {}
}

export class DeleteMcpServerCommand {
  constructor(
    readonly workspaceId: string,
    readonly serverId: number,
    readonly ifMatch?: number[],
  ) {}
}

const now = () => new Date().toISOString();
const SECRET_FIELDS = ['directAuthToken', 'oauthClientId', 'oauthClientSecret'] as const;
/** The associated data binding a sealed credential to its server and field. */
export const secretContext = (serverId: number, field: keyof McpServerSecrets): string =>
  `mcpserver:${serverId}:${field}`;

async function decide(repo: EventSourcedRepository, command: McpServerCommand): Promise<void> {
  const movesSlug =
    command.type === 'CreateServer' || command.type === 'UpdateServer' || command.type === 'DeleteServer';
  try {
    await repo.handle({
      streamName: mcpServerStream(command.serverId),
      workspaceId: command.workspaceId,
      decider: mcpServerDecider,
      command,
      ...(movesSlug ? { claims: mcpServerSlugClaims } : {}),
    });
  } catch (error) {
    if (error instanceof ClaimTakenError) throw mcpServerSlugConflict(error, error.value);
    throw error;
  }
}

function sealAll(box: SecretBox, serverId: number, body: McpServerBody): SecretsInput {
  const sealed: SecretsInput = {};
  for (const field of SECRET_FIELDS) {
    const value = body[field];
    if (value === undefined) continue;
    sealed[field] = value === null || value === '' ? null : box.seal(value, secretContext(serverId, field));
  }
  return sealed;
}

const policyOf = (config: AppConfig) => ({
  allowHttp: config.webhookAllowHttp,
  allowPrivateNetworks: config.webhookAllowPrivateNetworks,
});

/** Creates a server (enabled, no tools yet: refresh-tools or enable fetches them). Returns its id. */
@CommandHandler(CreateMcpServerCommand)
export class CreateMcpServerHandler implements ICommandHandler<CreateMcpServerCommand, number> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(MCP_SECRET_BOX) private readonly box: SecretBox,
  ) {}

  async execute({ workspaceId, body }: CreateMcpServerCommand): Promise<number> {
    const url = await checkOutboundUrl(body.mcpUrl, 'mcpUrl', policyOf(this.config));
    const serverId = await nextId(this.db, 'mcp_server_id_seq');
    await decide(this.repo, {
      type: 'CreateServer',
      serverId,
      workspaceId,
      now: now(),
      name: body.name,
      slug: body.slug,
      description: body.description,
      mcpUrl: url.href,
      supportsDirectAuth: body.supportsDirectAuth,
      secrets: sealAll(this.box, serverId, body),
    });
    return serverId;
  }
}

@CommandHandler(UpdateMcpServerCommand)
export class UpdateMcpServerHandler implements ICommandHandler<UpdateMcpServerCommand> {
  constructor(
    private readonly repo: EventSourcedRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(MCP_SECRET_BOX) private readonly box: SecretBox,
  ) {}

  async execute({ workspaceId, serverId, body, ifMatch }: UpdateMcpServerCommand): Promise<void> {
    const url =
      body.mcpUrl === undefined
        ? undefined
        : await checkOutboundUrl(body.mcpUrl, 'mcpUrl', policyOf(this.config));
    await decide(this.repo, {
      type: 'UpdateServer',
      serverId,
      workspaceId,
      ifMatch,
      now: now(),
      name: body.name,
      slug: body.slug,
      description: body.description,
      mcpUrl: url?.href,
      supportsDirectAuth: body.supportsDirectAuth,
      secrets: sealAll(this.box, serverId, body),
    });
  }
}

/**
 * Connects to the server, lists its tools and records the result: McpServerToolsFetched,
 * or McpServerToolsFetchFailed with the reason (the previous list stays).
 */
@CommandHandler(RefreshMcpServerToolsCommand)
export class RefreshMcpServerToolsHandler implements ICommandHandler<RefreshMcpServerToolsCommand> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly db: DataSource,
    private readonly fetcher: McpToolFetcher,
    @Inject(MCP_SECRET_BOX) private readonly box: SecretBox,
  ) {}

  async execute({ workspaceId, serverId }: RefreshMcpServerToolsCommand): Promise<void> {
    const row = await this.db.getRepository(McpServerEntity).findOneBy({ id: serverId, workspaceId });
    if (!row) throw new NotFoundError('MCP server not found');
    const open = (field: keyof McpServerSecrets) =>
      row[field] ? this.box.open(row[field], secretContext(serverId, field)) : null;
    const target = { serverId, workspaceId };
    try {
      const fetched = await this.fetcher.fetchTools({
        mcpUrl: row.mcpUrl,
        supportsDirectAuth: row.supportsDirectAuth,
        directAuthToken: open('directAuthToken'),
        oauthClientId: open('oauthClientId'),
        oauthClientSecret: open('oauthClientSecret'),
      });
      await decide(this.repo, { type: 'RecordToolsFetched', ...target, now: now(), ...fetched });
    } catch (error) {
      if (!(error instanceof McpFetchError)) throw error;
      await decide(this.repo, {
        type: 'RecordFetchFailure',
        ...target,
        now: now(),
        reason: error.reason,
        detail: error.message.slice(0, 500),
      });
    }
  }
}

/** Enable and disable are idempotent; enabling fetches the tools afresh. */
@CommandHandler(SetMcpServerEnabledCommand)
export class SetMcpServerEnabledHandler implements ICommandHandler<SetMcpServerEnabledCommand> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly refresh: RefreshMcpServerToolsHandler,
  ) {}

  async execute({ workspaceId, serverId, enabled }: SetMcpServerEnabledCommand): Promise<void> {
    await decide(this.repo, {
      type: enabled ? 'EnableServer' : 'DisableServer',
      serverId,
      workspaceId,
      now: now(),
    });
    if (enabled) await this.refresh.execute(new RefreshMcpServerToolsCommand(workspaceId, serverId));
  }
}

@CommandHandler(DeleteMcpServerCommand)
export class DeleteMcpServerHandler implements ICommandHandler<DeleteMcpServerCommand> {
  constructor(private readonly repo: EventSourcedRepository) {}

  async execute({ workspaceId, serverId, ifMatch }: DeleteMcpServerCommand): Promise<void> {
    await decide(this.repo, { type: 'DeleteServer', serverId, workspaceId, ifMatch, now: now() });
  }
}

/** Calls a tool of an enabled server with its opened credentials (never logged). */
@CommandHandler(CallMcpServerToolCommand)
export class CallMcpServerToolHandler implements ICommandHandler<CallMcpServerToolCommand> {
  constructor(
    private readonly db: DataSource,
    private readonly fetcher: McpToolFetcher,
    @Inject(MCP_SECRET_BOX) private readonly box: SecretBox,
  ) {}

  async execute({ workspaceId, serverId, toolName, args }: CallMcpServerToolCommand): Promise<McpToolResult> {
    const row = await this.db.getRepository(McpServerEntity).findOneBy({ id: serverId, workspaceId });
    if (!row || !row.enabled) throw new NotFoundError('MCP server not found');
    const open = (field: keyof McpServerSecrets) =>
      row[field] ? this.box.open(row[field], secretContext(serverId, field)) : null;
    try {
      return await this.fetcher.callTool(
        {
          mcpUrl: row.mcpUrl,
          supportsDirectAuth: row.supportsDirectAuth,
          directAuthToken: open('directAuthToken'),
          oauthClientId: open('oauthClientId'),
          oauthClientSecret: open('oauthClientSecret'),
        },
        toolName,
        args,
      );
    } catch (error) {
      if (error instanceof McpFetchError) throw new McpToolCallFailed(error.reason, error.message);
      throw new McpToolCallFailed(
        'protocol_error',
        error instanceof Error ? error.message : 'the call failed',
      );
    }
  }
}
