import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Copies every event with its metadata into the auditors' read model. */
@Injectable()
@Projection({ name: 'event-log', eventTypes: 'all', tables: ['event_log'] })
export class EventLogProjection implements ProjectionHandler {
  handle(e: StoredEvent, em: EntityManager): Promise<void> {
    return this.handleBatch([e], em);
  }

  /** One multi-row insert per batch: bulk writes (imports) project thousands of events at once. */
  async handleBatch(events: readonly StoredEvent[], em: EntityManager): Promise<void> {
    const rows = events.map((e) => ({
      event_id: e.id,
      workspace_id:
        typeof e.metadata?.workspaceId === 'string' && UUID.test(e.metadata.workspaceId)
          ? e.metadata.workspaceId
          : null,
      stream_name: e.streamName,
      revision: e.revision.toString(),
      type: e.type,
      data: e.data,
      metadata: e.metadata,
      position_commit: e.position.commit.toString(),
      position_prepare: e.position.prepare.toString(),
      occurred_at: e.metadata?.occurredAt ?? new Date().toISOString(),
    }));
    await em.query(
      `INSERT INTO event_log (event_id, workspace_id, stream_name, revision, type, data, metadata, position_commit, position_prepare, occurred_at)
       SELECT r.event_id, r.workspace_id, r.stream_name, r.revision, r.type, r.data, r.metadata, r.position_commit, r.position_prepare, r.occurred_at
       FROM jsonb_to_recordset($1::jsonb) AS r(event_id uuid, workspace_id uuid, stream_name text, revision bigint, type text,
            data jsonb, metadata jsonb, position_commit numeric, position_prepare numeric, occurred_at timestamptz)
       ON CONFLICT (event_id) DO NOTHING`,
      [JSON.stringify(rows)],
    );
  }
}
