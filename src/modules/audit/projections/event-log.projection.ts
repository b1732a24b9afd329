import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { copyRows } from '../../../core/database/copy-rows';
import { writeWithCommit } from '../../../core/projections/commit-statements';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';

const COLUMNS = [
  'event_id',
  'workspace_id',
  'stream_name',
  'revision',
  'type',
  'data',
  'metadata',
  'position_commit',
  'position_prepare',
  'occurred_at',
];
/**
 * Below this many events a batch is one INSERT: COPY takes two round trips (the copy-in
 * handshake, then the data) and a savepoint, where a request's batch of a few events
 * (6 on average under the records bench's single creates) is cheaper as one statement.
 */
const COPY_FROM = 50;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Copies every event with its metadata into the auditors' read model. */
@Injectable()
@Projection({ name: 'event-log', eventTypes: 'all', tables: ['event_log'] })
export class EventLogProjection implements ProjectionHandler {
  handle(e: StoredEvent, em: EntityManager): Promise<void> {
    return this.handleBatch([e], em);
  }

  /**
   * One COPY per batch (core's copyRows): bulk writes (imports) project thousands of
   * events at once, and the audit log's copy of each was a third of a batch's INSERT from
   * one JSON document. An event already logged (a replay) falls back to the INSERT below,
   * which skips it; a small batch is that INSERT.
   */
  async handleBatch(events: readonly StoredEvent[], em: EntityManager): Promise<void> {
    const rows = events.map((e) => [
      e.id,
      typeof e.metadata?.workspaceId === 'string' && UUID.test(e.metadata.workspaceId)
        ? e.metadata.workspaceId
        : null,
      e.streamName,
      e.revision.toString(),
      e.type,
      // JSON null is a value of the column (NOT NULL), not SQL NULL.
      JSON.stringify(e.data ?? null),
      JSON.stringify(e.metadata ?? null),
      e.position.commit.toString(),
      e.position.prepare.toString(),
      e.metadata?.occurredAt ?? new Date().toISOString(),
    ]);
    // A small batch's INSERT goes with the batch's COMMIT (nothing here needs its result).
    if (rows.length < COPY_FROM) return this.insert(rows, em, true);
    await copyRows(em, 'event_log', COLUMNS, rows, () => this.insert(rows, em, false));
  }

  private async insert(rows: readonly unknown[][], em: EntityManager, withCommit: boolean): Promise<void> {
    const write = withCommit
      ? writeWithCommit
      : (m: EntityManager, sql: string, p: unknown[]) => m.query(sql, p);
    await write(
      em,
      `INSERT INTO event_log (${COLUMNS.join(', ')})
       SELECT r.event_id, r.workspace_id, r.stream_name, r.revision, r.type, r.data::jsonb, r.metadata::jsonb,
              r.position_commit, r.position_prepare, r.occurred_at
       FROM jsonb_to_recordset($1::jsonb) AS r(event_id uuid, workspace_id uuid, stream_name text, revision bigint, type text,
            data text, metadata text, position_commit numeric, position_prepare numeric, occurred_at timestamptz)
       ON CONFLICT (event_id) DO NOTHING`,
      [JSON.stringify(rows.map((row) => Object.fromEntries(COLUMNS.map((c, i) => [c, row[i]]))))],
    );
  }
}
