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
 * Targets (issue): throughput >= 0.3x the baseline; latency p50 < 50 ms.
 * Writes bench-results/webhooks-<timestamp>.json.
 */
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Pool } from 'pg';
import { Agent, request } from 'undici';
import { v7 as uuidv7 } from 'uuid';
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
}> {
  const arrivals = new Map<string, Arrival>();
  let posts = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      posts++;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
      if (req.headers['x-bench-baseline']) return;
      const raw = Buffer.concat(chunks);
      const id = (JSON.parse(raw.toString('utf8')) as { eventId: string }).eventId;
      if (!arrivals.has(id)) arrivals.set(id, { at, raw, headers: req.headers as Record<string, string> });
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  const port = (server.address() as { port: number }).port;
  return { server, url: `http://${HOST}:${port}/hook`, arrivals, posts: () => posts };
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
        signingSecret: 'whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3',
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
