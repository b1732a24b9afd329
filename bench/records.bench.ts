/**
 * `npm run bench -- records`: the records feature through real HTTP, against plain
 * PostgreSQL baselines, side by side in one run. The service runs as a child process
 * (dist/main.js, as `npm run bench -- http` runs it) on a fresh database and Redis prefix.
 *
 * 1. Bulk: `POST .../records/bulk` of BENCH_RECORDS_BULK (10,000) records of a 6-field
 *    type (3 indexed), timed until the response, which comes once the read model has
 *    caught up (read-your-writes; checked with a search for the last record), beside the
 *    same rows put into a plain table with one multi-row INSERT (jsonb_to_recordset).
 *    Rounds alternate baseline / bulk (BENCH_RECORDS_ROUNDS, 3). The service's resident
 *    memory is sampled every 20 ms during each bulk (VmRSS from /proc): reported as the
 *    peak over the RSS before the request. CPU used by the service and by the bench
 *    database's backends (/proc stat) is reported per record, and per request in 2.
 * 2. Single create: `POST .../records` at BENCH_HTTP_CONNECTIONS (16) for
 *    BENCH_HTTP_SECONDS (5), alternated in slices with the bare node:http + 1 INSERT server
 *    of the http bench.
 * 3. Search: BENCH_RECORDS_SEARCH_TOTAL (100,000) records in one type (bulk requests of
 *    10,000), then BENCH_RECORDS_QUERIES (200) `search=` and as many `field.<slug>=`
 *    lists, one connection, p50/p95; with the plans PostgreSQL chose for both (EXPLAIN).
 * BENCH_RECORDS_PARTS=bulk,single,search (the default: all three) runs only the parts named;
 * the table then shows only theirs.
 * Targets (issue 9): bulk ≤ 8× the baseline's time, single create ≥ 0.3× the bare write,
 * search p95 ≤ 50 ms. Writes bench-results/records-<timestamp>.json.
 */
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { Pool } from 'pg';
import { createTestDatabase } from '../test/support/database';
import { clearRedisPrefix, TEST_REDIS_URL, testRedisPrefix } from '../test/support/redis';
import { bootstrapBenchWorkspace, startBareServer, startService, Service } from './http.bench';
import { EMPTY, LoadClient, merge, percentile } from './http-load';
import { describeEnvironment, printTable, writeResults } from './report';

const BULK = Number(process.env.BENCH_RECORDS_BULK ?? 10_000);
const ROUNDS = Number(process.env.BENCH_RECORDS_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_HTTP_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_HTTP_CONNECTIONS ?? 16);
const SEARCH_TOTAL = Number(process.env.BENCH_RECORDS_SEARCH_TOTAL ?? 100_000);
const QUERIES = Number(process.env.BENCH_RECORDS_QUERIES ?? 200);
const HOST = '127.0.0.1';
const PARTS = new Set(
  (process.env.BENCH_RECORDS_PARTS ?? 'bulk,single,search').split(',').map((p) => p.trim()),
);

const FIELDS = [
  { name: 'Name', slug: 'name', fieldType: 'text', shouldIndex: true, required: true },
  { name: 'Email', slug: 'email', fieldType: 'email', shouldIndex: true },
  {
    name: 'Tier',
    slug: 'tier',
    fieldType: 'select',
    options: ['gold', 'silver', 'bronze'],
    shouldIndex: true,
  },
  { name: 'Age', slug: 'age', fieldType: 'number' },
  { name: 'Born', slug: 'born', fieldType: 'date' },
  { name: 'Note', slug: 'note', fieldType: 'text' },
];

const recordOf = (tag: string, i: number) => ({
  externalId: `${tag}-${i}`,
  fieldValues: {
    name: `Person ${tag} ${i}`,
    email: `p${i}-${tag}@example.com`,
    tier: ['gold', 'silver', 'bronze'][i % 3],
    age: i % 90,
    born: '1990-01-01',
    note: `note ${i}`,
  },
});

