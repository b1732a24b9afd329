import { ExpectedRevision, Position, StoredEvent, EventMetadata } from '../event-store.port';

/** The channel appends notify; its payload is empty, a wake-up only says "look again". */
export const APPENDED_CHANNEL = 'event_store_appended';

export type ClaimMode = 'any' | 'no_stream' | 'stream_exists' | 'exact';

export function claimMode(expected: ExpectedRevision): ClaimMode {
  return typeof expected === 'bigint' ? 'exact' : expected;
}

/**
 * The stream's last revision as the expectation needs it, or no row when the expectation
 * fails. A concurrent append can still slip in between this read and the insert; then
 * the unique (stream_name, stream_revision) key rejects the later one (23505), which the
 * adapter turns into WrongExpectedRevisionError ('any' and 'stream_exists' retry instead).
 * Exact mode checks that the expected revision exists, so an append can never leave a gap.
 */
const HEAD: Record<ClaimMode, string> = {
  exact: `SELECT $2::bigint AS last WHERE EXISTS (SELECT 1 FROM events WHERE stream_name = $1::text AND stream_revision = $2::bigint)`,
  no_stream: `SELECT -1::bigint AS last WHERE NOT EXISTS (SELECT 1 FROM events WHERE stream_name = $1::text)`,
  any: `SELECT coalesce(max(stream_revision), -1) AS last FROM events WHERE stream_name = $1::text`,
  stream_exists: `SELECT max(stream_revision) AS last FROM events WHERE stream_name = $1::text HAVING max(stream_revision) IS NOT NULL`,
};

export type AppendShape = 'single' | 'batch';

/**
 * One statement, so an autocommitted append costs one round trip and one row write per
 * event. Parameters: $1 stream, $2 the expected revision (exact mode only), then either
 * id, type, data, metadata of a single event, or one JSON array of {id, type, data,
 * metadata} for a batch (inserted in order, so global_position follows revision order).
 * No row back means the expectation failed.
 *
 * With `notify`, pg_notify runs inside the statement's transaction: the wake-up is sent
 * when it commits (the caller's commit with appendInTransaction). Autocommitted appends
 * carry it only as often as ThrottledNotifier lets them: notifying transactions serialise
 * on a cluster-wide lock through their commit, which cost a third of the append
 * throughput at 8 writers when every append notified.
 */
export function appendSql(mode: ClaimMode, shape: AppendShape, notify: boolean): string {
  const p = mode === 'exact' ? 3 : 2;
  // The single-event form avoids the join and sort of the batch form: it is the common
  // command-path append, and the flatter plan is measurably cheaper per statement.
  const select =
    shape === 'single'
      ? `SELECT $${p}::uuid, $1::text, h.last + 1, $${p + 1}::text, $${p + 2}::jsonb, $${p + 3}::jsonb
         FROM (${HEAD[mode]}) h`
      : `SELECT (e.doc->>'id')::uuid, $1::text, h.last + e.ord, e.doc->>'type', e.doc->'data', e.doc->'metadata'
         FROM (${HEAD[mode]}) h CROSS JOIN jsonb_array_elements($${p}::jsonb) WITH ORDINALITY AS e(doc, ord)
         ORDER BY e.ord`;
  const insert = `
    INSERT INTO events (event_id, stream_name, stream_revision, type, data, metadata)
    ${select}
    RETURNING global_position::text AS global_position, transaction_id::text AS transaction_id,
              stream_revision::text AS stream_revision`;
  if (!notify) return insert;
  return `WITH inserted AS (${insert})
    SELECT inserted.*, (SELECT pg_notify('${APPENDED_CHANNEL}', '')) IS NULL AS notified FROM inserted`;
}

/**
 * Group commit: appends to distinct streams in one statement and one transaction (one
 * round trip, one commit and one WAL flush for all of them). $1 is a JSON array of
 * {s: stream, m: mode, x: expected revision (exact mode) or null, ev: [{id, type, data,
 * metadata}]}, no stream twice. Each append's expectation is checked on its own against
 * the stream's last revision: those that hold are inserted (in the order given, events in
 * order, so global_position follows it), those that fail insert nothing and come back as
 * one row with `last`, the stream's last revision then (null: no stream). An exact
 * expectation must be the stream's last revision, as in the single form (where a stream
 * moved past it fails on the unique key). A concurrent append of another transaction to
 * one of the streams fails the whole statement on the unique (stream_name,
 * stream_revision) key (23505): nothing is written, and the caller appends one by one.
 * Rows: stream_name, then global_position, transaction_id, stream_revision of an inserted
 * event, or those null and `last` for an append whose expectation failed.
 */
