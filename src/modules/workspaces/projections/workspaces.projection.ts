import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';
import type { MemberRolesMerged } from '../../roles';
import type { WorkspaceEvent } from '../domain/workspace';
import { WorkspaceEntity } from './workspace.entity';

@Injectable()
@Projection({
  name: 'workspaces',
  eventTypes: ['WorkspaceCreated', 'WorkspaceUpdated', 'MemberRolesMerged'],
  tables: ['workspaces'],
})
export class WorkspacesProjection implements ProjectionHandler {
  async handle(stored: StoredEvent, em: EntityManager): Promise<void> {
    const event = { type: stored.type, data: stored.data } as WorkspaceEvent | MemberRolesMerged;
    const repo = em.getRepository(WorkspaceEntity);
    switch (event.type) {
      case 'WorkspaceCreated':
        await repo.upsert(
          {
            id: event.data.workspaceId,
            name: event.data.name,
            settings: event.data.settings,
            createdAt: new Date(event.data.createdAt),
            updatedAt: new Date(event.data.createdAt),
            version: 1,
            streamRevision: stored.revision.toString(),
          },
          ['id'],
        );
        return;
      case 'WorkspaceUpdated': {
        const row = await repo.findOneBy({ id: event.data.workspaceId });
        if (!row) return;
        if (event.data.name !== undefined) row.name = event.data.name;
        if (event.data.settings) row.settings = { ...row.settings, ...event.data.settings };
        row.updatedAt = new Date(event.data.updatedAt);
        row.version++;
        row.streamRevision = stored.revision.toString();
        await repo.save(row);
        return;
      }
      case 'MemberRolesMerged': {
        // A merge deletes the default role and moves its holders: the default follows them.
        if (!event.data.workspaceDefaultMoved) return;
        const row = await repo.findOneBy({ id: event.data.workspaceId });
        if (!row) return;
        row.settings = { ...row.settings, defaultMemberRoleId: event.data.targetRoleId };
        row.updatedAt = new Date(event.data.mergedAt);
        row.version++;
        await repo.save(row);
        return;
      }
    }
  }
}
