/**
 * `POST /api/v2/w/{wid}/members/import` of N new contacts (`{email, externalId}` each;
 * N = BENCH_IMPORT_ROWS, default 2000), through the real HTTP app (Fastify on an
 * ephemeral port, fetch from the same process), in two modes:
 * - batched: the app as it ships: new contacts go in atomic multi-stream writes of 500
 *   rows (MemberWriter.createMany / EventSourcedRepository.createStreams);
 * - one-by-one (the baseline): the same app instance, same database, same process, with
 *   the batch path switched off by shadowing MemberWriter's `canCreateMany` getter with an
 *   own property returning false on the singleton instance; deleting the own property
 *   restores the prototype getter for the batched rounds.
 * One app and one database serve both modes, so pools, caches and projections are
 * shared alike. Rounds alternate one-by-one / batched (BENCH_ROUNDS each, default 3),
 * each on a fresh workspace, after one unmeasured warm-up import per mode (min(N, 100)
 * rows). The measured time is the request's wall time: the response only comes once the
 * read models have caught up (read-your-writes, its timeout raised to 120 s), and each
 * round checks importedCount == N and that the members read model holds all N rows.
 * Reported per mode: median wall time, rows/s at the median, and the batched/one-by-one
 * ratio of median times (lower is better).
 * Writes bench-results/member-import-<timestamp>.json.
 */
import { cpus } from 'node:os';
import { DataSource } from 'typeorm';
import { createHttpApp } from '../src/bootstrap';
import { loadConfig } from '../src/core/config/config';
import { requestContext, SYSTEM_ACTOR } from '../src/core/cqrs/request-context';
import { JsonLogger } from '../src/core/logging/json-logger';
import { ConsistencyWaiter } from '../src/core/projections/consistency';
import { BootstrapResult, BootstrapService } from '../src/modules/identity/bootstrap/bootstrap.service';
import type { ImportResult } from '../src/modules/identity/commands/import-members.command';
import { MemberWriter } from '../src/modules/identity/commands/member-writer.service';
import { createTestDatabase } from '../test/support/database';
import { clearRedisPrefix, TEST_REDIS_URL, testRedisPrefix } from '../test/support/redis';
import { printTable, writeResults } from './report';

const ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARMUP_ROWS = Math.min(ROWS, 100);

type Mode = 'one-by-one' | 'batched';

interface Round {
  mode: Mode;
  round: number;
  ms: number;
  importedCount: number;
}

