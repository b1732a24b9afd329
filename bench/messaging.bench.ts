/**
 * `npm run bench -- messaging`: SMS delivery end to end against a local Twilio-compatible
 * peer (test/support/twilio-peer.ts, which answers Messages.json and posts each message's
 * signed `delivered` status callback right after), beside a baseline in the same run.
 *
 * The service runs as a child process (dist/main.js, ROLE=all, as the http bench runs it)
 * with SMS_PROVIDER=twilio pointed at the peer, on a fresh database and Redis prefix.
 * Setup (not timed): BENCH_MESSAGING_CHATS (1,000) members with a phone and SMS consent
 * (one import) and one phone-sms chat each.
 *
 * - service: one `POST .../send-assistant-message` into each chat at BENCH_MESSAGING_CONCURRENCY
 *   (16) connections, timed from the first request until the peer holds every message as
 *   delivered: its signed `delivered` status callback for each was accepted (2xx) by the
 *   service, which answers only once it has appended the status to the chat's stream (a
 *   committed write). That is the API, the event store, the reactor, the sms queue, the
 *   worker's REST call to the peer and the peer's status callback through the webhook.
 *   The time until every delivery also reads `delivered` in the read model (polled in the
 *   database every 20 ms) is printed beside it; a round fails if it never does.
 * - baseline: the same number of Messages.json requests (form, Basic auth, as the twilio
 *   package sends them) straight to the peer at the same concurrency, each with a status
 *   callback to a bare receiver in this process, timed until the peer had every callback
 *   accepted (2xx): the same end point as the service's.
 * Rounds alternate baseline / service (BENCH_ROUNDS, 2), each service round on new chats
 * of the same members. Target (issue 11): the service within 3× the baseline's time.
 * BENCH_HTTP_SERVICE_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) profiles the
 * service; CPU ms per message of the service process and of its PostgreSQL backends are
 * printed beside each service round (Linux /proc), and per round the CPU per message of Redis,
 * of this process (client, poll, peer) and of the whole machine (/proc/stat).
 * BENCH_MESSAGING_STATS=1 also prints how many status callbacks rode in their dispatch's
 * append; BENCH_MESSAGING_CALLBACKS=0 runs without status callbacks (what they cost);
 * BENCH_MESSAGING_WORKERS=n adds ROLE=worker processes. Writes bench-results/messaging-<timestamp>.json.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { createTestDatabase } from '../test/support/database';
import { clearRedisPrefix, TEST_REDIS_URL, testRedisPrefix } from '../test/support/redis';
import { startTwilioPeer, TwilioPeer } from '../test/support/twilio-peer';
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
import { LoadClient, LoadRequest, Response } from './http-load';
import { describeEnvironment, printTable, writeResults } from './report';

const CHATS = Number(process.env.BENCH_MESSAGING_CHATS ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_MESSAGING_CONCURRENCY ?? 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
/**
 * BENCH_MESSAGING_WORKERS=n: n ROLE=worker processes (dist/worker.js) beside the service
 * (scale-out: their delivery workers take SMS jobs too); their CPU is counted as the
 * service's. The target is read against the one-process figure.
 */
const WORKERS = Number(process.env.BENCH_MESSAGING_WORKERS ?? 0);
/**
 * BENCH_MESSAGING_CALLBACKS=0: the peer posts no status callbacks, and a service round ends
 * when every delivery has its provider id recorded (still `sent`): with a normal run, what
 * the callbacks cost. Not a run against the target.
 */
const CALLBACKS = process.env.BENCH_MESSAGING_CALLBACKS !== '0';
const HOST = '127.0.0.1';
/** BENCH_MESSAGING_STATS=1: print per-message transactions, scans and row writes by table (pg_stat_*). */
const STATS = process.env.BENCH_MESSAGING_STATS === '1';
/**
 * BENCH_MESSAGING_COUNT_STATEMENTS=1: print per message the service's PostgreSQL round trips
 * by kind (bench/statement-counter.ts preloaded), counted from the first send until a second
 * after the last delivery.
 */
