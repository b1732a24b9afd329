import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { PageQueryDto, PaginatedResponse } from '../../../core/http/pagination';
import { OUTBOUND_URL_MAX } from '../../../core/net/outbound-address';
import {
  MCP_SECRET_MAX,
  MCP_SERVER_DESCRIPTION_MAX,
  MCP_SERVER_NAME_MAX,
  MCP_SERVER_SLUG_MAX,
} from '../domain/mcp-server';
import type { McpFailureReason, McpServerTool } from '../domain/mcp-server.events';
import type { McpServerEntity } from '../projections/mcp-server.entity';

const SLUG_DOC = {
  example: 'crm',
  maxLength: MCP_SERVER_SLUG_MAX,
  pattern: '^[a-z0-9][a-z0-9_-]*$',
  description: 'unique per workspace (409 when taken)',
};
const URL_DOC = {
  example: 'https://mcp.example.com/mcp',
  maxLength: OUTBOUND_URL_MAX,
  description: 'https only; must not resolve to a loopback, private, link-local or metadata address',
};
const SECRET_DOC = (what: string) => ({
  type: String,
  nullable: true,
  maxLength: MCP_SECRET_MAX,
  description: `${what}; stored encrypted, never returned (null or "" clears it)`,
});

/**
 * The optional fields of both bodies. Create and update declare their own name, slug,
 * mcpUrl and supportsDirectAuth: an inherited @IsOptional would make them optional on create too.
 */
class McpServerOptionalFieldsDto {
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: MCP_SERVER_DESCRIPTION_MAX })
  @IsOptional()
  @IsString()
  @MaxLength(MCP_SERVER_DESCRIPTION_MAX)
  description?: string | null;

  @ApiPropertyOptional(SECRET_DOC('bearer sent when supportsDirectAuth is true'))
  @IsOptional()
  @IsString()
  @MaxLength(MCP_SECRET_MAX)
  directAuthToken?: string | null;

  @ApiPropertyOptional(SECRET_DOC('OAuth client id, required when supportsDirectAuth is false'))
  @IsOptional()
  @IsString()
  @MaxLength(MCP_SECRET_MAX)
  oauthClientId?: string | null;

  @ApiPropertyOptional(SECRET_DOC('OAuth client secret, required when supportsDirectAuth is false'))
  @IsOptional()
  @IsString()
  @MaxLength(MCP_SECRET_MAX)
  oauthClientSecret?: string | null;
}

export class UpdateMcpServerDto extends McpServerOptionalFieldsDto {
  @ApiPropertyOptional({ maxLength: MCP_SERVER_NAME_MAX, example: 'CRM' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(MCP_SERVER_NAME_MAX)
  name?: string;

  @ApiPropertyOptional(SLUG_DOC)
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(MCP_SERVER_SLUG_MAX)
  slug?: string;

  @ApiPropertyOptional(URL_DOC)
  @IsOptional()
  @IsString()
  @MaxLength(OUTBOUND_URL_MAX)
  mcpUrl?: string;

  @ApiPropertyOptional({
    description: 'true: no auth or a bearer (directAuthToken); false: OAuth client credentials',
  })
  @IsOptional()
  @IsBoolean()
  supportsDirectAuth?: boolean;
}

export class CreateMcpServerDto extends McpServerOptionalFieldsDto {
  @ApiProperty({ maxLength: MCP_SERVER_NAME_MAX, example: 'CRM' })
  @IsString()
  @MinLength(1)
  @MaxLength(MCP_SERVER_NAME_MAX)
  name: string;

  @ApiProperty(SLUG_DOC)
  @IsString()
  @MinLength(1)
  @MaxLength(MCP_SERVER_SLUG_MAX)
  slug: string;

  @ApiProperty(URL_DOC)
  @IsString()
  @MaxLength(OUTBOUND_URL_MAX)
  mcpUrl: string;

  @ApiProperty({
    description: 'true: no auth or a bearer (directAuthToken); false: OAuth client credentials',
  })
  @IsBoolean()
  supportsDirectAuth: boolean;
}

export class ListMcpServersQueryDto extends PageQueryDto {}

export class McpServerToolResponse {
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) title: string | null;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true }) inputSchema: Record<string, unknown>;
}

export class McpRefreshErrorResponse {
  @ApiProperty({
    enum: ['unreachable', 'tls', 'unauthorized', 'oauth', 'protocol_error', 'timeout', 'forbidden_address'],
  })
  reason: McpFailureReason;
  @ApiProperty() detail: string;
  @ApiProperty() at: string;
}

export class McpServerResponse {
  @ApiProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty() slug: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty() mcpUrl: string;
  @ApiProperty() supportsDirectAuth: boolean;
  @ApiProperty({ description: 'whether a bearer is set (never returned)' }) hasDirectAuthToken: boolean;
  @ApiProperty({ description: 'whether an OAuth client id is set (never returned)' })
  hasOauthClientId: boolean;
  @ApiProperty({ description: 'whether an OAuth client secret is set (never returned)' })
  hasOauthClientSecret: boolean;
  @ApiProperty({ description: 'whether its tools are offered to agents' }) enabled: boolean;
  @ApiProperty({ description: 'tools the last successful refresh found' }) toolCount: number;
  @ApiProperty({ type: String, nullable: true }) toolsFetchedAt: string | null;
  @ApiProperty({ type: String, nullable: true, enum: ['streamable-http', 'sse'] }) transport: string | null;
  @ApiProperty({
    type: McpRefreshErrorResponse,
    nullable: true,
    description: 'the last refresh failure, cleared by a successful refresh',
  })
  lastRefreshError: McpRefreshErrorResponse | null;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;

  static of(row: McpServerEntity): McpServerResponse {
    return {
      id: row.id,
      name: row.name,
      slug: row.slug,
      description: row.description,
      mcpUrl: row.mcpUrl,
      supportsDirectAuth: row.supportsDirectAuth,
      hasDirectAuthToken: row.directAuthToken !== null,
      hasOauthClientId: row.oauthClientId !== null,
      hasOauthClientSecret: row.oauthClientSecret !== null,
      enabled: row.enabled,
      toolCount: row.tools.length,
      toolsFetchedAt: row.toolsFetchedAt?.toISOString() ?? null,
      transport: row.transport,
      lastRefreshError:
        row.lastErrorReason && row.lastErrorAt
          ? {
              reason: row.lastErrorReason,
              detail: row.lastErrorDetail ?? '',
              at: row.lastErrorAt.toISOString(),
            }
          : null,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    };
  }
}

export class McpServerDetailsResponse extends McpServerResponse {
  @ApiProperty({ type: [McpServerToolResponse] }) tools: McpServerToolResponse[];

  static details(row: McpServerEntity): McpServerDetailsResponse {
    return { ...McpServerResponse.of(row), tools: row.tools as McpServerTool[] };
  }
}

export class McpServerListResponse extends PaginatedResponse(McpServerResponse) {}
