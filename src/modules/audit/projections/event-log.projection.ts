import { Inject, Injectable, Optional } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { EVENT_STORE, EventStore, StoredEvent } from '../../../core/event-store/event-store.port';
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
const UUID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
const UUID = new RegExp(UUID_PATTERN, 'i');

/**
 * The rows of events the PostgreSQL store holds, copied inside the database from its
 * `events` table (the columns the COPY below writes, computed from the stored row as
 * handleBatch computes them from the event): $1 the events' global positions, $2 their
 * ids. Answers how many rows it inserted; an event it did not find (not in this
 * database's store) or already logged (a replay) is not counted.
 */
const COPY_FROM_EVENTS_SQL = `
  WITH inserted AS (
    INSERT INTO event_log (${COLUMNS.join(', ')})
    SELECT e.event_id,
           CASE WHEN jsonb_typeof(e.metadata->'workspaceId') = 'string' AND e.metadata->>'workspaceId' ~* '${UUID_PATTERN}'
                THEN (e.metadata->>'workspaceId')::uuid END,
           e.stream_name, e.stream_revision, e.type, e.data, e.metadata,
           e.transaction_id::text::numeric, e.global_position,
           coalesce((e.metadata->>'occurredAt')::timestamptz, now())
      FROM unnest($1::bigint[], $2::uuid[]) AS b(global_position, event_id)
      JOIN events e ON e.global_position = b.global_position AND e.event_id = b.event_id
    ON CONFLICT (event_id) DO NOTHING
    RETURNING 1
  )
  SELECT count(*)::int AS n FROM inserted`;

/** Copies every event with its metadata into the auditors' read model. */
@Injectable()
@Projection({ name: 'event-log', eventTypes: 'all', tables: ['event_log'] })
export class EventLogProjection implements ProjectionHandler {
  constructor(@Optional() @Inject(EVENT_STORE) private readonly store?: EventStore) {}

  handle(e: StoredEvent, em: EntityManager): Promise<void> {
    return this.handleBatch([e], em);
  }

  /**
   * A batch of 50 events or more (an import's) on the PostgreSQL store is copied from its
   * `events` table in one statement: the service neither writes the events' data and
   * metadata out again nor has the database parse them (an import's 10,000 events are
   * about 10 MB of JSON). Should it insert fewer rows than the batch holds (a replay, an
   * event not in that table), the batch is written again from the events by the INSERT
   * below, which skips what is there. On other stores, one COPY per such batch (core's
   * copyRows), falling back to that INSERT on a replay. A small batch (a request's few
   * events) is that INSERT.
   */
  async handleBatch(events: readonly StoredEvent[], em: EntityManager): Promise<void> {
    if (!events.length) return;
    if (events.length >= COPY_FROM && this.store?.kind === 'postgres') {
      const [{ n }] = (await em.query(COPY_FROM_EVENTS_SQL, [
        events.map((e) => e.position.prepare.toString()),
        events.map((e) => e.id),
      ])) as { n: number }[];
      if (n === events.length) return;
      return this.insert(this.rowsOf(events), em, false);
    }
    const rows = this.rowsOf(events);
    // A small batch's INSERT goes with the batch's COMMIT (nothing here needs its result).
    if (rows.length < COPY_FROM) return this.insert(rows, em, true);
    await copyRows(em, 'event_log', COLUMNS, rows, () => this.insert(rows, em, false));
  }

  private rowsOf(events: readonly StoredEvent[]): unknown[][] {
    return events.map((e) => [
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
