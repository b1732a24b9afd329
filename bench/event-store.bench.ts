/**
 * PostgreSQL event store against plain PostgreSQL, side by side in one run, on one pool:
 * - append: 1 and 8 concurrent writers, 1 and 10 events per append (each writer on its
 *   own stream, exact expected revision, as a command handler appends), against one
 *   autocommitted INSERT of the same rows (one VALUES row per event) into a table with
 *   the same columns and indexes, with no concurrency check and no notification;
 * - catch-up: readAll forwards in batches of 1000 and a subscription draining from the
 *   start, against keyset SELECTs of the same columns in the same batch size and against
 *   one `COPY ... TO STDOUT` (driven through pg's Submittable hook, pg-copy-streams is not
 *   installed), each parsing the rows into event objects.
 * Writes bench-results/event-store-<timestamp>.json.
 */
import { Connection, Pool } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { createTestDatabase } from '../test/support/database';
import {
  EventMetadata,
  ExpectedRevision,
  NewEvent,
  StoredEvent,
} from '../src/core/event-store/event-store.port';
import { PostgresEventStore } from '../src/core/event-store/postgres/postgres-event-store';
import { describeEnvironment, printTable, writeResults } from './report';

const APPEND_SECONDS = Number(process.env.BENCH_APPEND_SECONDS ?? 2.4);
const BATCH = 1000;
const SLICES = 8;

interface CaseResult {
  case: string;
  events: number;
  eventsPerSecond: number;
  p50Ms: number | null;
  p99Ms: number | null;
  ratio: number | null;
}

const BASELINE_DDL = `
  CREATE TABLE bench_baseline_events (
    global_position bigserial PRIMARY KEY,
    transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
    event_id uuid NOT NULL UNIQUE,
    stream_name text NOT NULL,
    stream_revision bigint NOT NULL,
    type text NOT NULL,
    data jsonb NOT NULL,
    metadata jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (stream_name, stream_revision)
  );
  CREATE INDEX ON bench_baseline_events (transaction_id, global_position);
  CREATE INDEX ON bench_baseline_events (type);`;

const COLUMNS = `global_position::text AS global_position, transaction_id::text AS transaction_id,
  event_id::text AS event_id, stream_name, stream_revision::text AS stream_revision, type, data, metadata`;

function metadata(): EventMetadata {
  return {
    workspaceId: '6f0c1f9e-3c1a-4b8e-9d57-2f1f2b0b7a11',
    actor: { kind: 'member', id: '0b6c0a52-6f0a-4a43-9d6b-5f0e8a3d1c77', memberId: 42 },
    correlationId: uuidv7(),
    occurredAt: new Date().toISOString(),
    schemaVersion: 1,
  };
}

function newEvent(i: number): NewEvent {
  return {
    type: i % 3 === 0 ? 'DataRecordCreated' : 'DataRecordUpdated',
    data: {
      recordId: 4211 + i,
      dataTypeId: 7,
      fields: { name: `Record ${i}`, email: `r${i}@example.com`, score: i % 100, tags: ['a', 'b'] },
    },
    metadata: metadata(),
  };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

interface Measured {
  events: number;
  seconds: number;
  latenciesMs: number[];
}

/** Runs `writers` loops of `op` for `seconds`; each op writes `perOp` events. */
async function measureWriters(
  writers: number,
  seconds: number,
  perOp: number,
  op: (writer: number) => Promise<void>,
): Promise<Measured> {
  const latencies: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      while (performance.now() < deadline) {
        const t = performance.now();
        await op(w);
        latencies.push(performance.now() - t);
      }
    }),
  );
  return {
    events: latencies.length * perOp,
    seconds: (performance.now() - started) / 1000,
    latenciesMs: latencies,
  };
}

function merge(a: Measured, b: Measured): Measured {
  return {
    events: a.events + b.events,
    seconds: a.seconds + b.seconds,
    latenciesMs: [...a.latenciesMs, ...b.latenciesMs],
  };
}

function toResult(name: string, m: Measured, baseline?: CaseResult): CaseResult {
  const sorted = [...m.latenciesMs].sort((x, y) => x - y);
  const eventsPerSecond = m.events / m.seconds;
  return {
    case: name,
    events: m.events,
    eventsPerSecond,
    p50Ms: sorted.length ? percentile(sorted, 50) : null,
    p99Ms: sorted.length ? percentile(sorted, 99) : null,
    ratio: baseline ? eventsPerSecond / baseline.eventsPerSecond : null,
  };
}

