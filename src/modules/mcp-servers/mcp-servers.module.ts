import { Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../core/config/config';
import { SecretBox } from '../../core/crypto/secret-box';
import { Feature } from '../../core/features/feature';
import {
  CallMcpServerToolHandler,
  CreateMcpServerHandler,
  DeleteMcpServerHandler,
  MCP_SECRET_BOX,
  RefreshMcpServerToolsHandler,
  SetMcpServerEnabledHandler,
  UpdateMcpServerHandler,
} from './commands/mcp-server.commands';
import { McpToolFetcher } from './connect/mcp-tool-fetcher';
import { McpServersController } from './http/mcp-servers.controller';
import { McpServersTables1764000008200 } from './mcp-servers.migration';
import { McpServerEntity } from './projections/mcp-server.entity';
import { McpServersProjection } from './projections/mcp-servers.projection';
import {
  GetMcpServerHandler,
  ListEnabledMcpServerToolsHandler,
  ListMcpServersHandler,
} from './queries/mcp-server.queries';

/**
 * External MCP servers a workspace connects: their address and sealed credentials, and the
 * tools each refresh lists (SDK client, Streamable HTTP or HTTP+SSE, OAuth client
 * credentials), behind the core outbound-address guard.
 */
@Feature({
  name: 'mcp-servers',
  entities: [McpServerEntity],
  migrations: [McpServersTables1764000008200],
  versionedResources: ['mcp_servers'],
})
@Module({
  controllers: [McpServersController],
  providers: [
    {
      provide: MCP_SECRET_BOX,
      inject: [APP_CONFIG],
      useFactory: (c: AppConfig) => new SecretBox(c.secretsEncryptionKey),
    },
    McpToolFetcher,
    McpServersProjection,
    CreateMcpServerHandler,
    CallMcpServerToolHandler,
    UpdateMcpServerHandler,
    RefreshMcpServerToolsHandler,
    SetMcpServerEnabledHandler,
    DeleteMcpServerHandler,
    ListMcpServersHandler,
    GetMcpServerHandler,
    ListEnabledMcpServerToolsHandler,
  ],
})
export class McpServersModule {}

declare module '../../core/features/feature' {
  interface VersionedTables {
    mcp_servers: true;
  }
}