export function appendGroupSql(notify: boolean): string {
  return `
  WITH req AS MATERIALIZED (
    SELECT r.ord, r.doc->>'s' AS stream, r.doc->>'m' AS mode, (r.doc->>'x')::bigint AS expected, r.doc->'ev' AS ev,
           (SELECT max(stream_revision) FROM events WHERE stream_name = r.doc->>'s') AS last
    FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS r(doc, ord)
  ),
  ok AS MATERIALIZED (
    SELECT * FROM req
    WHERE CASE mode WHEN 'any' THEN true WHEN 'no_stream' THEN last IS NULL
                    WHEN 'stream_exists' THEN last IS NOT NULL ELSE last = expected END
  ),
  inserted AS (
    INSERT INTO events (event_id, stream_name, stream_revision, type, data, metadata)
    SELECT (e.doc->>'id')::uuid, ok.stream, coalesce(ok.last, -1) + e.ord, e.doc->>'type', e.doc->'data', e.doc->'metadata'
    FROM ok CROSS JOIN LATERAL jsonb_array_elements(ok.ev) WITH ORDINALITY AS e(doc, ord)
    ORDER BY ok.ord, e.ord
    RETURNING stream_name, global_position, transaction_id, stream_revision
  )
  SELECT i.stream_name, i.global_position::text AS global_position, i.transaction_id::text AS transaction_id,
         i.stream_revision::text AS stream_revision, NULL::text AS last${
           notify ? `, (SELECT pg_notify('${APPENDED_CHANNEL}', '')) IS NULL AS notified` : ''
         }
  FROM inserted i
  UNION ALL
  SELECT req.stream, NULL, NULL, NULL, req.last::text${notify ? ', NULL' : ''}
  FROM req WHERE NOT EXISTS (SELECT 1 FROM ok WHERE ok.ord = req.ord)`;
}

/**
 * Several new streams in one statement: $1 is a JSON array of {id, stream, revision, type,
 * data, metadata} with revisions from 0 per stream. Every existing stream holds revision 0,
 * so the unique (stream_name, stream_revision) key fails the whole statement (23505) if any
 * of them exists: 'no_stream' for all, atomically, in one round trip.
 */
const CREATE_STREAMS_INSERT = `
  INSERT INTO events (event_id, stream_name, stream_revision, type, data, metadata)
  SELECT (e.doc->>'id')::uuid, e.doc->>'stream', (e.doc->>'revision')::bigint, e.doc->>'type', e.doc->'data', e.doc->'metadata'
  FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS e(doc, ord)
  ORDER BY e.ord
  RETURNING global_position::text AS global_position, transaction_id::text AS transaction_id,
            stream_name, stream_revision::text AS stream_revision`;

/**
 * CREATE_STREAMS_INSERT, with `notify` the wake-up in the same statement (as appendSql's),
 * and `also` one more data-modifying CTE (`name AS (...)`) that lands with it or neither does.
 */
export function createStreamsSql(notify: boolean, also?: string): string {
  if (!notify) return also ? `WITH ${also} ${CREATE_STREAMS_INSERT}` : CREATE_STREAMS_INSERT;
  return `WITH ${also ? `${also}, ` : ''}inserted AS (${CREATE_STREAMS_INSERT})
    SELECT inserted.*, (SELECT pg_notify('${APPENDED_CHANNEL}', '')) IS NULL AS notified FROM inserted`;
}

export const NOTIFY_SQL = `SELECT pg_notify('${APPENDED_CHANNEL}', '')`;

export const CURRENT_REVISION_SQL = `SELECT max(stream_revision)::text AS last_revision FROM events WHERE stream_name = $1`;

/**
 * Int8 and xid8 come back as text, parsed with BigInt. The aliases shadow the columns in
 * ORDER BY, so every ORDER BY names its column through the table alias \`e\`.
 */
const COLUMNS = `global_position::text AS global_position, transaction_id::text AS transaction_id,
  event_id::text AS event_id, stream_name, stream_revision::text AS stream_revision, type, data, metadata`;

/**
 * Only rows of transactions older than every running one: they are final, and any row
 * still to come belongs to a transaction at or above that horizon, so it sorts after the
 * checkpoint pair. The horizon is taken once per statement (InitPlan).
 */
const HORIZON = `(SELECT pg_snapshot_xmin(pg_current_snapshot()))`;

/** $3 event types (text[] or null), $4 stream prefixes (text[] or null). */
const FILTER = `
  AND ($3::text[] IS NULL OR type = ANY($3::text[]))
  AND ($4::text[] IS NULL OR EXISTS (SELECT 1 FROM unnest($4::text[]) AS p(prefix) WHERE starts_with(stream_name, p.prefix)))`;

/** $1/$2 the exclusive cursor pair, $5 the limit (null: no limit). */
export const READ_ALL_FORWARDS_SQL = `
  SELECT ${COLUMNS} FROM events e
  WHERE transaction_id < ${HORIZON}
    AND (transaction_id, global_position) > ($1::xid8, $2::bigint) ${FILTER}
  ORDER BY e.transaction_id, e.global_position
  LIMIT $5`;