async function appendCases(pool: Pool, store: PostgresEventStore, run: string): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  for (const writers of [1, 8]) {
    for (const perAppend of [1, 10]) {
      const label = `${writers} writer${writers > 1 ? 's' : ''} x ${perAppend} event${perAppend > 1 ? 's' : ''}/append`;
      const storeRevisions: ExpectedRevision[] = Array.from({ length: writers }, () => 'no_stream');
      const baselineRevisions = Array.from({ length: writers }, () => 0);
      const stream = (w: number) => `bench${run}-${writers}x${perAppend}-w${w}`;
      const placeholders = Array.from(
        { length: perAppend },
        (_, r) =>
          `($${r * 6 + 1}, $${r * 6 + 2}, $${r * 6 + 3}, $${r * 6 + 4}, $${r * 6 + 5}, $${r * 6 + 6})`,
      ).join(', ');
      const baselineSql = `INSERT INTO bench_baseline_events (event_id, stream_name, stream_revision, type, data, metadata) VALUES ${placeholders}`;

      const storeOp = async (w: number) => {
        const events = Array.from({ length: perAppend }, (_, i) => newEvent(i));
        const result = await store.append(stream(w), events, { expectedRevision: storeRevisions[w] });
        storeRevisions[w] = result.nextExpectedRevision;
      };
      const baselineOp = async (w: number) => {
        const values: unknown[] = [];
        for (let i = 0; i < perAppend; i++) {
          const e = newEvent(i);
          values.push(
            uuidv7(),
            stream(w),
            baselineRevisions[w]++,
            e.type,
            JSON.stringify(e.data),
            JSON.stringify(e.metadata),
          );
        }
        await pool.query({ name: `bench_baseline_insert_${perAppend}`, text: baselineSql, values });
      };

      // Warm both paths (prepared statements, caches), then alternate short slices so that
      // whatever else the machine is doing weighs on both sides alike.
      await measureWriters(writers, 0.2, perAppend, baselineOp);
      await measureWriters(writers, 0.2, perAppend, storeOp);
      let baselineRun: Measured = { events: 0, seconds: 0, latenciesMs: [] };
      let storeRun: Measured = { events: 0, seconds: 0, latenciesMs: [] };
      const slice = APPEND_SECONDS / SLICES;
      for (let k = 0; k < SLICES; k++) {
        if (k % 2 === 0)
          baselineRun = merge(baselineRun, await measureWriters(writers, slice, perAppend, baselineOp));
        storeRun = merge(storeRun, await measureWriters(writers, slice, perAppend, storeOp));
        if (k % 2 === 1)
          baselineRun = merge(baselineRun, await measureWriters(writers, slice, perAppend, baselineOp));
      }
      const baseline = toResult(`append ${label}: baseline INSERT`, baselineRun);
      results.push(baseline, toResult(`append ${label}: event store`, storeRun, baseline));
    }
  }
  return results;
}

function rowToEvent(r: {
  global_position: string;
  transaction_id: string;
  event_id: string;
  stream_name: string;
  stream_revision: string;
  type: string;
  data: unknown;
  metadata: EventMetadata;
}): StoredEvent {
  return {
    id: r.event_id,
    type: r.type,
    data: r.data,
    metadata: r.metadata,
    streamName: r.stream_name,
    revision: BigInt(r.stream_revision),
    position: { commit: BigInt(r.transaction_id), prepare: BigInt(r.global_position) },
  };
}

/** COPY TO STDOUT through pg's Submittable hook: one CopyData message per row. */
function copyOut(pool: Pool, sql: string, onLine: (line: string) => void): Promise<void> {
  return pool.connect().then(
    (client) =>
      new Promise<void>((resolve, reject) => {
        let failure: Error | undefined;
        let pending = '';
        const submittable = {
          submit(connection: Connection) {
            connection.query(sql);
          },
          handleCopyData(msg: { chunk: Buffer }) {
            pending += msg.chunk.toString('utf8');
            let nl: number;
            while ((nl = pending.indexOf('\n')) >= 0) {
              onLine(pending.slice(0, nl));
              pending = pending.slice(nl + 1);
            }
          },
          handleError(error: Error) {
            failure = error;
          },
          handleReadyForQuery() {
            client.release(failure);
            if (failure) reject(failure);
            else resolve();
          },
          handleCommandComplete() {},
          handleRowDescription() {},
          handleDataRow() {},
          handleEmptyQuery() {},
          handlePortalSuspended() {},
        };
        client.query(submittable);
      }),
  );
}

