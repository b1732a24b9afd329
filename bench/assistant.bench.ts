/**
 * `npm run bench -- assistant`: BENCH_ASSISTANT_CHATS (200) members each text the
 * workspace number once (a signed Twilio inbound webhook, so each lands in a new `ai`
 * chat), against a local OpenAI-compatible server answering every call after a fixed
 * BENCH_ASSISTANT_MODEL_MS (50 ms). Measured from the first inbound webhook sent to the
 * last reply delivered at the local SMS peer (test/support/twilio-peer.ts), beside the
 * same number of model calls made in a bare loop (the same `openai` adapter) at the same
 * concurrency (BENCH_ASSISTANT_CONCURRENCY, 10: the service's ASSISTANT_CONCURRENCY).
 * The service runs as a child process (dist/main.js as `start:prod` runs it, ROLE=all) on a fresh database and
 * Redis prefix, with ASSISTANT_DEBOUNCE_MS=BENCH_ASSISTANT_DEBOUNCE_MS (0: the wait that
 * gathers a burst is a deliberate delay, not work; set it to see its cost). Rounds
 * alternate baseline / service (BENCH_ASSISTANT_ROUNDS, 3), each round with new members.
 * Target (issue 15): ≤ 1.5× the bare loop. Writes bench-results/assistant-<timestamp>.json.
 * Each round also prints the service's CPU ms per chat (/proc), and with
 * BENCH_ASSISTANT_COUNT_STATEMENTS=1 its PostgreSQL round trips per chat by kind
 * (bench/statement-counter.ts preloaded), both from the round's first webhook until every
 * reply was delivered and the service went quiet; and, from the round's reply jobs as
 * BullMQ kept them, how long each held its worker slot (moved to active → finished: the
 * model call and the job's own work around it), how long jobs waited for a slot, and how
 * busy the ASSISTANT_CONCURRENCY slots were between the first job's start and the last's end.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Pool } from 'pg';
import { OpenAiLanguageModel } from '../src/modules/assistant/model/openai.model';
import { createTestDatabase } from '../test/support/database';
import { startOpenAiPeer } from '../test/support/openai-peer';
import { bullConnection } from '../src/core/redis/redis';
import { clearRedisPrefix, TEST_REDIS_URL, testRedisPrefix } from '../test/support/redis';
import { startTwilioPeer } from '../test/support/twilio-peer';
import {
  bootstrapBenchWorkspace,
  cpuBetween,
  cpuMsOf,
  cpuSnapshot,
  Service,
  startService,
  statementCounts,
} from './http.bench';
import { describeEnvironment, printTable, writeResults } from './report';

const CHATS = Number(process.env.BENCH_ASSISTANT_CHATS ?? 200);
const MODEL_MS = Number(process.env.BENCH_ASSISTANT_MODEL_MS ?? 50);
const CONCURRENCY = Number(process.env.BENCH_ASSISTANT_CONCURRENCY ?? 10);
const DEBOUNCE_MS = Number(process.env.BENCH_ASSISTANT_DEBOUNCE_MS ?? 0);
const ROUNDS = Number(process.env.BENCH_ASSISTANT_ROUNDS ?? 3);
const COUNT_STATEMENTS = process.env.BENCH_ASSISTANT_COUNT_STATEMENTS === '1';
const PUBLIC_BASE_URL = 'https://bench.example.test/api/v2';
const NUMBER = '+14155550999';

/** Runs `fn` over `items` with at most `limit` in flight. */
async function inParallel<T>(
  items: T[],
  limit: number,
  fn: (item: T, i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i], i);
      }
    }),
  );
}