export const READ_ALL_BACKWARDS_SQL = `
  SELECT ${COLUMNS} FROM events e
  WHERE transaction_id < ${HORIZON}
    AND (transaction_id, global_position) < ($1::xid8, $2::bigint) ${FILTER}
  ORDER BY e.transaction_id DESC, e.global_position DESC
  LIMIT $5`;

/**
 * A subscription's read: look at the next $5 readable events whatever the filter, return
 * those that match, and say how far it looked (scanned_*), so the cursor moves past
 * events that do not match. A filtered read that only stopped at matches would rescan
 * the whole unmatched tail on every wake-up. Every row carries the scan's end; a scan
 * without matches returns that one row with null event columns; nothing to scan, no row.
 * Rows leave the lateral join raw, so ORDER BY sorts numbers, not their text.
 */
export const SCAN_ALL_SQL = `
  WITH scanned AS MATERIALIZED (
    SELECT e.* FROM events e
    WHERE e.transaction_id < ${HORIZON}
      AND (e.transaction_id, e.global_position) > ($1::xid8, $2::bigint)
    ORDER BY e.transaction_id, e.global_position
    LIMIT $5
  ),
  scan_end AS (
    SELECT s.transaction_id, s.global_position, (SELECT count(*) FROM scanned) AS n
    FROM scanned s ORDER BY s.transaction_id DESC, s.global_position DESC LIMIT 1
  )
  SELECT scan_end.transaction_id::text AS scanned_transaction_id, scan_end.global_position::text AS scanned_global_position,
         scan_end.n::int AS scanned_count,
         m.global_position::text AS global_position, m.transaction_id::text AS transaction_id, m.event_id::text AS event_id,
         m.stream_name, m.stream_revision::text AS stream_revision, m.type, m.data, m.metadata
  FROM scan_end LEFT JOIN LATERAL (SELECT * FROM scanned WHERE true ${FILTER}) m ON true
  ORDER BY m.transaction_id, m.global_position`;

export interface ScanRow extends Omit<EventRow, 'global_position'> {
  scanned_transaction_id: string;
  scanned_global_position: string;
  scanned_count: number;
  /** Null on the single row of a scan without matches. */
  global_position: string | null;
}

/**
 * Whether committed events exist that the horizon still holds back: the newest visible
 * transaction id, found at the end of the index, is at or above it. (An EXISTS over
 * `transaction_id >= horizon` gets planned as a sequential scan, the horizon being unknown
 * at plan time, and then runs through the whole table whenever nothing is held back.)
 */
export const HELD_BACK_SQL = `
  SELECT coalesce((SELECT transaction_id FROM events ORDER BY transaction_id DESC LIMIT 1) >= ${HORIZON}, false) AS held_back`;

export const HEAD_POSITION_SQL = `
  SELECT global_position::text AS global_position, transaction_id::text AS transaction_id
  FROM events e WHERE transaction_id < ${HORIZON}
  ORDER BY e.transaction_id DESC, e.global_position DESC LIMIT 1`;

export const READ_STREAM_FORWARDS_SQL = `
  SELECT ${COLUMNS} FROM events e
  WHERE stream_name = $1 AND stream_revision >= $2::bigint
  ORDER BY e.stream_revision LIMIT $3`;

/** Several whole streams in one statement, each in revision order (readStreams). */
export const READ_STREAMS_SQL = `
  SELECT ${COLUMNS} FROM events e
  WHERE stream_name = ANY($1::text[])
  ORDER BY e.stream_name, e.stream_revision`;

export const READ_STREAM_BACKWARDS_SQL = `
  SELECT ${COLUMNS} FROM events e
  WHERE stream_name = $1 AND stream_revision <= $2::bigint
  ORDER BY e.stream_revision DESC LIMIT $3`;

/** Cursor bounds for "from the start" and "from the end". */
export const BEFORE_FIRST: Position = { commit: 0n, prepare: 0n };
export const AFTER_LAST: Position = { commit: 2n ** 64n - 1n, prepare: 2n ** 63n - 1n };

export interface EventRow {
  global_position: string;
  transaction_id: string;
  event_id: string;
  stream_name: string;
  stream_revision: string;
  type: string;
  data: unknown;
  metadata: EventMetadata;
}

export function toStoredEvent(row: EventRow): StoredEvent {
  return {
    id: row.event_id,
    type: row.type,
    data: row.data,
    metadata: row.metadata,
    streamName: row.stream_name,
    revision: BigInt(row.stream_revision),
    position: { commit: BigInt(row.transaction_id), prepare: BigInt(row.global_position) },
  };
}
