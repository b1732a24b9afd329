/**
 * The service's HTTP request path against two baselines, side by side in one run:
 * - "bare write": a `node:http` server in this process whose every request does one
 *   INSERT through a pg pool (max 10, as the service's pools) into the same database;
 * - "public GET": the service's own `GET /api/v2/resources/registry` (no credential,
 *   no database), i.e. what Nest + Fastify + our hooks cost with nothing else.
 * The service runs as a child process started as production starts it (package.json's
 * `start:prod`: `node [flags] dist/main.js`; dist/ is rebuilt first when src/ is newer, so
 * never stale) with ROLE=all,
 * LOG_LEVEL=silent and rate limits far above the load, on a fresh database and Redis
 * prefix. Cases, each at BENCH_HTTP_CONNECTIONS (16) for BENCH_HTTP_SECONDS (5) and
 * alternated with its baseline in slices (baseline, case, case, baseline) so that
 * whatever else the machine does weighs on both alike:
 *   GET /w/{wid}                 with an API key, vs the public GET
 *   GET /w/{wid}/members         50 items, vs the public GET
 *   POST /w/{wid}/create-signup  a new email each, vs the bare write
 *   PUT /w/{wid}/members/{id}    round robin over BENCH_HTTP_MEMBERS (2000) members, vs the bare write
 * then BENCH_HTTP_ROUNDS (1000) write-then-read rounds at one connection (PUT a member's
 * name, GET it): every GET must show its PUT; inconsistencies are counted (must be 0).
 * BENCH_HTTP_CASES=get-workspace,put-member picks cases; BENCH_HTTP_SERVICE_NODE_ARGS are
 * node's arguments for the service (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`: the
 * profile is written when the service exits on SIGTERM at the end of the run);
 * BENCH_HTTP_COUNT_STATEMENTS=1 preloads bench/statement-counter.ts into the service and
 * prints each case's round trips to PostgreSQL per request, by kind.
 * Writes bench-results/http-<timestamp>.json.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { Pool } from 'pg';
import { createTestDatabase } from '../test/support/database';
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { freePort, ROOT, runToCompletion } from '../test/support/processes';
import { clearRedisPrefix, TEST_REDIS_URL, testRedisPrefix } from '../test/support/redis';
import { EMPTY, LoadClient, LoadRequest, Measured, merge, percentile } from './http-load';
import { describeEnvironment, printTable, writeResults } from './report';

const SECONDS = Number(process.env.BENCH_HTTP_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_HTTP_CONNECTIONS ?? 16);
const MEMBERS = Number(process.env.BENCH_HTTP_MEMBERS ?? 2000);
const ROUNDS = Number(process.env.BENCH_HTTP_ROUNDS ?? 1000);
const WARMUP_SECONDS = 0.5;
const HOST = '127.0.0.1';

interface CaseResult {
  case: string;
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  baseline: string | null;
  ratio: number | null;
  target: number | null;
  unexpected: Record<string, number>;
  /** Round trips to PostgreSQL per request, by kind (BENCH_HTTP_COUNT_STATEMENTS=1 only). */
  statements: { perRequest: number; byKind: Record<string, number> } | null;
  /** CPU milliseconds per request of the service process and of the database's backends (Linux /proc). */
  serviceCpuMs: number | null;
  postgresCpuMs: number | null;
}

function summarise(
  name: string,
  m: Measured,
  baseline?: CaseResult,
  target?: number,
  cpu?: { service: number; postgres: number },
  statements?: Record<string, number>,
): CaseResult {
  const sorted = [...m.latenciesMs].sort((x, y) => x - y);
  const requestsPerSecond = m.requests / m.seconds;
  return {
    case: name,
    requests: m.requests,
    requestsPerSecond,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    baseline: baseline?.case ?? null,
    ratio: baseline ? requestsPerSecond / baseline.requestsPerSecond : null,
    target: target ?? null,
    unexpected: m.unexpected,
    statements:
      statements && m.requests
        ? {
            perRequest: Object.values(statements).reduce((a, b) => a + b, 0) / m.requests,
            byKind: Object.fromEntries(
              Object.entries(statements)
                .sort((a, b) => b[1] - a[1])
                .map(([k, n]) => [k, Math.round((n / m.requests) * 100) / 100]),
            ),
          }
        : null,
    serviceCpuMs: cpu && m.requests ? cpu.service / m.requests : null,
    postgresCpuMs: cpu && m.requests ? cpu.postgres / m.requests : null,
  };
}

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** utime + stime of a process in ms (0 when it is gone or /proc is absent). */
export function cpuMsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0;
  }
}

