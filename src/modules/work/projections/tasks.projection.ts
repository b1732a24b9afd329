import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';
import type { TaskEvent, TaskSnapshot } from '../domain/work.events';
import { TaskEntity } from './work.entities';

const columnsOf = (t: TaskSnapshot) => ({
  workspaceId: t.workspaceId,
  name: t.name,
  title: t.title,
  slug: t.slug,
  description: t.description,
  workflowId: t.workflowId,
  isAdmin: t.isAdmin,
  status: t.status,
  priority: t.priority,
  dueAt: t.dueAt === null ? null : new Date(t.dueAt),
  assignees: t.assignees,
  createdAt: new Date(t.createdAt),
  updatedAt: new Date(t.updatedAt),
});

/** The tasks read model: live tasks as their last event shows them; a deleted one leaves it. */
@Injectable()
@Projection({
  name: 'tasks',
  eventTypes: ['TaskCreated', 'TaskUpdated', 'TaskDeleted'],
  tables: ['tasks'],
})
export class TasksProjection implements ProjectionHandler {
  async handle(stored: StoredEvent, em: EntityManager): Promise<void> {
    const event = { type: stored.type, data: stored.data } as TaskEvent;
    const repo = em.getRepository(TaskEntity);
    const revision = stored.revision.toString();
    switch (event.type) {
      case 'TaskCreated':
        await repo.upsert(
          { id: event.data.taskId, ...columnsOf(event.data.task), version: 1, streamRevision: revision },
          ['id'],
        );
        return;
      case 'TaskUpdated':
        await repo.update(
          { id: event.data.taskId },
          { ...columnsOf(event.data.task), version: () => 'version + 1', streamRevision: revision },
        );
        return;
      case 'TaskDeleted':
        await repo.delete({ id: event.data.taskId });
        return;
    }
  }
}
