import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { parseDateTime } from '../../../core/http/pagination';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';
import type { AssignmentEvent } from '../domain/work.events';
import { AssignmentEntity } from './work.entities';

/**
 * An event's time as a Date. Events appended before the decider normalised completedAt
 * may hold it as the client wrote it (`+05` offsets included, which `new Date` cannot
 * read): parsed as core parses input, so such an event cannot stop the projection.
 */
function instantOf(value: string): Date {
  const parsed = parseDateTime(value);
  return parsed ? new Date(Number(parsed.epochNanos / 1_000_000n)) : new Date(value);
}

/** The assignments read model: every event carries the whole assignment, written as it stands. */
@Injectable()
@Projection({
  name: 'assignments',
  eventTypes: ['AssignmentStarted', 'AssignmentCompleted', 'AssignmentFailed', 'AssignmentCancelled'],
  tables: ['assignments'],
})
export class AssignmentsProjection implements ProjectionHandler {
  async handle(stored: StoredEvent, em: EntityManager): Promise<void> {
    const event = { type: stored.type, data: stored.data } as AssignmentEvent;
    const repo = em.getRepository(AssignmentEntity);
    const a = event.data.assignment;
    switch (event.type) {
      case 'AssignmentStarted':
        await repo.upsert(
          {
            id: a.id,
            workspaceId: a.workspaceId,
            workflowId: a.workflowId,
            workflowUuid: a.workflowUuid,
            workflowName: a.workflowName,
            memberId: a.memberId,
            status: a.status,
            startedAt: new Date(a.startedAt),
            completedAt: null,
            updatedAt: new Date(a.startedAt),
            version: 1,
            streamRevision: stored.revision.toString(),
          },
          ['id'],
        );
        return;
      case 'AssignmentCompleted':
      case 'AssignmentFailed':
      case 'AssignmentCancelled':
        await repo.update(
          { id: a.id },
          {
            status: a.status,
            completedAt: a.completedAt === null ? null : instantOf(a.completedAt),
            updatedAt: new Date(stored.metadata.occurredAt),
            version: () => 'version + 1',
            streamRevision: stored.revision.toString(),
          },
        );
        return;
    }
  }
}