/**
 * CPU used so far by the service and by the PostgreSQL backends connected to the bench's
 * database (the backends of pooled connections; one that closes between two snapshots
 * drops out, so the figure is a lower bound). Where the time of a request goes, as a
 * figure the machine's other load does not move much, unlike req/s.
 */
export async function cpuSnapshot(
  pool: Pool,
  servicePid: number | undefined,
  db: string,
  benchApplication = 'bench-bare',
): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND application_name <> $2`,
    [db, benchApplication],
  );
  const out = new Map<string, number>();
  if (servicePid) out.set('service', cpuMsOf(servicePid));
  for (const r of rows) out.set(`pg:${r.pid}`, cpuMsOf(r.pid));
  return out;
}

export function cpuBetween(
  a: Map<string, number>,
  b: Map<string, number>,
): { service: number; postgres: number } {
  let postgres = 0;
  for (const [k, v] of b) if (k.startsWith('pg:') && a.has(k)) postgres += v - a.get(k)!;
  return { service: (b.get('service') ?? 0) - (a.get('service') ?? 0), postgres };
}

/** The bare baseline: read the body, one INSERT, answer 201 with a small JSON. */
export async function startBareServer(pool: Pool): Promise<{ server: Server; port: number }> {
  await pool.query(
    `CREATE TABLE bench_http_baseline (id bigserial PRIMARY KEY, body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`,
  );
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      pool
        .query({
          name: 'bench_http_baseline_insert',
          text: 'INSERT INTO bench_http_baseline (body) VALUES ($1) RETURNING id',
          values: [Buffer.concat(chunks).toString() || '{}'],
        })
        .then(
          ({ rows }) => {
            res.writeHead(201, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ id: String((rows[0] as { id: string }).id) }));
          },
          (err: Error) => {
            res.writeHead(500, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ detail: err.message }));
          },
        );
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  return { server, port: (server.address() as { port: number }).port };
}

export interface Service {
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

// NODE_ENV=production refuses the public development key: a fresh one per bench run, for
// the service and the CLI children alike (they inherit process.env; nothing outlives the run).
process.env.SECRETS_ENCRYPTION_KEY ??= randomBytes(32).toString('base64');

/**
 * How production starts the process: package.json's `start:prod` (dist/main.js) or
 * `start:worker` (dist/worker.js), `node [flags] <script>`, read from there so that a bench
 * runs the built service with exactly production's flags.
 */
export function productionStart(script: 'start:prod' | 'start:worker'): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const words = (pkg.scripts[script] ?? '').trim().split(/\s+/);
  if (words[0] !== 'node' || words.length < 2) {
    throw new Error(`package.json's ${script} is not "node [flags] <script>": ${pkg.scripts[script]}`);
  }
  return words.slice(1);
}

let built = false;
/**
 * dist/ as `npm run build` makes it from the current src/: built when missing or older than
 * any compiled source file (so a bench never runs a stale dist/), once per bench process.
 */
export function ensureBuilt(): void {
  if (built) return;
  const main = join(ROOT, 'dist', 'main.js');
  const builtAt = existsSync(main) ? statSync(main).mtimeMs : 0;
  const src = join(ROOT, 'src');
  const stale = readdirSync(src, { recursive: true, encoding: 'utf8' }).some(
    (f) =>
      f.endsWith('.ts') &&
      !f.endsWith('.spec.ts') &&
      !f.split('/').includes('testing') &&
      statSync(join(src, f)).mtimeMs > builtAt,
  );
  if (stale) {
    console.log('building dist/ (npm run build: src/ is newer)');
    const res = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    if (res.status !== 0) throw new Error(`npm run build failed (${res.status ?? res.signal})`);
  }
  built = true;
}

/**
 * The built service in a child process, started as production starts it (productionStart),
 * with BENCH_HTTP_SERVICE_NODE_ARGS (and the statement counter, when on) before it.
 */
