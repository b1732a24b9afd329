import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Copies every event with its metadata into the auditors' read model. */
@Injectable()
@Projection({ name: 'event-log', eventTypes: 'all', tables: ['event_log'] })
export class EventLogProjection implements ProjectionHandler {
  async handle(e: StoredEvent, em: EntityManager): Promise<void> {
    const workspaceId =
      typeof e.metadata?.workspaceId === 'string' && UUID.test(e.metadata.workspaceId)
        ? e.metadata.workspaceId
        : null;
    await em.query(
      `INSERT INTO event_log (event_id, workspace_id, stream_name, revision, type, data, metadata, position_commit, position_prepare, occurred_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (event_id) DO NOTHING`,
      [
        e.id,
        workspaceId,
        e.streamName,
        e.revision.toString(),
        e.type,
        JSON.stringify(e.data),
        JSON.stringify(e.metadata),
        e.position.commit.toString(),
        e.position.prepare.toString(),
        e.metadata?.occurredAt ?? new Date().toISOString(),
      ],
    );
  }
}