interface Timing {
  p50Ms: number;
  p95Ms: number;
  queries: number;
}

interface SearchFigures {
  search: Timing;
  filter: Timing;
  plans: { search: string[]; field: string[] };
  loadSeconds: number;
}

interface SingleFigures {
  connections: number;
  createPerSecond: number;
  createP50Ms: number;
  createP99Ms: number;
  barePerSecond: number;
  ratio: number;
  unexpected: Record<string, number>;
  serviceCpuMsPerRequest: number;
  dbCpuMsPerRequest: number;
}

interface BulkRound {
  round: number;
  baselineMs: number;
  bulkMs: number;
  rssBeforeMb: number;
  rssPeakDeltaMb: number;
  serviceCpuMs: number;
  dbCpuMs: number;
}

interface BulkFigures {
  records: number;
  baselineMedianMs: number;
  bulkMedianMs: number;
  ratio: number;
  rssPeakDeltaMb: number;
  serviceCpuMsMedian: number;
  dbCpuMsMedian: number;
  rounds: BulkRound[];
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** CPU time (user + system) a process has used, in ms (clock ticks of 10 ms); 0 once it is gone. */
function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/**
 * CPU used by the service and by the database's backends on the bench database between
 * two calls: less sensitive to the machine's other load than wall time (a descheduled
 * process uses none). Backends that exit in between are not counted.
 */
async function cpuMeter(pool: Pool, servicePid: number) {
  const backends = async () => {
    const { rows } = await pool.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`,
    );
    return new Map(rows.map((r) => [r.pid, cpuMs(r.pid)]));
  };
  const service0 = cpuMs(servicePid);
  const db0 = await backends();
  return async () => {
    const db1 = await backends();
    let db = 0;
    for (const [pid, ms] of db1) db += ms - (db0.get(pid) ?? 0);
    return { serviceMs: cpuMs(servicePid) - service0, dbMs: db };
  };
}

function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

export async function run(): Promise<void> {
  const db = await createTestDatabase();
  const prefix = testRedisPrefix();
  const pool = new Pool({ connectionString: db.url, max: 10, application_name: 'bench-records' });
  const env = {
    DATABASE_URL: db.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: prefix,
    NODE_ENV: 'production',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '1000000',
    RATE_LIMIT_CONCURRENCY: '10000',
    READ_YOUR_WRITES_TIMEOUT_MS: '120000',
  };
  let service: Service | undefined;
  let bare: Server | undefined;
  const started = Date.now();
  try {
    const bareServer = await startBareServer(pool);
    bare = bareServer.server;
    const svc = await startService(env);
    service = svc.proc;
    const { apiKey, workspaceId } = await bootstrapBenchWorkspace(env);
    const auth = { authorization: `Bearer ${apiKey}` };
    const api = new LoadClient(HOST, svc.port, CONNECTIONS);
    const send = async (method: string, path: string, body?: unknown) => {
      const res = await api.send({
        method,
        path: `/api/v2${path}`,
        headers: auth,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: res.body ? (JSON.parse(res.body) as Record<string, unknown>) : {} };
    };
    let types = 0;
    const newType = async () => {
      const res = await send('POST', `/w/${workspaceId}/data-types`, {
        name: 'Bench',
        slug: `bench_${++types}`,
        fields: FIELDS,
      });
      if (res.status !== 201) throw new Error(`data type: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.id as number;
    };
    const environment = await describeEnvironment(pool);
    console.log(`database ${db.name}; ${JSON.stringify(environment)}`);

    // 1. Bulk vs one multi-row INSERT.
    await pool.query(`CREATE TABLE bench_records_baseline (
      id bigserial PRIMARY KEY, external_id text, field_values jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`);
    const baselineInsert = async (tag: string) => {
      const rows = Array.from({ length: BULK }, (_, i) => recordOf(tag, i));
      const t = performance.now();
      await pool.query(
        `INSERT INTO bench_records_baseline (external_id, field_values)
         SELECT r."externalId", r."fieldValues" FROM jsonb_to_recordset($1::jsonb) AS r("externalId" text, "fieldValues" jsonb)`,
        [JSON.stringify(rows)],
      );
      return performance.now() - t;
    };
    const bulkOnce = async (typeId: number, tag: string, count = BULK) => {
      const records = Array.from({ length: count }, (_, i) => recordOf(tag, i));
      const body = JSON.stringify({ records });
      const cpu = await cpuMeter(pool, svc.proc.child.pid!);
      const before = rssKb(svc.proc.child.pid!);
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, rssKb(svc.proc.child.pid!))), 20);
      const t = performance.now();
      const res = await api.send({
        method: 'POST',
        path: `/api/v2/w/${workspaceId}/data-types/${typeId}/records/bulk`,
        headers: auth,
        body,
      });
      const ms = performance.now() - t;
      clearInterval(sampler);
      const used = await cpu();
      const result = JSON.parse(res.body) as { importedCount: number; errors: unknown[] | null };
      if (res.status !== 200 || result.importedCount !== count)
        throw new Error(
          `bulk: HTTP ${res.status} imported ${result.importedCount}: ${JSON.stringify(result.errors?.slice(0, 3))}`,
        );
      const found = await send(
        'GET',
        `/w/${workspaceId}/data-types/${typeId}/records?search=${encodeURIComponent(`person ${tag} ${count - 1}`)}`,
      );
      if ((found.body.total as number) !== 1)
        throw new Error(`bulk ${tag}: the last record is not queryable at the response`);
      return {
        ms,
        rssBeforeMb: before / 1024,
        rssPeakDeltaMb: (peak - before) / 1024,
        serviceCpuMs: used.serviceMs,
        dbCpuMs: used.dbMs,
      };
    };
    const tag = Date.now().toString(36);
    let bulk: BulkFigures | undefined;
    if (PARTS.has('bulk')) {
      await baselineInsert(`${tag}-warm`);
      await bulkOnce(await newType(), `${tag}-warm`, Math.min(BULK, 1000));
      const bulkRounds: BulkRound[] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        const baselineMs = await baselineInsert(`${tag}-b${round}`);
        const b = await bulkOnce(await newType(), `${tag}-r${round}`);
        bulkRounds.push({
          round,
          baselineMs,
          bulkMs: b.ms,
          rssBeforeMb: b.rssBeforeMb,
          rssPeakDeltaMb: b.rssPeakDeltaMb,
          serviceCpuMs: b.serviceCpuMs,
          dbCpuMs: b.dbCpuMs,
        });
        console.log(
          `bulk round ${round}: baseline ${baselineMs.toFixed(0)} ms, bulk ${b.ms.toFixed(0)} ms, service RSS ${b.rssBeforeMb.toFixed(0)} MB +${b.rssPeakDeltaMb.toFixed(0)} MB peak, CPU service ${b.serviceCpuMs} ms + database ${b.dbCpuMs} ms`,
        );
      }
      bulk = {
        records: BULK,
        baselineMedianMs: median(bulkRounds.map((r) => r.baselineMs)),
        bulkMedianMs: median(bulkRounds.map((r) => r.bulkMs)),
        ratio: 0,
        rssPeakDeltaMb: Math.max(...bulkRounds.map((r) => r.rssPeakDeltaMb)),
        serviceCpuMsMedian: median(bulkRounds.map((r) => r.serviceCpuMs)),
        dbCpuMsMedian: median(bulkRounds.map((r) => r.dbCpuMs)),
        rounds: bulkRounds,
      };
      bulk.ratio = bulk.bulkMedianMs / bulk.baselineMedianMs;
    }

    let single: SingleFigures | undefined;
    if (PARTS.has('single')) {
      // 2. Single create at 16 connections vs the bare write.
      const singleType = await newType();
      let n = 0;
      const createNext = () => ({
        method: 'POST',
        path: `/api/v2/w/${workspaceId}/data-types/${singleType}/records`,
        headers: auth,
        body: JSON.stringify(recordOf(`${tag}-s`, n++)),
      });
      const bareClient = new LoadClient(HOST, bareServer.port, CONNECTIONS);
      const bareNext = (i: number) => ({
        method: 'POST',
        path: '/',
        body: JSON.stringify(recordOf(`${tag}-bare`, i)),
      });
      await bareClient.run(CONNECTIONS, 0.5, 201, bareNext);
      await api.run(CONNECTIONS, 0.5, 201, createNext);
      let base = EMPTY;
      let measured = EMPTY;
      base = merge(base, await bareClient.run(CONNECTIONS, SECONDS / 2, 201, bareNext));
      const singleCpu = await cpuMeter(pool, svc.proc.child.pid!);
      measured = merge(measured, await api.run(CONNECTIONS, SECONDS / 2, 201, createNext));
      measured = merge(measured, await api.run(CONNECTIONS, SECONDS / 2, 201, createNext));
      const singleUsed = await singleCpu();
      base = merge(base, await bareClient.run(CONNECTIONS, SECONDS / 2, 201, bareNext));
      const rate = (m: typeof base) => m.requests / m.seconds;
      const lat = (m: typeof base) => [...m.latenciesMs].sort((a, b) => a - b);
      single = {
        connections: CONNECTIONS,
        createPerSecond: rate(measured),
        createP50Ms: percentile(lat(measured), 50),
        createP99Ms: percentile(lat(measured), 99),
        barePerSecond: rate(base),
        ratio: rate(measured) / rate(base),
        unexpected: measured.unexpected,
        serviceCpuMsPerRequest: singleUsed.serviceMs / measured.requests,
        dbCpuMsPerRequest: singleUsed.dbMs / measured.requests,
      };
      bareClient.close();
    }

    let searched: SearchFigures | undefined;
    if (PARTS.has('search')) {
      // 3. Search and field filters over SEARCH_TOTAL records of one type.
      const searchType = await newType();
      const loadStarted = performance.now();
      for (let done = 0; done < SEARCH_TOTAL; done += BULK) {
        const records = Array.from({ length: Math.min(BULK, SEARCH_TOTAL - done) }, (_, i) =>
          recordOf('s', done + i),
        );
        const res = await send('POST', `/w/${workspaceId}/data-types/${searchType}/records/bulk`, {
          records,
        });
        if (res.status !== 200 || res.body.importedCount !== records.length)
          throw new Error(`search load: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
      }
      const loadSeconds = (performance.now() - loadStarted) / 1000;
      console.log(`loaded ${SEARCH_TOTAL} records in ${loadSeconds.toFixed(1)} s`);
      const timeQueries = async (query: (i: number) => string) => {
        const times: number[] = [];
        for (let i = 0; i < QUERIES; i++) {
          const t = performance.now();
          const res = await send('GET', `/w/${workspaceId}/data-types/${searchType}/records?${query(i)}`);
          times.push(performance.now() - t);
          if (res.status !== 200 || (res.body.total as number) < 1)
            throw new Error(`query ${query(i)}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
        }
        times.sort((a, b) => a - b);
        return { p50Ms: percentile(times, 50), p95Ms: percentile(times, 95), queries: QUERIES };
      };
      const pick = (i: number) => (i * 7919) % SEARCH_TOTAL;
      const search = await timeQueries((i) => `search=${encodeURIComponent(`person s ${pick(i)}`)}`);
      const filter = await timeQueries(
        (i) => `field.email=${encodeURIComponent(`p${pick(i)}-s@example.com`)}`,
      );
      const explain = async (where: string, param: string) =>
        (
          await pool.query<{ 'QUERY PLAN': string }>(
            `EXPLAIN ANALYZE SELECT id FROM data_records WHERE workspace_id = $1 AND data_type_id = $2 AND ${where} ORDER BY id LIMIT 50`,
            [workspaceId, searchType, param],
          )
        ).rows.map((r) => r['QUERY PLAN']);
      const plans = {
        search: await explain(`search_text ILIKE $3 ESCAPE '\\'`, '%person s 4242%'),
        field: await explain('indexed_values @> $3::jsonb', JSON.stringify({ email: 'p4242-s@example.com' })),
      };
      searched = { search, filter, plans, loadSeconds };
    }

    const rows: string[][] = [];
    if (bulk)
      rows.push(
        [
          `bulk ${BULK} records (until queryable)`,
          `${bulk.bulkMedianMs.toFixed(0)} ms`,
          `${bulk.baselineMedianMs.toFixed(0)} ms (1 multi-row INSERT)`,
          `${bulk.ratio.toFixed(2)}x time`,
          `<= 8x ${bulk.ratio <= 8 ? 'ok' : 'MISSED'}`,
        ],
        ['bulk: service RSS peak over before', `+${bulk.rssPeakDeltaMb.toFixed(0)} MB`, '', '', ''],
        [
          'bulk: CPU per record (median round)',
          `service ${((bulk.serviceCpuMsMedian * 1000) / BULK).toFixed(0)} µs + database ${((bulk.dbCpuMsMedian * 1000) / BULK).toFixed(0)} µs`,
          '',
          '',
          '',
        ],
      );
    if (single)
      rows.push(
        [
          `POST record, ${CONNECTIONS} connections`,
          `${Math.round(single.createPerSecond)} req/s (p99 ${single.createP99Ms.toFixed(1)} ms)`,
          `${Math.round(single.barePerSecond)} req/s (bare write)`,
          `${single.ratio.toFixed(2)}x`,
          `>= 0.3x ${single.ratio >= 0.3 ? 'ok' : 'MISSED'}`,
        ],
        [
          'POST record: CPU per request',
          `service ${single.serviceCpuMsPerRequest.toFixed(2)} ms + database ${single.dbCpuMsPerRequest.toFixed(2)} ms`,
          '',
          '',
          '',
        ],
      );
    if (searched) {
      const { search, filter } = searched;
      rows.push(
        [
          `search over ${SEARCH_TOTAL}`,
          `p50 ${search.p50Ms.toFixed(1)} ms, p95 ${search.p95Ms.toFixed(1)} ms`,
          '',
          '',
          `p95 <= 50 ms ${search.p95Ms <= 50 ? 'ok' : 'MISSED'}`,
        ],
        [
          `field.email= over ${SEARCH_TOTAL}`,
          `p50 ${filter.p50Ms.toFixed(1)} ms, p95 ${filter.p95Ms.toFixed(1)} ms`,
          '',
          '',
          `p95 <= 50 ms ${filter.p95Ms <= 50 ? 'ok' : 'MISSED'}`,
        ],
      );
    }
    printTable(['case', 'figure', 'baseline', 'ratio', 'target'], rows);
    if (searched) {
      console.log(`plan (search):\n  ${searched.plans.search.join('\n  ')}`);
      console.log(`plan (field.email):\n  ${searched.plans.field.join('\n  ')}`);
    }
    console.log(`${((Date.now() - started) / 1000).toFixed(1)} s`);
    writeResults('records', {
      environment,
      parts: [...PARTS],
      bulk,
      single,
      search: searched?.search,
      filter: searched?.filter,
      plans: searched?.plans,
      searchLoadSeconds: searched?.loadSeconds,
    });
    api.close();
  } finally {
    await service?.stop();
    await new Promise<void>((resolve) => (bare ? bare.close(() => resolve()) : resolve()));
    await pool.end();
    await clearRedisPrefix(prefix);
    await db.drop();
  }
}