const unescapeCopy = (field: string): string =>
  field.includes('\\')
    ? field.replace(
        /\\(.)/g,
        (_, c: string) => ({ n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', v: '\v' })[c] ?? c,
      )
    : field;

async function catchUpCases(pool: Pool, store: PostgresEventStore): Promise<CaseResult[]> {
  const storeRead = async (): Promise<Measured> => {
    const latencies: number[] = [];
    let events = 0;
    let after: StoredEvent['position'] | undefined;
    const started = performance.now();
    for (;;) {
      const t = performance.now();
      const batch = await store.readAll({ after, maxCount: BATCH });
      latencies.push(performance.now() - t);
      events += batch.length;
      if (batch.length < BATCH) break;
      after = batch[batch.length - 1].position;
    }
    return { events, seconds: (performance.now() - started) / 1000, latenciesMs: latencies };
  };
  const storeSubscribe = async (total: number): Promise<Measured> => {
    const started = performance.now();
    const subscription = store.subscribe();
    let events = 0;
    for await (const event of subscription) {
      if (event.id && ++events >= total) break;
    }
    await subscription.close();
    return { events, seconds: (performance.now() - started) / 1000, latenciesMs: [] };
  };
  const baselineSelect = async (): Promise<Measured> => {
    const latencies: number[] = [];
    let events = 0;
    let after = '0';
    const started = performance.now();
    for (;;) {
      const t = performance.now();
      const { rows } = await pool.query({
        name: 'bench_baseline_select',
        text: `SELECT ${COLUMNS} FROM bench_baseline_events e WHERE e.global_position > $1::bigint ORDER BY e.global_position LIMIT $2`,
        values: [after, BATCH],
      });
      const batch = rows.map(rowToEvent);
      latencies.push(performance.now() - t);
      events += batch.length;
      if (batch.length < BATCH) break;
      after = batch[batch.length - 1].position.prepare.toString();
    }
    return { events, seconds: (performance.now() - started) / 1000, latenciesMs: latencies };
  };
  const baselineCopy = async (): Promise<Measured> => {
    let events = 0;
    const started = performance.now();
    await copyOut(
      pool,
      `COPY (SELECT global_position, transaction_id, event_id, stream_name, stream_revision, type, data, metadata FROM bench_baseline_events ORDER BY global_position) TO STDOUT`,
      (line) => {
        const f = line.split('\t').map(unescapeCopy);
        rowToEvent({
          global_position: f[0],
          transaction_id: f[1],
          event_id: f[2],
          stream_name: f[3],
          stream_revision: f[4],
          type: f[5],
          data: JSON.parse(f[6]),
          metadata: JSON.parse(f[7]) as EventMetadata,
        });
        events++;
      },
    );
    return { events, seconds: (performance.now() - started) / 1000, latenciesMs: [] };
  };

  const { rows } = await pool.query<{ n: string }>(`SELECT count(*)::text AS n FROM events`);
  const total = Number(rows[0].n);
  // Three alternating passes each; the best pass of each side counts (the others pay for cold caches and noise).
  const passes: Record<string, Measured[]> = { select: [], copy: [], read: [], subscribe: [] };
  for (let i = 0; i < 3; i++) {
    passes.select.push(await baselineSelect());
    passes.read.push(await storeRead());
    passes.copy.push(await baselineCopy());
    passes.subscribe.push(await storeSubscribe(total));
  }
  const best = (ms: Measured[]) => ms.reduce((a, b) => (b.events / b.seconds > a.events / a.seconds ? b : a));
  const select = toResult(`catch-up: baseline SELECT, batches of ${BATCH}`, best(passes.select));
  return [
    select,
    toResult(`catch-up: baseline COPY TO STDOUT (one stream)`, best(passes.copy), select),
    toResult(`catch-up: readAll, batches of ${BATCH}`, best(passes.read), select),
    toResult(`catch-up: subscribe from the start`, best(passes.subscribe), select),
  ];
}

function printResults(results: CaseResult[]): void {
  const fmt = (n: number | null, digits = 2) => (n === null || Number.isNaN(n) ? '-' : n.toFixed(digits));
  const rows = results.map((r) => [
    r.case,
    Math.round(r.eventsPerSecond).toLocaleString('en-US'),
    fmt(r.p50Ms),
    fmt(r.p99Ms),
    r.ratio === null ? '(baseline)' : `${fmt(r.ratio)}x`,
  ]);
  const header = ['case', 'events/s', 'p50 ms', 'p99 ms', 'vs baseline'];
  printTable(header, rows);
}

export async function run(): Promise<void> {
  const db = await createTestDatabase();
  const pool = new Pool({ connectionString: db.url, max: 10, application_name: 'bench' });
  const store = new PostgresEventStore({
    connectionString: db.url,
    pool,
    notifyIntervalMs: process.env.BENCH_NOTIFY_MS ? Number(process.env.BENCH_NOTIFY_MS) : undefined,
  });
  const started = Date.now();
  try {
    await pool.query(BASELINE_DDL);
    const environment = await describeEnvironment(pool);
    console.log(`database ${db.name}; ${JSON.stringify(environment)}`);

    const results = [
      ...(await appendCases(pool, store, Date.now().toString(36))),
      ...(await catchUpCases(pool, store)),
    ];
    printResults(results);

    const eightByOne = results.find(
      (r) => r.case.startsWith('append 8 writers x 1 event/') && r.ratio !== null,
    );
    const catchUp = results.find((r) => r.case.startsWith('catch-up: readAll'));
    const targets = {
      append8x1RatioAtLeast0_7: eightByOne ? eightByOne.ratio! >= 0.7 : false,
      catchUpAtLeast50k: catchUp ? catchUp.eventsPerSecond >= 50_000 : false,
    };
    console.log(`targets: ${JSON.stringify(targets)}; ${((Date.now() - started) / 1000).toFixed(1)} s`);

    writeResults('event-store', {
      environment,
      appendSeconds: APPEND_SECONDS,
      results,
      targets,
    });
  } finally {
    await store.close();
    await pool.end();
    await db.drop();
  }
}