const COUNT_STATEMENTS = process.env.BENCH_MESSAGING_COUNT_STATEMENTS === '1';
const PUBLIC_BASE_URL = 'https://bench.example.test/api/v2';
/** The measured case: until the peer holds every message as delivered (its callbacks accepted). */
const SERVICE_CASE = 'service (send → delivered at peer)';
const DISPATCHED_CASE = 'service (send → dispatched)';
const NUMBER = '+14155550999';

/** Sends every request of `requests` at `concurrency` loops; throws on an unexpected status. */
async function sendAll(
  client: LoadClient,
  requests: LoadRequest[],
  concurrency: number,
  expect: number,
): Promise<Response[]> {
  const out: Response[] = new Array(requests.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests.length) {
        const i = next++;
        const res = await client.send(requests[i]);
        if (res.status !== expect)
          throw new Error(
            `${requests[i].method} ${requests[i].path}: HTTP ${res.status} ${res.body.slice(0, 300)}`,
          );
        out[i] = res;
      }
    }),
  );
  return out;
}

/**
 * Resolves once `done()` holds, checked every 2 ms (an in-memory count: the end point of a
 * round is taken within a few milliseconds of the event, for the baseline and the service
 * alike); throws as soon as `failed()` returns a reason.
 */
async function waitForCount(
  what: string,
  done: () => boolean,
  failed: () => string | undefined,
  timeoutMs = 300_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reason = failed();
    if (reason) throw new Error(`${what}: ${reason}`);
    if (done()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

async function waitFor(
  what: string,
  done: () => Promise<boolean> | boolean,
  timeoutMs = 300_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface DbStats {
  commits: number;
  tables: Map<string, { scans: number; ins: number; upd: number; del: number }>;
}

/** Transactions committed in the database and per table scans and row writes (pg_stat_*), for statement counts. */
async function dbStats(pool: Pool): Promise<DbStats> {
  await new Promise((r) => setTimeout(r, 1200)); // backends flush their counters at most every second
  const db = await pool.query<{ commits: string }>(
    `SELECT xact_commit AS commits FROM pg_stat_database WHERE datname = current_database()`,
  );
  const t = await pool.query<{ relname: string; scans: string; ins: string; upd: string; del: string }>(
    `SELECT relname, coalesce(seq_scan, 0) + coalesce(idx_scan, 0) AS scans, n_tup_ins AS ins, n_tup_upd AS upd,
            n_tup_del AS del FROM pg_stat_user_tables`,
  );
  return {
    commits: Number(db.rows[0].commits),
    tables: new Map(
      t.rows.map((r) => [r.relname, { scans: +r.scans, ins: +r.ins, upd: +r.upd, del: +r.del }]),
    ),
  };
}

function printStatsDelta(before: DbStats, after: DbStats, per: number): void {
  console.log(`\nper message: ${((after.commits - before.commits) / per).toFixed(1)} transactions committed`);
  const rows: string[][] = [];
  for (const [name, a] of after.tables) {
    const b = before.tables.get(name) ?? { scans: 0, ins: 0, upd: 0, del: 0 };
    const d = [a.scans - b.scans, a.ins - b.ins, a.upd - b.upd, a.del - b.del];
    if (d.some((x) => x > 0)) rows.push([name, ...d.map((x) => (x / per).toFixed(2))]);
  }
  rows.sort((x, y) => Number(y[1]) - Number(x[1]));
  printTable(['table', 'scans', 'inserts', 'updates', 'deletes'], rows);
}

/** The pids of the processes named `name` (/proc/<pid>/comm), e.g. redis-server. */
function pidsNamed(name: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) out.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

interface MachineCpu {
  /** Busy CPU ms of the whole machine (every core, every process: /proc/stat). */
  busy: number;
  redis: number;
  /** This process: the bench's client, its polling and the Twilio peer. */
  bench: number;
  at: number;
}

/**
 * Where the rest of the machine's CPU goes during a round, beside the service and its
 * backends: Redis, this process (the load client, the poll and the peer, which answers each
 * send and posts its status callback) and the machine as a whole (other sessions included).
 */
function machineCpu(redisPids: number[]): MachineCpu {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: busy is all but idle and iowait.
  const tickMs = 10;
  const busy = (cpu[0] + cpu[1] + cpu[2] + cpu[5] + cpu[6] + cpu[7]) * tickMs;
  const own = process.cpuUsage();
  return {
    busy,
    redis: redisPids.reduce((a, pid) => a + cpuMsOf(pid), 0),
    bench: (own.user + own.system) / 1000,
    at: performance.now(),
  };
}

function machineBetween(a: MachineCpu, b: MachineCpu, per: number): string {
  const wall = b.at - a.at;
  const busy = b.busy - a.busy;
  return (
    `redis ${((b.redis - a.redis) / per).toFixed(2)}, bench+peer ${((b.bench - a.bench) / per).toFixed(2)}, ` +
    `machine ${(busy / per).toFixed(2)} ms/message; machine busy ${((100 * busy) / (wall * cpus().length)).toFixed(0)}% ` +
    `of ${cpus().length} cores`
  );
}

/** BENCH_MESSAGING_TOP=1: every process's CPU ms (/proc), to print a round's top consumers. */
const TOP = process.env.BENCH_MESSAGING_TOP === '1';

function everyProcess(): Map<number, { name: string; ms: number }> {
  const out = new Map<number, { name: string; ms: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const name = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').trim().slice(0, 70);
      out.set(Number(entry), {
        name: name || stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
        ms: cpuMsOf(Number(entry)),
      });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

function printTop(
  a: Map<number, { name: string; ms: number }>,
  b: Map<number, { name: string; ms: number }>,
  per: number,
): void {
  const rows = [...b]
    .map(([pid, p]) => ({ pid, name: p.name, ms: p.ms - (a.get(pid)?.ms ?? 0) }))
    .filter((r) => r.ms > 0)
    .sort((x, y) => y.ms - x.ms)
    .slice(0, 12);
  for (const r of rows)
    console.log(`  ${(r.ms / per).toFixed(2).padStart(6)} ms/message  ${r.pid} ${r.name}`);
}

/** A bare status-callback receiver: counts POSTs, answers 204. */
async function startReceiver(): Promise<{ server: Server; url: string; count: () => number }> {
  let count = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  const { port } = server.address() as { port: number };
  return { server, url: `http://${HOST}:${port}/status`, count: () => count };
}

export async function run(): Promise<void> {
  const db = await createTestDatabase();
  const prefix = testRedisPrefix();
  const pool = new Pool({ connectionString: db.url, max: 2, application_name: 'bench-messaging' });
  let peer: TwilioPeer | undefined;
  let service: Service | undefined;
  const workers: Service[] = [];
  let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
  try {
    peer = await startTwilioPeer();
    receiver = await startReceiver();
    const env = {
      DATABASE_URL: db.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: prefix,
      NODE_ENV: 'production',
      LOG_LEVEL: process.env.BENCH_SERVICE_LOG_LEVEL ?? 'silent',
      RATE_LIMIT_PER_MINUTE: '1000000',
      RATE_LIMIT_CONCURRENCY: '10000',
      // A shared 2-core machine can hold projections back past the 5 s default; a 404 from a
      // create's own read would end the run.
      READ_YOUR_WRITES_TIMEOUT_MS: '30000',
      SMS_PROVIDER: 'twilio',
      TWILIO_ACCOUNT_SID: peer.accountSid,
      TWILIO_AUTH_TOKEN: peer.authToken,
      TWILIO_API_BASE_URL: peer.url,
      PUBLIC_BASE_URL,
      ...(COUNT_STATEMENTS
        ? { BENCH_STATEMENT_COUNTS_FILE: join(tmpdir(), `messaging-bench-statements-${process.pid}.json`) }
        : {}),
    };
    const svc = await startService(env);
    service = svc.proc;
    for (let i = 0; i < WORKERS; i++) workers.push(await startWorkerProcess(env));
    const autoStatus: TwilioPeer['autoStatus'] = {
      status: 'delivered',
      appBaseUrl: `http://${HOST}:${svc.port}/api/v2`,
      publicBaseUrl: PUBLIC_BASE_URL,
    };
    peer.autoStatus = autoStatus;
    const { apiKey, workspaceId } = await bootstrapBenchWorkspace(env);
    const headers = { authorization: `Bearer ${apiKey}` };
    const api = new LoadClient(HOST, svc.port, CONCURRENCY);
    const w = `/api/v2/w/${workspaceId}`;

    // The key was created by the CLI's process: the service's projection may not have it yet.
    await waitFor(
      "the service's projection of the bootstrap key",
      async () => (await api.send({ method: 'GET', path: w, headers })).status === 200,
      60_000,
    );
    const phone = await api.send({
      method: 'POST',
      path: `${w}/phone-numbers`,
      headers,
      body: JSON.stringify({ number: NUMBER }),
    });
    if (phone.status !== 201) throw new Error(`phone number: HTTP ${phone.status} ${phone.body}`);
    const phoneNumberId = (JSON.parse(phone.body) as { id: number }).id;
    const imported = await api.send({
      method: 'POST',
      path: `${w}/members/import`,
      headers,
      body: JSON.stringify({
        members: Array.from({ length: CHATS }, (_, i) => ({
          phone: `+1415${String(2_000_000 + i).padStart(7, '0')}`,
          notifySms: true,
        })),
      }),
    });
    if (imported.status !== 200)
      throw new Error(`import: HTTP ${imported.status} ${imported.body.slice(0, 300)}`);
    const { rows } = await pool.query<{ id: number }>(
      `SELECT id FROM members WHERE workspace_id = $1 AND phone IS NOT NULL ORDER BY id`,
      [workspaceId],
    );
    if (rows.length !== CHATS)
      throw new Error(`expected ${CHATS} members with a phone, found ${rows.length}`);

    const peerAgent = new LoadClient(HOST, Number(new URL(peer.url).port), CONCURRENCY);
    const basic = `Basic ${Buffer.from(`${peer.accountSid}:${peer.authToken}`).toString('base64')}`;
    const results: {
      round: number;
      case: string;
      seconds: number;
      perSecond: number;
      cpuMs?: { service: number; postgres: number };
    }[] = [];
    const cpuNow = async () => {
      const snapshot = await cpuSnapshot(pool, svc.proc.child.pid, db.name, 'bench-messaging');
      for (const w of workers) snapshot.set('service', snapshot.get('service')! + cpuMsOf(w.child.pid!));
      return snapshot;
    };
    const redisPids = pidsNamed('redis-server');

    for (let round = 1; round <= ROUNDS; round++) {
      // Baseline: the same number of sends straight to the peer, until every callback was
      // accepted (the peer's count of 2xx answers, as for the service).
      const before = receiver.count();
      const baseAccepted = peer.callbacks;
      const baseRefused = peer.callbackFailures;
      const baseMachine = machineCpu(redisPids);
      const baseStart = performance.now();
      await sendAll(
        peerAgent,
        rows.map((_, i) => ({
          method: 'POST',
          path: `/2010-04-01/Accounts/${peer!.accountSid}/Messages.json`,
          headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            To: `+1415${String(2_000_000 + i).padStart(7, '0')}`,
            From: NUMBER,
            Body: `Baseline message ${round}-${i}`,
            StatusCallback: receiver!.url,
          }).toString(),
        })),
        CONCURRENCY,
        201,
      );
      await waitForCount(
        'the baseline callbacks',
        () => peer!.callbacks - baseAccepted >= CHATS,
        () => (peer!.callbackFailures > baseRefused ? 'a callback was refused' : undefined),
      );
      if (receiver.count() - before < CHATS) throw new Error('the receiver missed callbacks');
      const baseSeconds = (performance.now() - baseStart) / 1000;
      console.log(`round ${round} baseline: ${machineBetween(baseMachine, machineCpu(redisPids), CHATS)}`);
      results.push({
        round,
        case: 'baseline (peer direct)',
        seconds: baseSeconds,
        perSecond: CHATS / baseSeconds,
      });

      // The service: new chats (setup, not timed), then one assistant message into each.
      const chats = await sendAll(
        api,
        rows.map((r) => ({
          method: 'POST',
          path: `${w}/chats`,
          headers,
          body: JSON.stringify({ channel: 'phone-sms', memberId: r.id, phoneNumberId }),
        })),
        CONCURRENCY,
        201,
      );
      const chatIds = chats.map((c) => (JSON.parse(c.body) as { id: number }).id);
      const failuresBefore = peer.callbackFailures;
      const acceptedBefore = peer.callbacks;
      const statsBefore = STATS ? await dbStats(pool) : undefined;
      await statementCounts(svc.proc, env.BENCH_STATEMENT_COUNTS_FILE);
      const cpuBefore = await cpuNow();
      // The baseline's callbacks come from the peer whatever BENCH_MESSAGING_CALLBACKS says.
      peer.autoStatus = CALLBACKS ? autoStatus : undefined;
      const machineBefore = machineCpu(redisPids);
      const procsBefore = TOP ? everyProcess() : undefined;
      const start = performance.now();
      const sent = await sendAll(
        api,
        chatIds.map((id, i) => ({
          method: 'POST',
          path: `${w}/chats/${id}/send-assistant-message`,
          headers,
          body: JSON.stringify({ message: `Your appointment is confirmed (${round}-${i})` }),
        })),
        CONCURRENCY,
        201,
      );
      const apiSeconds = (performance.now() - start) / 1000;
      const messageIds = sent.map((s) => (JSON.parse(s.body) as { id: number }).id);
      // The end point (issue 11): every message is `delivered` at the peer, i.e. the
      // service accepted (2xx) the peer's `delivered` status callback of each, which it
      // answers only after appending it. Without callbacks: every provider id recorded.
      if (CALLBACKS)
        await waitForCount(
          'every delivered status callback to be accepted',
          () => peer!.callbacks - acceptedBefore >= CHATS,
          () =>
            peer!.callbackFailures > failuresBefore
              ? `${peer!.callbackFailures - failuresBefore} status callbacks were refused`
              : undefined,
        );
      const seconds = (performance.now() - start) / 1000;
      await waitFor(
        CALLBACKS
          ? 'every delivery to read delivered in the read model'
          : 'every delivery to be dispatched in the read model',
        async () => {
          const { rows: c } = await pool.query<{ delivered: string; failed: string }>(
            `SELECT count(*) FILTER (WHERE status = 'delivered' OR NOT $2 AND provider_message_id IS NOT NULL)
                    AS delivered,
                  count(*) FILTER (WHERE status = 'failed') AS failed
           FROM message_deliveries WHERE message_id = ANY($1::int[])`,
            [messageIds, CALLBACKS],
          );
          if (Number(c[0].failed) > 0) throw new Error(`${c[0].failed} deliveries failed`);
          return Number(c[0].delivered) >= CHATS;
        },
        // After the peer's end point the read model has 60 s to follow; without callbacks this is the round.
        CALLBACKS ? 60_000 : 300_000,
      );
      const readModelSeconds = (performance.now() - start) / 1000;
      peer.autoStatus = autoStatus;
      const machine = machineBetween(machineBefore, machineCpu(redisPids), CHATS);
      const cpu = cpuBetween(cpuBefore, await cpuNow());
      console.log(`round ${round} service: ${machine}`);
      if (procsBefore) printTop(procsBefore, everyProcess(), CHATS);
      if (statsBefore) {
        printStatsDelta(statsBefore, await dbStats(pool), CHATS);
        // How many status callbacks rode in their dispatch's append (one transaction).
        const { rows: rode } = await pool.query<{ rode: string; delivered: string }>(
          `SELECT count(*) FILTER (WHERE d.transaction_id = p.transaction_id) AS rode, count(*) AS delivered
           FROM events d JOIN events p ON p.stream_name = d.stream_name AND p.type = 'MessageDispatched'
             AND p.data->>'messageId' = d.data->>'messageId'
           WHERE d.type = 'MessageDelivered' AND d.stream_name = ANY($1::text[])`,
          [chatIds.map((id) => `chat-${id}`)],
        );
        console.log(`status callbacks recorded with their dispatch: ${rode[0].rode} of ${rode[0].delivered}`);
      } else if (COUNT_STATEMENTS) await new Promise((r) => setTimeout(r, 1000));
      const counts = await statementCounts(svc.proc, env.BENCH_STATEMENT_COUNTS_FILE);
      if (counts) {
        const total = Object.values(counts).reduce((a, b) => a + b, 0);
        const top = Object.entries(counts)
          .sort((a, b) => b[1] - a[1])
          .map(([k, v]) => `${k} ${(v / CHATS).toFixed(2)}`)
          .join('; ');
        console.log(`\nround ${round}: ${(total / CHATS).toFixed(1)} statements per message: ${top}`);
      }
      if (peer.callbackFailures > failuresBefore)
        throw new Error(`${peer.callbackFailures - failuresBefore} status callbacks were refused`);
      results.push({
        round,
        case: CALLBACKS ? SERVICE_CASE : DISPATCHED_CASE,
        seconds: CALLBACKS ? seconds : readModelSeconds,
        perSecond: CHATS / (CALLBACKS ? seconds : readModelSeconds),
        cpuMs: { service: cpu.service / CHATS, postgres: cpu.postgres / CHATS },
      });
      if (CALLBACKS)
        results.push({
          round,
          case: '  read model all delivered',
          seconds: readModelSeconds,
          perSecond: CHATS / readModelSeconds,
        });
      results.push({
        round,
        case: '  of which the API answers',
        seconds: apiSeconds,
        perSecond: CHATS / apiSeconds,
      });
    }
    api.close();
    peerAgent.close();

    const sum = (name: string) => results.filter((r) => r.case === name).reduce((a, r) => a + r.seconds, 0);
    const ratio = sum(CALLBACKS ? SERVICE_CASE : DISPATCHED_CASE) / sum('baseline (peer direct)');
    const met = CALLBACKS && ratio <= 3;
    printTable(
      ['round', 'case', 'seconds', 'per second', 'CPU ms/message: service, pg'],
      results.map((r) => [
        String(r.round),
        r.case,
        r.seconds.toFixed(2),
        r.perSecond.toFixed(0),
        r.cpuMs ? `${r.cpuMs.service.toFixed(2)}, ${r.cpuMs.postgres.toFixed(2)}` : '',
      ]),
    );
    console.log(
      `\n${CHATS} SMS at ${CONCURRENCY} connections: service ${ratio.toFixed(2)}× the baseline's time (target ≤ 3×) ${CALLBACKS ? (met ? 'MET' : 'MISSED') : 'not measured: no status callbacks'}`,
    );
    writeResults('messaging', {
      chats: CHATS,
      concurrency: CONCURRENCY,
      rounds: ROUNDS,
      results,
      ratio,
      target: 3,
      callbacks: CALLBACKS,
      met,
      environment: await describeEnvironment(pool),
    });
  } catch (err) {
    if (service) console.error(`service output (last lines):\n${service.output().slice(-4000)}`);
    throw err;
  } finally {
    for (const w of workers) await w.stop();
    await service?.stop();
    await peer?.close();
    await new Promise<void>((resolve) => (receiver ? receiver.server.close(() => resolve()) : resolve()));
    await pool.end();
    await clearRedisPrefix(prefix);
    await db.drop();
  }
}