function spawnMain(
  env: Record<string, string>,
  script: 'start:prod' | 'start:worker' = 'start:prod',
): Service {
  ensureBuilt();
  const nodeArgs = process.env.BENCH_HTTP_SERVICE_NODE_ARGS?.split(/\s+/).filter(Boolean) ?? [];
  // The counter is TypeScript: swc's hook is loaded for it (it then compiles dist/'s .js too).
  const counter = env.BENCH_STATEMENT_COUNTS_FILE
    ? ['-r', '@swc-node/register', '-r', './bench/statement-counter.ts']
    : [];
  const start = productionStart(script);
  const child = spawn(process.execPath, [...nodeArgs, ...counter, ...start], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const collect = (c: Buffer) => (out = (out + c.toString()).slice(-100_000));
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  return {
    child,
    output: () => out,
    async stop() {
      // SIGTERM, so a --cpu-prof profile is written on the way out.
      if (child.exitCode === null && child.signalCode === null) {
        try {
          const hwm = /VmHWM:\s*(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1];
          console.log(`${start.join(' ')}: peak RSS ${Math.round(Number(hwm) / 1024)} MB`);
        } catch {
          /* gone */
        }
        child.kill('SIGTERM');
      }
      await exited;
      process.off('exit', kill);
    },
  };
}

/** The bench's workspace, made by the CLI's `bootstrap` against the service's database. */
export async function bootstrapBenchWorkspace(
  env: Record<string, string>,
  email = 'owner@example.com',
): Promise<{ apiKey: string; workspaceId: string; accountUuid: string; memberId: number }> {
  const out = await runToCompletion(
    'src/cli.ts',
    ['bootstrap', '--workspace', 'Bench', '--email', email, '--json'],
    { ...env, LOG_LEVEL: 'warn' },
    120_000,
  );
  return JSON.parse(out.trim().split('\n').pop()!) as {
    apiKey: string;
    workspaceId: string;
    accountUuid: string;
    memberId: number;
  };
}

export async function startService(env: Record<string, string>): Promise<{ proc: Service; port: number }> {
  const port = await freePort();
  const proc = spawnMain({ ...env, ROLE: 'all', PORT: String(port), HOST });
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`service exited:\n${proc.output().slice(-3000)}`);
    const up = await fetch(`http://${HOST}:${port}/api/v2/health`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (up) return { proc, port };
    if (Date.now() > deadline) throw new Error(`service did not start:\n${proc.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * dist/worker.js as `start:worker` runs it (ROLE=worker: projections, reactors, queue workers, no HTTP) in a child
 * process beside a service started by startService; resolves once it has started.
 */
export async function startWorkerProcess(env: Record<string, string>): Promise<Service> {
  const proc = spawnMain({ ...env, ROLE: 'worker', LOG_LEVEL: 'info' }, 'start:worker');
  const deadline = Date.now() + 120_000;
  while (!proc.output().includes('"worker started"')) {
    if (proc.child.exitCode !== null) throw new Error(`worker exited:\n${proc.output().slice(-3000)}`);
    if (Date.now() > deadline) throw new Error(`worker did not start:\n${proc.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return proc;
}

/**
 * The statement counts the service's preloaded counter (bench/statement-counter.ts) kept
 * since the previous call, or undefined when counting is off.
 */
export async function statementCounts(
  service: Service,
  file: string | undefined,
): Promise<Record<string, number> | undefined> {
  if (!file) return undefined;
  rmSync(file, { force: true });
  service.child.kill('SIGUSR2');
  for (const deadline = Date.now() + 5000; !existsSync(file); await new Promise((r) => setTimeout(r, 10)))
    if (Date.now() > deadline) throw new Error('the statement counter did not answer');
  await new Promise((r) => setTimeout(r, 10));
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, number>;
}

type Case = {
  key: string;
  name: string;
  baseline: 'bare' | 'public';
  target: number;
  expect: number;
  next: (i: number) => LoadRequest;
};

export async function run(): Promise<void> {
  const db = await createTestDatabase();
  const prefix = testRedisPrefix();
  const pool = new Pool({ connectionString: db.url, max: 10, application_name: 'bench-bare' });
  const env = {
    DATABASE_URL: db.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: prefix,
    NODE_ENV: 'production',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '1000000',
    RATE_LIMIT_CONCURRENCY: '10000',
  };
  const countsFile =
    process.env.BENCH_HTTP_COUNT_STATEMENTS === '1'
      ? join(tmpdir(), `bench-statements-${prefix}.json`)
      : undefined;
  const serviceEnv: Record<string, string> = countsFile
    ? { ...env, BENCH_STATEMENT_COUNTS_FILE: countsFile }
    : env;
  let service: Service | undefined;
  let bare: Server | undefined;
  const started = Date.now();
  try {
    const bareServer = await startBareServer(pool);
    bare = bareServer.server;
    const svc = await startService(serviceEnv);
    service = svc.proc;
    const { apiKey, workspaceId } = await bootstrapBenchWorkspace(env);
    const auth = { authorization: `Bearer ${apiKey}` };
    const api = new LoadClient(HOST, svc.port, CONNECTIONS);
    const bareClient = new LoadClient(HOST, bareServer.port, CONNECTIONS);

    // Members to list and to update: one import of MEMBERS contacts.
    const tag = Date.now().toString(36);
    const imported = await api.send({
      method: 'POST',
      path: `/api/v2/w/${workspaceId}/members/import`,
      headers: auth,
      body: JSON.stringify({
        members: Array.from({ length: MEMBERS }, (_, i) => ({ email: `m${i}-${tag}@example.com` })),
      }),
    });
    if (imported.status !== 200) throw new Error(`import: HTTP ${imported.status} ${imported.body}`);
    const { rows } = await pool.query<{ id: number }>(
      `SELECT id FROM members WHERE workspace_id = $1 AND account_uuid IS NULL ORDER BY id`,
      [workspaceId],
    );
    const memberIds = rows.map((r) => r.id);
    if (memberIds.length !== MEMBERS)
      throw new Error(`expected ${MEMBERS} members, found ${memberIds.length}`);
    const list = await api.send({ method: 'GET', path: `/api/v2/w/${workspaceId}/members`, headers: auth });
    const listed = (JSON.parse(list.body) as { items: unknown[] }).items.length;
    if (listed !== 50) throw new Error(`the member list returned ${listed} items, not 50`);

    const environment = await describeEnvironment(pool);
    console.log(
      `database ${db.name}; ${CONNECTIONS} connections x ${SECONDS} s per case; ${JSON.stringify(environment)}`,
    );

    let writes = 0;
    const cases: Case[] = [
      {
        key: 'get-workspace',
        name: 'GET /w/{wid} (API key)',
        baseline: 'public',
        target: 0.6,
        expect: 200,
        next: () => ({ method: 'GET', path: `/api/v2/w/${workspaceId}`, headers: auth }),
      },
      {
        key: 'list-members',
        name: 'GET /w/{wid}/members (50 items)',
        baseline: 'public',
        target: 0.4,
        expect: 200,
        next: () => ({ method: 'GET', path: `/api/v2/w/${workspaceId}/members`, headers: auth }),
      },
      {
        key: 'create-signup',
        name: 'POST /w/{wid}/create-signup (new email)',
        baseline: 'bare',
        target: 0.2,
        expect: 201,
        next: () => ({
          method: 'POST',
          path: `/api/v2/w/${workspaceId}/create-signup`,
          headers: auth,
          body: JSON.stringify({ member: { email: `s${writes++}-${tag}@example.com`, name: 'Bench' } }),
        }),
      },
      {
        key: 'put-member',
        name: 'PUT /w/{wid}/members/{id}',
        baseline: 'bare',
        target: 0.3,
        expect: 200,
        next: () => {
          const n = writes++;
          return {
            method: 'PUT',
            path: `/api/v2/w/${workspaceId}/members/${memberIds[n % memberIds.length]}`,
            headers: auth,
            body: JSON.stringify({ name: `Name ${n}` }),
          };
        },
      },
    ];
    const wanted = process.env.BENCH_HTTP_CASES?.split(',').map((s) => s.trim());
    const selected = wanted ? cases.filter((c) => wanted.includes(c.key)) : cases;
    if (!selected.length) throw new Error(`BENCH_HTTP_CASES: none of ${cases.map((c) => c.key).join(', ')}`);

    const baselines = {
      public: {
        name: 'baseline: public GET /resources/registry',
        client: api,
        expect: 200,
        next: (): LoadRequest => ({ method: 'GET', path: '/api/v2/resources/registry' }),
      },
      bare: {
        name: 'baseline: bare node:http + 1 INSERT',
        client: bareClient,
        expect: 201,
        next: (i: number): LoadRequest => ({
          method: 'POST',
          path: '/',
          body: JSON.stringify({ member: { email: `b${i}@example.com`, name: 'Bench' } }),
        }),
      },
    };

    const results: CaseResult[] = [];
    for (const c of selected) {
      const b = baselines[c.baseline];
      await b.client.run(CONNECTIONS, WARMUP_SECONDS, b.expect, b.next);
      await api.run(CONNECTIONS, WARMUP_SECONDS, c.expect, c.next);
      let base = EMPTY;
      let measured = EMPTY;
      const slice = SECONDS / 2;
      base = merge(base, await b.client.run(CONNECTIONS, slice, b.expect, b.next));
      const before = await cpuSnapshot(pool, svc.proc.child.pid, db.name);
      await statementCounts(svc.proc, countsFile);
      measured = merge(measured, await api.run(CONNECTIONS, slice, c.expect, c.next));
      measured = merge(measured, await api.run(CONNECTIONS, slice, c.expect, c.next));
      const statements = await statementCounts(svc.proc, countsFile);
      const cpu = cpuBetween(before, await cpuSnapshot(pool, svc.proc.child.pid, db.name));
      base = merge(base, await b.client.run(CONNECTIONS, slice, b.expect, b.next));
      const baseResult = summarise(`  ${b.name}`, base);
      const result = summarise(c.name, measured, baseResult, c.target, cpu, statements);
      results.push(result, baseResult);
      console.log(`${c.name}: ${Math.round(result.requestsPerSecond)} req/s`);
      if (result.statements)
        console.log(
          `  ${result.statements.perRequest.toFixed(2)} statements per request: ${Object.entries(
            result.statements.byKind,
          )
            .filter(([, n]) => n >= 0.01)
            .map(([k, n]) => `${k} ${n}`)
            .join(', ')}`,
        );
    }

    // Read your writes: PUT then GET of the same member, one pair at a time.
    let inconsistent = 0;
    const pairs: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const id = memberIds[i % memberIds.length];
      const name = `Round ${i} ${tag}`;
      const t = performance.now();
      const put = await api.send({
        method: 'PUT',
        path: `/api/v2/w/${workspaceId}/members/${id}`,
        headers: auth,
        body: JSON.stringify({ name }),
      });
      const get = await api.send({
        method: 'GET',
        path: `/api/v2/w/${workspaceId}/members/${id}`,
        headers: auth,
      });
      pairs.push(performance.now() - t);
      if (
        put.status !== 200 ||
        get.status !== 200 ||
        (JSON.parse(get.body) as { name?: string }).name !== name
      )
        inconsistent++;
    }
    pairs.sort((x, y) => x - y);
    const consistency = {
      rounds: ROUNDS,
      inconsistent,
      pairP50Ms: percentile(pairs, 50),
      pairP99Ms: percentile(pairs, 99),
    };

    const fmt = (n: number) => (Number.isNaN(n) ? '-' : n.toFixed(2));
    printTable(
      ['case', 'req/s', 'p50 ms', 'p99 ms', 'vs baseline', 'target', 'CPU ms/req: service, pg', 'unexpected'],
      results.map((r) => [
        r.case,
        Math.round(r.requestsPerSecond).toLocaleString('en-US'),
        fmt(r.p50Ms),
        fmt(r.p99Ms),
        r.ratio === null ? '' : `${r.ratio.toFixed(2)}x`,
        r.target === null ? '' : `>= ${r.target}x ${r.ratio! >= r.target ? 'ok' : 'MISSED'}`,
        r.serviceCpuMs === null ? '' : `${r.serviceCpuMs.toFixed(2)}, ${r.postgresCpuMs!.toFixed(2)}`,
        Object.entries(r.unexpected)
          .map(([s, n]) => `${n}x${s}`)
          .join(' '),
      ]),
    );
    console.log(
      `read-your-writes: ${ROUNDS} PUT-then-GET rounds, ${inconsistent} inconsistent; pair p50 ${fmt(
        consistency.pairP50Ms,
      )} ms, p99 ${fmt(consistency.pairP99Ms)} ms`,
    );
    console.log(`${((Date.now() - started) / 1000).toFixed(1)} s`);
    writeResults('http', {
      environment,
      seconds: SECONDS,
      connections: CONNECTIONS,
      members: MEMBERS,
      results,
      consistency,
    });
    api.close();
    bareClient.close();
    if (inconsistent > 0) throw new Error(`${inconsistent} of ${ROUNDS} reads did not see their write`);
  } finally {
    await service?.stop();
    await new Promise<void>((resolve) => (bare ? bare.close(() => resolve()) : resolve()));
    await pool.end();
    if (countsFile) rmSync(countsFile, { force: true });
    await clearRedisPrefix(prefix);
    await db.drop();
  }
}
