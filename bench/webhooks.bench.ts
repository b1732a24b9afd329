/**
 * Webhook delivery throughput and latency, side by side with a baseline in one run.
 *
 * The service runs as a child process (dist/main.js, ROLE=all, http receivers allowed) on a
 * scratch database; one event rule (member:updated, signed) points at a node:http receiver
 * in this process that answers 200 at once and notes when each event first arrives.
 *   1. throughput: BENCH_WEBHOOK_EVENTS (10,000) MemberUpdated events appended to the store
 *      in batches of 100, timed from the first append to the last event's 2xx;
 *   2. baseline: a loop here POSTing the very bodies and signed headers the receiver got,
 *      to the same receiver, at the same concurrency (BENCH_WEBHOOK_CONCURRENCY, which is
 *      also the service's WEBHOOK_RULE_CONCURRENCY: POSTs in flight to the receiver; its
 *      WEBHOOK_CONCURRENCY, jobs in progress, is BENCH_WEBHOOK_JOBS, twice that by default),
 *      over a keep-alive undici Agent;
 *   3. latency: BENCH_WEBHOOK_RATE (50) events per second, one append each, for
 *      BENCH_WEBHOOK_LATENCY_SECONDS (10) s; event-to-delivery is the append's start to
 *      the receiver's arrival (one clock: both in this process).
 * Beside the rates: CPU ms per delivery of the service's processes, Redis and the database's
 * backends over phase 1, and of this process (loop and receiver) over phase 2.
 * BENCH_WEBHOOK_WORKERS=n adds n ROLE=worker processes (dist/worker.js): scale-out, shown
 * beside the one-process figure the target is read against.
 * BENCH_WEBHOOK_COUNT_STATEMENTS=1 preloads bench/statement-counter.ts into the service
 * (with Redis commands) and prints its statements over the throughput phase.
 * BENCH_WEBHOOK_FLOOR=1 adds a reference line after the baseline: the floor of one BullMQ job
 * per delivery, a child process holding only a Queue (addBulk of 100 with the service's job
 * ids and options) and a Worker (the service's WEBHOOK_CONCURRENCY jobs, at most
 * WEBHOOK_RULE_CONCURRENCY POSTs in flight) that signs each body as the service does and
 * POSTs it to the same receiver: no event store, reactor, log or projections
 * (BENCH_WEBHOOK_FLOOR_NODE_ARGS: node flags for it, e.g. --cpu-prof).
 * Targets (issue): throughput >= 0.3x the baseline; latency p50 < 50 ms.
 * Writes bench-results/webhooks-<timestamp>.json.
 */
import { ChildProcess, fork } from 'node:child_process';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Pool } from 'pg';
import { Agent, request } from 'undici';
import { v7 as uuidv7 } from 'uuid';
import { Queue, Worker } from 'bullmq';
import { DEFAULT_JOB_OPTIONS, jobIdFor } from '../src/core/reactors/reactor';
import { bullConnection } from '../src/core/redis/redis';
import { signatureHeaders } from '../src/modules/automation/domain/signature';
import type { NewEvent } from '../src/core/event-store/event-store.port';
import { PostgresEventStore } from '../src/core/event-store/postgres/postgres-event-store';
import { createTestDatabase } from '../test/support/database';
import { clearRedisPrefix, TEST_REDIS_URL, testRedisPrefix } from '../test/support/redis';
import Redis from 'ioredis';
import {
  bootstrapBenchWorkspace,
  cpuBetween,
  cpuMsOf,
  cpuSnapshot,
  Service,
  startService,
  startWorkerProcess,
  statementCounts,
} from './http.bench';
import { percentile } from './http-load';
import { describeEnvironment, printTable, writeResults } from './report';

