import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { McpFailureReason } from '../domain/mcp-server.events';

@Entity({ name: 'mcp_servers' })
export class McpServerEntity {
  @PrimaryColumn('integer') id: number;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  @Column('text') name: string;
  @Column('text') slug: string;
  @Column('text', { nullable: true }) description: string | null;
  @Column('text', { name: 'mcp_url' }) mcpUrl: string;
  @Column('boolean', { name: 'supports_direct_auth' }) supportsDirectAuth: boolean;
  /** Sealed (core/crypto/secret-box.ts); never leave the service, the API shows only whether set. */
  @Column('text', { name: 'direct_auth_token', nullable: true }) directAuthToken: string | null;
  @Column('text', { name: 'oauth_client_id', nullable: true }) oauthClientId: string | null;
  @Column('text', { name: 'oauth_client_secret', nullable: true }) oauthClientSecret: string | null;
  @Column('boolean') enabled: boolean;
  /** The last successful refresh's tools (kept through failed refreshes). */
  /** McpServerTool[]; typed `object[]` for TypeORM's partial-entity types. */
  @Column('jsonb') tools: object[];
  @Column('text', { nullable: true }) transport: string | null;
  @Column('timestamptz', { name: 'tools_fetched_at', nullable: true }) toolsFetchedAt: Date | null;
  /** The last refresh's failure, cleared by a successful one. */
  @Column('text', { name: 'last_error_reason', nullable: true }) lastErrorReason: McpFailureReason | null;
  @Column('text', { name: 'last_error_detail', nullable: true }) lastErrorDetail: string | null;
  @Column('timestamptz', { name: 'last_error_at', nullable: true }) lastErrorAt: Date | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
  @Column('integer') version: number;
  @Column('bigint', { name: 'stream_revision' }) streamRevision: string;
}