const median = (values: number[]): number => {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

export async function run(): Promise<void> {
  const db = await createTestDatabase();
  const prefix = testRedisPrefix();
  const pool = new Pool({ connectionString: db.url, max: 2, application_name: 'bench-assistant' });
  const model = await startOpenAiPeer(MODEL_MS);
  model.script = () => ({ content: 'Thanks, we will call you back today.' });
  const twilio = await startTwilioPeer();
  const env = {
    DATABASE_URL: db.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: prefix,
    NODE_ENV: 'production',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'silent',
    RATE_LIMIT_PER_MINUTE: '1000000',
    RATE_LIMIT_CONCURRENCY: '10000',
    PUBLIC_BASE_URL,
    SMS_PROVIDER: 'twilio',
    TWILIO_ACCOUNT_SID: twilio.accountSid,
    TWILIO_AUTH_TOKEN: twilio.authToken,
    TWILIO_API_BASE_URL: twilio.url,
    ASSISTANT_PROVIDER: 'openai',
    OPENAI_BASE_URL: model.url,
    ASSISTANT_MODEL: 'bench-model',
    ASSISTANT_CONCURRENCY: String(CONCURRENCY),
    ASSISTANT_DEBOUNCE_MS: String(DEBOUNCE_MS),
    ...(COUNT_STATEMENTS
      ? { BENCH_STATEMENT_COUNTS_FILE: join(tmpdir(), `assistant-bench-statements-${process.pid}.json`) }
      : {}),
  };
  let service: Service | undefined;
  const replies = new Queue('assistant', { connection: bullConnection(TEST_REDIS_URL), prefix });
  try {
    const svc = await startService(env);
    service = svc.proc;
    const base = `http://127.0.0.1:${svc.port}/api/v2`;
    const { apiKey, workspaceId } = await bootstrapBenchWorkspace(env);
    const api = async (method: string, path: string, body: unknown) => {
      const res = await fetch(`${base}/w/${workspaceId}${path}`, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<Record<string, unknown>>;
    };
    await api('POST', '/phone-numbers', { number: NUMBER });
    const environment = await describeEnvironment(pool);
    console.log(
      `database ${db.name}; ${CHATS} chats, model ${MODEL_MS} ms, concurrency ${CONCURRENCY}, debounce ${DEBOUNCE_MS} ms; ${JSON.stringify(environment)}`,
    );

    const bareModel = new OpenAiLanguageModel({
      baseUrl: model.url,
      apiKey: undefined,
      defaultModel: 'bench-model',
      timeoutMs: 60_000,
    });
    const bare = async (): Promise<number> => {
      const started = performance.now();
      await inParallel(
        Array.from({ length: CHATS }, (_, i) => i),
        CONCURRENCY,
        async (i) => {
          await bareModel.complete({
            messages: [
              { role: 'system', content: 'You are the assistant of this workspace.' },
              { role: 'user', content: `Please call me back (${i})` },
            ],
          });
        },
      );
      return performance.now() - started;
    };

    let round = 0;
    const lagP50: number[] = [];
    const lagP95: number[] = [];
    const inboundMs: number[] = [];
    const cpuPerChat: number[] = [];
    const pgCpuPerChat: number[] = [];
    const cpuNow = () => cpuSnapshot(pool, svc.proc.child.pid, db.name, 'bench-assistant');
    const statementsPerChat: number[] = [];
    const slotHoldP50: number[] = [];
    const slotBusy: number[] = [];
    /** The round's reply jobs as BullMQ kept them: slot hold and wait per job, slot use overall. */
    const slots = async (since: number) => {
      const jobs = (await replies.getJobs(['completed'], 0, -1)).filter(
        (j) => j.timestamp >= since && j.processedOn && j.finishedOn,
      );
      if (!jobs.length) return undefined;
      const hold = jobs.map((j) => j.finishedOn! - j.processedOn!).sort((a, b) => a - b);
      const wait = jobs.map((j) => j.processedOn! - j.timestamp).sort((a, b) => a - b);
      const at = (xs: number[], q: number) => xs[Math.min(xs.length - 1, Math.floor(xs.length * q))];
      const span = Math.max(...jobs.map((j) => j.finishedOn!)) - Math.min(...jobs.map((j) => j.processedOn!));
      const held = hold.reduce((a, b) => a + b, 0);
      return {
        jobs: jobs.length,
        holdP50: at(hold, 0.5),
        holdP90: at(hold, 0.9),
        holdMean: held / jobs.length,
        waitP50: at(wait, 0.5),
        busy: held / (CONCURRENCY * span),
        firstAdded: Math.min(...jobs.map((j) => j.timestamp)) - since,
        firstStarted: Math.min(...jobs.map((j) => j.processedOn!)) - since,
      };
    };
    /** Until the service used under 20 ms of CPU in 250 ms: its projections and reactors are done. */
    const quiet = async () => {
      for (let last = cpuMsOf(svc.proc.child.pid!), i = 0; i < 40; i++) {
        await new Promise((r) => setTimeout(r, 250));
        const now = cpuMsOf(svc.proc.child.pid!);
        if (now - last < 20) return;
        last = now;
      }
    };
    const viaService = async (): Promise<number> => {
      round++;
      const phones = Array.from(
        { length: CHATS },
        (_, i) => `+1650${String(round).padStart(2, '0')}${String(i).padStart(5, '0')}`,
      );
      await api('POST', '/members/import', {
        members: phones.map((phone, i) => ({ phone, name: `Member ${round}-${i}`, notifySms: true })),
      });
      const before = twilio.messages.length;
      const modelBefore = model.requests.length;
      // The import's own work (projections, reactors) must not count against the chats.
      await quiet();
      await statementCounts(svc.proc, env.BENCH_STATEMENT_COUNTS_FILE);
      const cpuBefore = cpuMsOf(svc.proc.child.pid!);
      const pgBefore = await cpuNow();
      const startedAt = Date.now();
      const started = performance.now();
      let inboundDone = 0;
      const answeredAt = new Map<string, number>();
      const repliedAt = new Map<string, number>();
      let firstModel = 0;
      let lastModel = 0;
      const sent = inParallel(phones, 32, async (phone, i) => {
        const res = await twilio.webhook(
          `${PUBLIC_BASE_URL}/providers/twilio/sms/inbound`,
          base,
          PUBLIC_BASE_URL,
          {
            AccountSid: twilio.accountSid,
            MessageSid: `SM-bench-${round}-${i}`,
            From: phone,
            To: NUMBER,
            Body: `Please call me back (${i})`,
          },
        );
        answeredAt.set(phone, performance.now());
        if (res.status >= 300)
          throw new Error(`inbound: ${res.status} ${await res.text()}\n${svc.proc.output().slice(-4000)}`);
      }).then(() => (inboundDone = performance.now() - started));
      const deadline = Date.now() + 300_000;
      while (twilio.messages.length - before < CHATS) {
        if (Date.now() > deadline)
          throw new Error(`only ${twilio.messages.length - before} of ${CHATS} replies arrived`);
        for (const m of twilio.messages.slice(before + repliedAt.size))
          if (!repliedAt.has(m.to)) repliedAt.set(m.to, performance.now());
        const asked = model.requests.length - modelBefore;
        if (asked > 0 && !firstModel) firstModel = performance.now() - started;
        if (asked >= CHATS && !lastModel) lastModel = performance.now() - started;
        await new Promise((r) => setTimeout(r, 2));
      }
      const elapsed = performance.now() - started;
      await sent;
      for (const m of twilio.messages.slice(before + repliedAt.size))
        if (!repliedAt.has(m.to)) repliedAt.set(m.to, performance.now());
      const lags = phones
        .map((p) => (repliedAt.get(p) ?? NaN) - (answeredAt.get(p) ?? NaN))
        .sort((a, b) => a - b);
      lagP50.push(lags[Math.floor(lags.length / 2)]);
      lagP95.push(lags[Math.floor(lags.length * 0.95)]);
      inboundMs.push(inboundDone);
      // The work after the last delivery (delivery events' projections, summaries) is the chats' too.
      await quiet();
      cpuPerChat.push((cpuMsOf(svc.proc.child.pid!) - cpuBefore) / CHATS);
      pgCpuPerChat.push(cpuBetween(pgBefore, await cpuNow()).postgres / CHATS);
      const counts = await statementCounts(svc.proc, env.BENCH_STATEMENT_COUNTS_FILE);
      if (counts) {
        const total = Object.values(counts).reduce((a, b) => a + b, 0);
        statementsPerChat.push(total / CHATS);
        const top = Object.entries(counts)
          .sort((a, b) => b[1] - a[1])
          .map(([k, v]) => `${k} ${(v / CHATS).toFixed(2)}`)
          .join('; ');
        console.log(`round ${round}: ${(total / CHATS).toFixed(1)} statements per chat: ${top}`);
      }
      const slot = await slots(startedAt);
      if (slot) {
        slotHoldP50.push(slot.holdP50);
        slotBusy.push(slot.busy);
        console.log(
          `round ${round}: ${slot.jobs} reply jobs held their slot p50 ${slot.holdP50} ms, p90 ${slot.holdP90} ms, mean ${slot.holdMean.toFixed(1)} ms (model ${MODEL_MS} ms); waited for one p50 ${slot.waitP50} ms; the first added at ${slot.firstAdded} ms, started at ${slot.firstStarted} ms; the ${CONCURRENCY} slots ${(100 * slot.busy).toFixed(0)}% busy from the first job's start to the last's end`,
        );
      }
      console.log(
        `round ${round}: service CPU ${cpuPerChat.at(-1)!.toFixed(1)} ms, its PostgreSQL backends ${pgCpuPerChat.at(-1)!.toFixed(1)} ms per chat (until quiet after the last reply)`,
      );
      console.log(
        `round ${round}: reply after its inbound webhook's answer p50 ${lagP50.at(-1)!.toFixed(0)} ms, p95 ${lagP95.at(-1)!.toFixed(0)} ms; inbound webhooks answered by ${inboundDone.toFixed(0)} ms; model asked first at ${firstModel.toFixed(0)} ms, all ${CHATS} by ${lastModel.toFixed(0)} ms; last reply at the peer ${elapsed.toFixed(0)} ms`,
      );
      return elapsed;
    };

    // Warm-up: connections, JIT, the first queue jobs.
    await bare();
    const baseline: number[] = [];
    const measured: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      baseline.push(await bare());
      measured.push(await viaService());
    }
    const b = median(baseline);
    const s = median(measured);
    printTable(
      ['case', 'median ms', 'rounds ms', 'per chat ms', 'vs bare loop'],
      [
        [
          `bare loop: ${CHATS} model calls`,
          b.toFixed(0),
          baseline.map((x) => x.toFixed(0)).join(', '),
          (b / CHATS).toFixed(1),
          '1.00×',
        ],
        [
          `service: ${CHATS} inbound SMS → replies at the peer`,
          s.toFixed(0),
          measured.map((x) => x.toFixed(0)).join(', '),
          (s / CHATS).toFixed(1),
          `${(s / b).toFixed(2)}×`,
        ],
      ],
    );
    console.log(
      `service CPU per chat, median: ${median(cpuPerChat).toFixed(1)} ms; its PostgreSQL backends ${median(pgCpuPerChat).toFixed(1)} ms`,
    );
    console.log(`target ≤ 1.5×: ${s / b <= 1.5 ? 'met' : 'missed'}`);
    writeResults('assistant', {
      chats: CHATS,
      modelMs: MODEL_MS,
      concurrency: CONCURRENCY,
      debounceMs: DEBOUNCE_MS,
      environment,
      baselineMs: baseline,
      serviceMs: measured,
      ratio: s / b,
      inboundWebhooksMs: inboundMs,
      replyAfterInboundP50Ms: lagP50,
      replyAfterInboundP95Ms: lagP95,
      serviceCpuMsPerChat: cpuPerChat,
      postgresCpuMsPerChat: pgCpuPerChat,
      replySlotHoldP50Ms: slotHoldP50,
      replySlotsBusy: slotBusy,
      ...(statementsPerChat.length ? { statementsPerChat } : {}),
    });
  } finally {
    await service?.stop();
    await replies.close();
    await Promise.all([model.close(), twilio.close()]);
    await pool.end();
    await clearRedisPrefix(prefix);
    await db.drop();
  }
}
