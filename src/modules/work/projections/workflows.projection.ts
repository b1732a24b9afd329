import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';
import type { WorkflowEvent } from '../domain/work.events';
import { WorkflowEntity } from './work.entities';

/** The workflows read model: live workflows; a deleted one leaves it. */
@Injectable()
@Projection({
  name: 'workflows',
  eventTypes: ['WorkflowCreated', 'WorkflowUpdated', 'WorkflowDeleted'],
  tables: ['workflows'],
})
export class WorkflowsProjection implements ProjectionHandler {
  async handle(stored: StoredEvent, em: EntityManager): Promise<void> {
    const event = { type: stored.type, data: stored.data } as WorkflowEvent;
    const repo = em.getRepository(WorkflowEntity);
    const revision = stored.revision.toString();
    switch (event.type) {
      case 'WorkflowCreated': {
        const d = event.data;
        await repo.upsert(
          {
            id: d.workflowId,
            uuid: d.uuid,
            workspaceId: d.workspaceId,
            name: d.name,
            agentId: d.agentId,
            defaultPhoneNumberId: d.defaultPhoneNumberId,
            roleGate: d.roleGate,
            createdAt: new Date(d.createdAt),
            updatedAt: new Date(d.createdAt),
            version: 1,
            streamRevision: revision,
          },
          ['id'],
        );
        return;
      }
      case 'WorkflowUpdated': {
        const { changes, workflowId, updatedAt } = event.data;
        await repo.update(
          { id: workflowId },
          {
            ...(changes.name !== undefined ? { name: changes.name } : {}),
            ...(changes.agentId !== undefined ? { agentId: changes.agentId } : {}),
            ...(changes.defaultPhoneNumberId !== undefined
              ? { defaultPhoneNumberId: changes.defaultPhoneNumberId }
              : {}),
            // jsonb null through TypeORM's update needs the SQL literal.
            ...(changes.roleGate !== undefined
              ? { roleGate: changes.roleGate === null ? () => 'NULL' : changes.roleGate }
              : {}),
            updatedAt: new Date(updatedAt),
            version: () => 'version + 1',
            streamRevision: revision,
          },
        );
        return;
      }
      case 'WorkflowDeleted':
        await repo.delete({ id: event.data.workflowId });
        return;
    }
  }
}