const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 10_000);
const CONCURRENCY = Number(process.env.BENCH_WEBHOOK_CONCURRENCY ?? 32);
/** The service's WEBHOOK_CONCURRENCY: jobs in progress, of which CONCURRENCY POST at once. */
const JOBS = Number(process.env.BENCH_WEBHOOK_JOBS ?? 2 * CONCURRENCY);
const RATE = Number(process.env.BENCH_WEBHOOK_RATE ?? 50);
const LATENCY_SECONDS = Number(process.env.BENCH_WEBHOOK_LATENCY_SECONDS ?? 10);
/** Extra ROLE=worker processes beside the service (0: the one ROLE=all process does everything). */
const WORKERS = Number(process.env.BENCH_WEBHOOK_WORKERS ?? 0);
/** The floor's reference line (one BullMQ job per delivery and the signed POST, nothing else). */
const FLOOR = process.env.BENCH_WEBHOOK_FLOOR === '1';
/** Round trips to PostgreSQL (and Redis commands) by kind over the throughput phase, per 10,000 deliveries. */
const COUNT_STATEMENTS = process.env.BENCH_WEBHOOK_COUNT_STATEMENTS === '1';
const SIGNING_SECRET = 'whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3';
const BATCH = 100;
const HOST = '127.0.0.1';

interface Arrival {
  at: number;
  raw: Buffer;
  headers: Record<string, string>;
}

/** The receiver: 200 at once; the first arrival of each event id, with its exact bytes and headers. */
async function startReceiver(): Promise<{
  server: Server;
  url: string;
  arrivals: Map<string, Arrival>;
  posts: () => number;
  floor: { posts: number; lastAt: number };
}> {
  const arrivals = new Map<string, Arrival>();
  let posts = 0;
  const floor = { posts: 0, lastAt: 0 };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      posts++;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
      if (req.headers['x-bench-baseline']) return;
      if (req.headers['x-bench-floor']) {
        floor.posts++;
        floor.lastAt = at;
        return;
      }
      const raw = Buffer.concat(chunks);
      const id = (JSON.parse(raw.toString('utf8')) as { eventId: string }).eventId;
      if (!arrivals.has(id)) arrivals.set(id, { at, raw, headers: req.headers as Record<string, string> });
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  const port = (server.address() as { port: number }).port;
  return { server, url: `http://${HOST}:${port}/hook`, arrivals, posts: () => posts, floor };
}

