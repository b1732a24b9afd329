import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';
import { CUSTOM_TOOLKIT_EVENT_TYPES, CustomToolkitEvent } from '../domain/toolkit.events';
import { CustomToolEntity, CustomToolkitEntity } from './toolkit.entities';

/**
 * The custom_toolkits and custom_tools read models: live toolkits and tools as their
 * events show them; a deleted one leaves. Each row counts its own changes (`version`, the
 * ETag), so a change of one tool leaves its toolkit's and its siblings' versions alone.
 */
@Injectable()
@Projection({
  name: 'custom-toolkits',
  eventTypes: [...CUSTOM_TOOLKIT_EVENT_TYPES],
  tables: ['custom_toolkits', 'custom_tools'],
})
export class CustomToolkitsProjection implements ProjectionHandler {
  async handle(stored: StoredEvent, em: EntityManager): Promise<void> {
    const event = { type: stored.type, data: stored.data } as CustomToolkitEvent;
    const toolkits = em.getRepository(CustomToolkitEntity);
    const tools = em.getRepository(CustomToolEntity);
    const streamRevision = stored.revision.toString();
    const bump = { version: () => 'version + 1', streamRevision };
    switch (event.type) {
      case 'CustomToolkitCreated': {
        const d = event.data;
        await toolkits.upsert(
          {
            id: d.toolkitId,
            workspaceId: d.workspaceId,
            name: d.name,
            slug: d.slug,
            description: d.description,
            enabled: d.enabled,
            createdAt: new Date(d.createdAt),
            updatedAt: new Date(d.createdAt),
            version: 1,
            streamRevision,
          },
          ['id'],
        );
        return;
      }
      case 'CustomToolkitUpdated':
        await toolkits.update(
          { id: event.data.toolkitId },
          { ...event.data.changes, updatedAt: new Date(event.data.updatedAt), ...bump },
        );
        return;
      case 'CustomToolkitEnabled':
        await toolkits.update(
          { id: event.data.toolkitId },
          { enabled: true, updatedAt: new Date(event.data.enabledAt), ...bump },
        );
        return;
      case 'CustomToolkitDisabled':
        await toolkits.update(
          { id: event.data.toolkitId },
          { enabled: false, updatedAt: new Date(event.data.disabledAt), ...bump },
        );
        return;
      case 'CustomToolkitDeleted':
        await tools.delete({ toolkitId: event.data.toolkitId });
        await toolkits.delete({ id: event.data.toolkitId });
        return;
      case 'CustomToolCreated': {
        const d = event.data;
        await tools.upsert(
          {
            id: d.toolId,
            workspaceId: d.workspaceId,
            toolkitId: d.toolkitId,
            ...d.tool,
            createdAt: new Date(d.createdAt),
            updatedAt: new Date(d.createdAt),
            version: 1,
            streamRevision,
          },
          ['id'],
        );
        return;
      }
      case 'CustomToolUpdated':
        await tools.update(
          { id: event.data.toolId },
          { ...event.data.changes, updatedAt: new Date(event.data.updatedAt), ...bump },
        );
        return;
      case 'CustomToolDeleted':
        await tools.delete({ id: event.data.toolId });
        return;
    }
  }
}