interface ModeResult {
  mode: Mode;
  rows: number;
  rounds: number;
  medianMs: number;
  minMs: number;
  maxMs: number;
  rowsPerSecond: number;
  importedCount: number;
  ratio: number | null;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

function printResults(results: ModeResult[]): void {
  const rows = results.map((r) => [
    r.mode,
    String(r.rows),
    String(r.rounds),
    r.medianMs.toFixed(0),
    `${r.minMs.toFixed(0)}-${r.maxMs.toFixed(0)}`,
    Math.round(r.rowsPerSecond).toLocaleString('en-US'),
    String(r.importedCount),
    r.ratio === null ? '(baseline)' : `${r.ratio.toFixed(3)}x`,
  ]);
  const header = [
    'mode',
    'rows',
    'rounds',
    'median ms',
    'min-max ms',
    'rows/s',
    'imported',
    'time vs baseline',
  ];
  printTable(header, rows);
}

export async function run(): Promise<void> {
  const database = await createTestDatabase();
  const redisPrefix = testRedisPrefix();
  const config = loadConfig({
    DATABASE_URL: database.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: redisPrefix,
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    PORT: '0',
    RATE_LIMIT_PER_MINUTE: '1000000',
    RATE_LIMIT_CONCURRENCY: '10000',
    READ_YOUR_WRITES_TIMEOUT_MS: '120000',
  });
  const app = await createHttpApp(config, new JsonLogger(config.logLevel));
  const started = Date.now();
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.getHttpServer().address() as { port: number };
    const baseUrl = `http://127.0.0.1:${port}/api/v2`;
    const writer = app.get(MemberWriter);
    const db = app.get(DataSource);

    let workspaces = 0;
    const bootstrap = async (): Promise<BootstrapResult> => {
      const n = ++workspaces;
      const ctx = { requestId: `bench-bootstrap-${n}`, actor: SYSTEM_ACTOR, appended: [] };
      const result = await requestContext.run(ctx, () =>
        app.get(BootstrapService).bootstrap({
          workspaceName: `Bench workspace ${n}`,
          email: `owner${n}-${process.pid}@example.com`,
        }),
      );
      if (!(await app.get(ConsistencyWaiter).waitFor(ctx.appended, 15_000)))
        throw new Error('bootstrap: the projections did not catch up within 15 s');
      return result;
    };

    const setMode = (mode: Mode) => {
      if (mode === 'one-by-one')
        Object.defineProperty(writer, 'canCreateMany', { get: () => false, configurable: true });
      else delete (writer as unknown as Record<string, unknown>).canCreateMany;
      if (writer.canCreateMany !== (mode === 'batched'))
        throw new Error(`could not switch MemberWriter to ${mode}`);
    };

    const importOnce = async (mode: Mode, label: string, rows: number): Promise<Omit<Round, 'round'>> => {
      const ws = await bootstrap();
      const members = Array.from({ length: rows }, (_, i) => ({
        email: `${label}-${i}@example.com`,
        externalId: `${label}-${i}`,
      }));
      const body = JSON.stringify({ members });
      setMode(mode);
      const t = performance.now();
      const res = await fetch(`${baseUrl}/w/${ws.workspaceId}/members/import`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ws.apiKey}`, 'content-type': 'application/json' },
        body,
      });
      const text = await res.text();
      const ms = performance.now() - t;
      if (res.status !== 200) throw new Error(`${label}: HTTP ${res.status}: ${text.slice(0, 500)}`);
      const result = JSON.parse(text) as ImportResult;
      if (result.importedCount !== rows)
        throw new Error(
          `${label}: importedCount ${result.importedCount} != ${rows}; errors: ${JSON.stringify(result.errors?.slice(0, 5))}`,
        );
      const [{ n }] = await db.query<{ n: string }[]>(
        `SELECT count(*)::text AS n FROM members WHERE workspace_id = $1 AND account_uuid IS NULL`,
        [ws.workspaceId],
      );
      if (Number(n) !== rows)
        throw new Error(`${label}: the members read model holds ${n} contacts, not ${rows}, at the response`);
      return { mode, ms, importedCount: result.importedCount };
    };

    const settings = await db.query<{ name: string; setting: string }[]>(
      `SELECT name, setting FROM pg_settings WHERE name IN ('server_version', 'fsync', 'synchronous_commit', 'shared_buffers')`,
    );
    const environment = {
      node: process.version,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model,
      postgres: Object.fromEntries(settings.map((r) => [r.name, r.setting])),
    };
    console.log(`database ${database.name}; ${ROWS} rows x ${ROUNDS} rounds; ${JSON.stringify(environment)}`);

    const tag = Date.now().toString(36);
    await importOnce('one-by-one', `w${tag}-warm-obo`, WARMUP_ROWS);
    await importOnce('batched', `w${tag}-warm-b`, WARMUP_ROWS);

    const rounds: Round[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      for (const mode of ['one-by-one', 'batched'] as Mode[]) {
        const r = await importOnce(mode, `r${tag}-${round}-${mode}`, ROWS);
        rounds.push({ ...r, round });
        console.log(
          `round ${round} ${mode.padEnd(10)} ${r.ms.toFixed(0).padStart(7)} ms  importedCount ${r.importedCount}`,
        );
      }
    }
    setMode('batched');

    const summarise = (mode: Mode, baseline?: ModeResult): ModeResult => {
      const times = rounds.filter((r) => r.mode === mode).map((r) => r.ms);
      const medianMs = median(times);
      return {
        mode,
        rows: ROWS,
        rounds: times.length,
        medianMs,
        minMs: Math.min(...times),
        maxMs: Math.max(...times),
        rowsPerSecond: ROWS / (medianMs / 1000),
        importedCount: ROWS,
        ratio: baseline ? medianMs / baseline.medianMs : null,
      };
    };
    const baseline = summarise('one-by-one');
    const results = [baseline, summarise('batched', baseline)];
    printResults(results);
    console.log(`${((Date.now() - started) / 1000).toFixed(1)} s`);

    writeResults('member-import', {
      environment,
      rows: ROWS,
      rounds: ROUNDS,
      warmupRows: WARMUP_ROWS,
      results,
      roundsDetail: rounds,
    });
  } finally {
    await app.close();
    await clearRedisPrefix(redisPrefix);
    await database.drop();
  }
}