async function waitFor(what: string, done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export async function run(): Promise<void> {
  const db = await createTestDatabase();
  const prefix = testRedisPrefix();
  const pool = new Pool({ connectionString: db.url, max: 4, application_name: 'bench-webhooks' });
  const store = new PostgresEventStore({ connectionString: db.url, pool });
  const receiver = await startReceiver();
  const env = {
    DATABASE_URL: db.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: prefix,
    NODE_ENV: 'development',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '1000000',
    RATE_LIMIT_CONCURRENCY: '10000',
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    // The receiver sees at most CONCURRENCY POSTs at once from the service, as from the
    // baseline; the worker holds twice as many jobs, the others waiting on their log writes.
    WEBHOOK_CONCURRENCY: String(JOBS),
    WEBHOOK_RULE_CONCURRENCY: String(CONCURRENCY),
    ...(COUNT_STATEMENTS
      ? {
          BENCH_STATEMENT_COUNTS_FILE: join(tmpdir(), `webhooks-bench-statements-${process.pid}.json`),
          BENCH_STATEMENT_COUNTS_REDIS: '1',
        }
      : {}),
  };
  let service: Service | undefined;
  const workers: Service[] = [];
  const started = Date.now();
  try {
    const svc = await startService(env);
    service = svc.proc;
    const { apiKey, workspaceId, memberId } = await bootstrapBenchWorkspace(env);
    for (let i = 0; i < WORKERS; i++) workers.push(await startWorkerProcess(env));
    const rule = await fetch(`http://${HOST}:${svc.port}/api/v2/w/${workspaceId}/event-rules`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        trigger: 'member:updated',
        webhookUrl: receiver.url,
        signingSecret: SIGNING_SECRET,
      }),
    });
    if (rule.status !== 201)
      throw new Error(`rule: HTTP ${rule.status} ${await rule.text()} ${svc.proc.output().slice(-3000)}`);
    const environment = await describeEnvironment(pool);
    console.log(
      `database ${db.name}; concurrency ${CONCURRENCY}, jobs ${JOBS}; ${JSON.stringify(environment)}`,
    );

    const memberEvent = (n: number): NewEvent => {
      const now = new Date().toISOString();
      const member = {
        id: memberId,
        workspaceId,
        accountUuid: null,
        email: 'owner@example.com',
        phone: null,
        name: `Bench ${n}`,
        externalId: null,
        memberRoleId: 1,
        kind: 'human',
        status: 'active',
        notifySms: false,
        notifyEmail: true,
        notifyVoice: false,
        createdAt: now,
        updatedAt: now,
      };
      return {
        id: uuidv7(),
        type: 'MemberUpdated',
        data: { memberId, workspaceId, changes: { name: member.name }, member, updatedAt: now },
        metadata: {
          workspaceId,
          actor: { kind: 'system', id: 'bench' },
          correlationId: `bench-${n}`,
          occurredAt: now,
          schemaVersion: 1,
        },
      };
    };
    const stream = `member-${memberId}`;

    // CPU of the service's processes (utime + stime): a figure the machine's other load moves less than deliveries/s.
    const serviceCpuMs = () => [service!, ...workers].reduce((sum, p) => sum + cpuMsOf(p.child.pid!), 0);
    // Redis's and the database backends' too (Redis is shared: other work on it counts as well).
    const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 2 });
    const redisPid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1] ?? 0);
    redis.disconnect();
    const pgBefore = await cpuSnapshot(pool, undefined, db.name);
    const redis0 = redisPid ? cpuMsOf(redisPid) : 0;

    await statementCounts(service, env.BENCH_STATEMENT_COUNTS_FILE);
    // 1. Throughput: EVENTS events, first append to last 2xx.
    const cpu0 = serviceCpuMs();
    const t0 = performance.now();
    for (let i = 0; i < EVENTS; i += BATCH)
      await store.append(
        stream,
        Array.from({ length: Math.min(BATCH, EVENTS - i) }, (_, k) => memberEvent(i + k)),
      );
    const appendedAt = performance.now();
    // Where the time goes: when the reactor had matched (and queued) every event.
    let reactedAt = 0;
    const watch = setInterval(() => {
      void pool
        .query<{ n: string }>(
          `SELECT events_handled::text AS n FROM subscriber_checkpoints WHERE name = 'automation-webhooks'`,
        )
        .then(({ rows }) => {
          if (!reactedAt && Number(rows[0]?.n ?? 0) >= EVENTS) reactedAt = performance.now();
        });
    }, 50);
    await waitFor(`${EVENTS} deliveries`, () => receiver.arrivals.size >= EVENTS, 600_000);
    const serviceCpu = serviceCpuMs() - cpu0;
    const redisCpu = redisPid ? cpuMsOf(redisPid) - redis0 : 0;
    const pgCpu = cpuBetween(pgBefore, await cpuSnapshot(pool, undefined, db.name)).postgres;
    const counts = await statementCounts(service, env.BENCH_STATEMENT_COUNTS_FILE);
    clearInterval(watch);
    const lastArrival = Math.max(...[...receiver.arrivals.values()].map((a) => a.at));
    const serviceSeconds = (lastArrival - t0) / 1000;
    const delivered = [...receiver.arrivals.values()];

    // 2. Baseline: the same signed payloads, same receiver, same concurrency.
    const agent = new Agent({ connections: CONCURRENCY, keepAliveTimeout: 60_000 });
    let next = 0;
    let failures = 0;
    const benchCpu0 = process.cpuUsage();
    const b0 = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let i = next++; i < delivered.length; i = next++) {
          const d = delivered[i];
          const res = await request(receiver.url, {
            dispatcher: agent,
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'x-bench-baseline': '1',
              'webhook-id': d.headers['webhook-id'],
              'webhook-timestamp': d.headers['webhook-timestamp'],
              'webhook-signature': d.headers['webhook-signature'],
              'x-webhook-signature': d.headers['x-webhook-signature'],
            },
            body: d.raw,
          });
          await res.body.text();
          if (res.statusCode !== 200) failures++;
        }
      }),
    );
    const baselineSeconds = (performance.now() - b0) / 1000;
    const benchCpu = process.cpuUsage(benchCpu0);
    // The loop and the receiver share this process: an upper bound of the loop's own cost.
    const baselineCpu = (benchCpu.user + benchCpu.system) / 1000;
    await agent.close();
    if (failures) throw new Error(`baseline: ${failures} non-2xx`);

    // 2b. The floor (BENCH_WEBHOOK_FLOOR=1): the same bodies as one BullMQ job each, nothing else.
    const floor = FLOOR
      ? await runFloor(
          delivered.map((d) => d.raw.toString('utf8')),
          receiver,
          `${prefix}:floor`,
          redisPid,
        )
      : undefined;

    // 3. Latency at RATE events per second.
    const sentAt = new Map<string, number>();
    const total = RATE * LATENCY_SECONDS;
    const l0 = performance.now();
    for (let n = 0; n < total; n++) {
      const due = l0 + (n * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const event = memberEvent(EVENTS + n);
      sentAt.set(event.id!, performance.now());
      await store.append(stream, [event]);
    }
    await waitFor(
      `${total} paced deliveries`,
      () => [...sentAt.keys()].every((id) => receiver.arrivals.has(id)),
      120_000,
    );
    const latencies = [...sentAt].map(([id, at]) => receiver.arrivals.get(id)!.at - at).sort((a, b) => a - b);

    const serviceRate = EVENTS / serviceSeconds;
    const baselineRate = EVENTS / baselineSeconds;
    const ratio = serviceRate / baselineRate;
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    const fmt = (n: number) => n.toFixed(1);
    printTable(
      ['case', 'deliveries/s', 'seconds', 'p50 ms', 'p99 ms', 'vs baseline', 'target'],
      [
        [
          `service: ${EVENTS} events, first append to last 2xx`,
          Math.round(serviceRate).toLocaleString('en-US'),
          fmt(serviceSeconds),
          '',
          '',
          `${ratio.toFixed(2)}x`,
          `>= 0.3x ${ratio >= 0.3 ? 'ok' : 'MISSED'}`,
        ],
        [
          `baseline: the same ${EVENTS} signed POSTs`,
          Math.round(baselineRate).toLocaleString('en-US'),
          fmt(baselineSeconds),
          '',
          '',
          '',
          '',
        ],
        ...(floor
          ? [
              [
                'floor: one BullMQ job per delivery + the signed POST, nothing else',
                Math.round(EVENTS / floor.seconds).toLocaleString('en-US'),
                fmt(floor.seconds),
                '',
                '',
                `${(EVENTS / floor.seconds / baselineRate).toFixed(2)}x`,
                '',
              ],
            ]
          : []),
        [
          `event to delivery at ${RATE}/s (${total} events)`,
          '',
          '',
          fmt(p50),
          fmt(p99),
          '',
          `p50 < 50 ms ${p50 < 50 ? 'ok' : 'MISSED'}`,
        ],
      ],
    );
    console.log(
      `CPU per delivery: service ${(serviceCpu / EVENTS).toFixed(3)} ms (${WORKERS + 1} process(es)), Redis ${(redisCpu / EVENTS).toFixed(3)} ms, PostgreSQL backends ${(pgCpu / EVENTS).toFixed(3)} ms; baseline loop and receiver ${(baselineCpu / EVENTS).toFixed(3)} ms; load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    if (counts)
      console.log(
        `round trips over the throughput phase, per ${EVENTS}: ${Object.entries(counts)
          .sort((a, b) => b[1] - a[1])
          .map(([k, v]) => `${k} ${v}`)
          .join('; ')}`,
      );
    if (floor)
      console.log(
        `CPU per delivery, floor: its process ${(floor.cpuMs / EVENTS).toFixed(3)} ms, Redis ${(floor.redisCpuMs / EVENTS).toFixed(3)} ms`,
      );
    console.log(
      `appending ${EVENTS} took ${fmt((appendedAt - t0) / 1000)} s, the reactor had queued them all after ${reactedAt ? fmt((reactedAt - t0) / 1000) : '?'} s; the receiver got ${receiver.posts()} POSTs in all; ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    writeResults('webhooks', {
      environment,
      events: EVENTS,
      concurrency: CONCURRENCY,
      service: {
        seconds: serviceSeconds,
        perSecond: serviceRate,
        appendSeconds: (appendedAt - t0) / 1000,
        reactedSeconds: reactedAt ? (reactedAt - t0) / 1000 : null,
        processes: WORKERS + 1,
        cpuMsPerDelivery: serviceCpu / EVENTS,
        redisCpuMsPerDelivery: redisCpu / EVENTS,
        postgresCpuMsPerDelivery: pgCpu / EVENTS,
      },
      baseline: { seconds: baselineSeconds, perSecond: baselineRate, cpuMsPerPost: baselineCpu / EVENTS },
      ...(floor
        ? {
            floor: {
              seconds: floor.seconds,
              perSecond: EVENTS / floor.seconds,
              ratio: EVENTS / floor.seconds / baselineRate,
              cpuMsPerDelivery: floor.cpuMs / EVENTS,
              redisCpuMsPerDelivery: floor.redisCpuMs / EVENTS,
            },
          }
        : {}),
      loadAverage: loadavg(),
      ratio,
      latency: { rate: RATE, events: total, p50Ms: p50, p99Ms: p99 },
    });
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await service?.stop();
    await new Promise<void>((resolve) => receiver.server.close(() => resolve()));
    receiver.server.closeAllConnections();
    await store.close().catch(() => undefined);
    await pool.end().catch(() => undefined);
    await clearRedisPrefix(prefix);
    await db.drop();
  }
}

