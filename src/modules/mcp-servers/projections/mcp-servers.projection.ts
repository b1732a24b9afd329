import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';
import { MCP_SERVER_EVENT_TYPES, McpServerEvent } from '../domain/mcp-server.events';
import { McpServerEntity } from './mcp-server.entity';

/** The mcp_servers read model: live servers, their sealed credentials, last tools and last failure. */
@Injectable()
@Projection({ name: 'mcp-servers', eventTypes: [...MCP_SERVER_EVENT_TYPES], tables: ['mcp_servers'] })
export class McpServersProjection implements ProjectionHandler {
  async handle(stored: StoredEvent, em: EntityManager): Promise<void> {
    const event = { type: stored.type, data: stored.data } as McpServerEvent;
    const servers = em.getRepository(McpServerEntity);
    const streamRevision = stored.revision.toString();
    const bump = { version: () => 'version + 1', streamRevision };
    switch (event.type) {
      case 'McpServerCreated': {
        const d = event.data;
        await servers.upsert(
          {
            id: d.serverId,
            workspaceId: d.workspaceId,
            name: d.name,
            slug: d.slug,
            description: d.description,
            mcpUrl: d.mcpUrl,
            supportsDirectAuth: d.supportsDirectAuth,
            ...d.secrets,
            enabled: d.enabled,
            tools: [],
            transport: null,
            toolsFetchedAt: null,
            lastErrorReason: null,
            lastErrorDetail: null,
            lastErrorAt: null,
            createdAt: new Date(d.createdAt),
            updatedAt: new Date(d.createdAt),
            version: 1,
            streamRevision,
          },
          ['id'],
        );
        return;
      }
      case 'McpServerUpdated': {
        const { secrets, ...rest } = event.data.changes;
        await servers.update(
          { id: event.data.serverId },
          { ...rest, ...secrets, updatedAt: new Date(event.data.updatedAt), ...bump },
        );
        return;
      }
      case 'McpServerEnabled':
        await servers.update(
          { id: event.data.serverId },
          { enabled: true, updatedAt: new Date(event.data.enabledAt), ...bump },
        );
        return;
      case 'McpServerDisabled':
        await servers.update(
          { id: event.data.serverId },
          { enabled: false, updatedAt: new Date(event.data.disabledAt), ...bump },
        );
        return;
      case 'McpServerToolsFetched':
        await servers.update(
          { id: event.data.serverId },
          {
            tools: event.data.tools,
            transport: event.data.transport,
            toolsFetchedAt: new Date(event.data.fetchedAt),
            lastErrorReason: null,
            lastErrorDetail: null,
            lastErrorAt: null,
            ...bump,
          },
        );
        return;
      case 'McpServerToolsFetchFailed':
        await servers.update(
          { id: event.data.serverId },
          {
            lastErrorReason: event.data.reason,
            lastErrorDetail: event.data.detail,
            lastErrorAt: new Date(event.data.failedAt),
            ...bump,
          },
        );
        return;
      case 'McpServerDeleted':
        await servers.delete({ id: event.data.serverId });
        return;
    }
  }
}