interface FloorJob {
  deliveryId: string;
  eventType: string;
  body: string;
}

/**
 * The floor's run: a child process (this file, BENCH_WEBHOOK_FLOOR_CHILD) holding the
 * bodies, timed from its first addBulk to the receiver's last floor POST; its CPU (utime +
 * stime, as the service's) and Redis's over that window.
 */
async function runFloor(
  bodies: string[],
  receiver: { url: string; floor: { posts: number; lastAt: number } },
  prefix: string,
  redisPid: number,
): Promise<{ seconds: number; cpuMs: number; redisCpuMs: number }> {
  const child: ChildProcess = fork(__filename, [], {
    execArgv: [
      '-r',
      '@swc-node/register',
      ...(process.env.BENCH_WEBHOOK_FLOOR_NODE_ARGS?.split(/\s+/).filter(Boolean) ?? []),
    ],
    env: {
      ...process.env,
      BENCH_WEBHOOK_FLOOR_CHILD: '1',
      BENCH_WEBHOOK_FLOOR_URL: receiver.url,
      BENCH_WEBHOOK_FLOOR_PREFIX: prefix,
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const next = (what: 'ready' | 'loaded') =>
      new Promise<void>((resolve, reject) => {
        const onMessage = (m: Record<string, unknown>) => {
          if (what in m) {
            child.off('message', onMessage);
            resolve();
          }
        };
        child.on('message', onMessage);
        child.once('exit', (code) => reject(new Error(`the floor's process exited (${code})`)));
      });
    await next('ready');
    // The jobs are made before the clock starts; it runs from the first addBulk.
    child.send({ bodies });
    await next('loaded');
    receiver.floor.posts = 0;
    const cpu0 = cpuMsOf(child.pid!);
    const redis0 = redisPid ? cpuMsOf(redisPid) : 0;
    const t0 = performance.now();
    child.send({ go: true });
    await waitFor(`${bodies.length} floor deliveries`, () => receiver.floor.posts >= bodies.length, 600_000);
    const seconds = (receiver.floor.lastAt - t0) / 1000;
    return {
      seconds,
      cpuMs: cpuMsOf(child.pid!) - cpu0,
      redisCpuMs: redisPid ? cpuMsOf(redisPid) - redis0 : 0,
    };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

/**
 * The floor's process: a Queue and a Worker with the service's connection settings, job
 * options and job ids, concurrency (jobs in progress, POSTs in flight) and signatures;
 * the bodies arrive before the clock starts and are queued in batches of 100, as the
 * reactor queues an event batch's deliveries.
 */
async function floorChild(): Promise<void> {
  const connection = bullConnection(TEST_REDIS_URL);
  const prefix = process.env.BENCH_WEBHOOK_FLOOR_PREFIX!;
  const url = new URL(process.env.BENCH_WEBHOOK_FLOOR_URL!);
  const agent = new Agent({ connections: 64, keepAliveTimeout: 10_000 });
  const queue = new Queue<FloorJob>('webhook-deliveries', {
    connection,
    prefix,
    defaultJobOptions: DEFAULT_JOB_OPTIONS,
  });
  // The service's WEBHOOK_RULE_CONCURRENCY: at most CONCURRENCY POSTs in flight, the others wait.
  let posting = 0;
  const waiting: (() => void)[] = [];
  const worker = new Worker<FloorJob>(
    'webhook-deliveries',
    async (job) => {
      if (posting >= CONCURRENCY) await new Promise<void>((resolve) => waiting.push(resolve));
      else posting++;
      try {
        const { deliveryId, eventType, body } = job.data;
        const timestamp = Math.floor(Date.now() / 1000);
        const res = await request(url, {
          dispatcher: agent,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent': 'workspace-service-webhooks/1',
            'x-webhook-event': eventType,
            'x-webhook-id': deliveryId,
            'webhook-id': deliveryId,
            'webhook-timestamp': String(timestamp),
            'x-bench-floor': '1',
            ...signatureHeaders([SIGNING_SECRET], deliveryId, timestamp, body),
          },
          body,
        });
        await res.body.dump();
        if (res.statusCode < 200 || res.statusCode >= 300) throw new Error(`HTTP ${res.statusCode}`);
      } finally {
        const next = waiting.shift();
        if (next) next();
        else posting--;
      }
    },
    {
      connection,
      prefix,
      concurrency: JOBS,
      lockDuration: 30_000,
      stalledInterval: 30_000,
      maxStalledCount: 2,
    },
  );
  await worker.waitUntilReady();
  await queue.waitUntilReady();
  let jobs: { name: string; data: FloorJob; opts: { jobId: string } }[] = [];
  process.on('message', (m: { bodies?: string[]; go?: true }) => {
    if (m.bodies) {
      jobs = m.bodies.map((body) => {
        const { eventId, event } = JSON.parse(body) as { eventId: string; event: string };
        return {
          name: 'deliver',
          data: { deliveryId: uuidv7(), eventType: event, body },
          opts: { jobId: jobIdFor({ id: eventId }, 'rule:floor') },
        };
      });
      process.send!({ loaded: true });
      return;
    }
    void (async () => {
      for (let i = 0; i < jobs.length; i += BATCH) await queue.addBulk(jobs.slice(i, i + BATCH));
    })();
  });
  process.once('SIGTERM', () => {
    void worker
      .close()
      .then(() => queue.close())
      .finally(() => process.exit(0));
  });
  process.send!({ ready: true });
}

if (require.main === module && process.env.BENCH_WEBHOOK_FLOOR_CHILD === '1') void floorChild();
