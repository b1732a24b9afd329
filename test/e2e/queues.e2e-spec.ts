import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import Redis from 'ioredis';
import { startTestApp, TestApp } from '../support/app';
import { eventually } from '../support/processes';
import { TEST_REDIS_URL } from '../support/redis';
import {
  SPINE_TEST_QUEUE,
  SpineTestModule,
  SpineTestProcessor,
  spineTestKeys,
} from '../support/spine-test.module';

const TOKEN = 'operator-token-for-tests-3f9a';

/** The board sits outside /api/v2. */
function boardUrl(t: TestApp, path = ''): string {
  return `${new URL(t.baseUrl).origin}/admin/queues${path}`;
}

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('queues (e2e)', () => {
  let all: TestApp;
  let api: TestApp;
  let redis: Redis;

  beforeAll(async () => {
    const env = { QUEUE_LOCK_DURATION_MS: '5000', QUEUE_STALLED_INTERVAL_MS: '2000' };
    [all, api] = await Promise.all([
      startTestApp({ env: { ...env, OPERATOR_TOKEN: TOKEN }, extraModules: [SpineTestModule] }),
      startTestApp({ env: { ...env, ROLE: 'api' }, extraModules: [SpineTestModule] }),
    ]);
    redis = new Redis(TEST_REDIS_URL);
  });
  afterAll(async () => {
    redis?.disconnect();
    await Promise.all([all?.close(), api?.close()]);
  });

  const queueOf = (t: TestApp) => t.app.get<Queue>(getQueueToken(SPINE_TEST_QUEUE), { strict: false });

  it('processes jobs where ROLE=all, with the configured lock and stalled settings and the shared job defaults', async () => {
    const processor = all.app.get(SpineTestProcessor, { strict: false });
    expect(processor).toBeInstanceOf(SpineTestProcessor);
    expect(processor.worker.opts).toMatchObject({
      lockDuration: 5000,
      stalledInterval: 2000,
      maxStalledCount: 2,
      prefix: all.config.redisPrefix,
    });

    const job = await queueOf(all).add('probe', {}, { jobId: 'probe-1' });
    expect(job.opts).toMatchObject({
      attempts: 8,
      backoff: { type: 'exponential', delay: 1000 },
      removeOnFail: false,
    });
    await eventually(async () => (await job.getState()) === 'completed', 'the job to complete');
    // The queue's keys live under the app's prefix, never under another file's.
    expect(await redis.exists(`${all.config.redisPrefix}:${SPINE_TEST_QUEUE}:probe-1`)).toBe(1);
  });

  it('never consumes where ROLE=api: no processor, jobs stay waiting', async () => {
    expect(api.app.get(SpineTestProcessor, { strict: false })).toBeNull();
    const job = await queueOf(api).add('probe', {}, { jobId: 'probe-api' });
    await new Promise((r) => setTimeout(r, 1500));
    expect(await job.getState()).toBe('waiting');
    expect(await redis.llen(spineTestKeys(api.config.redisPrefix).starts)).toBe(0);
  });

  it('the board is a 404 when OPERATOR_TOKEN is unset', async () => {
    for (const path of ['', '/', '/api/queues']) {
      const res = await fetch(boardUrl(api, path), { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.status).toBe(404);
    }
  });

  it('refuses the board without the operator token, with 401 {detail} and a browser challenge', async () => {
    const attempts: [string, Record<string, string>][] = [
      ['', {}],
      ['/api/queues', {}],
      ['', { authorization: 'Bearer wrong-token' }],
      ['', { authorization: `Bearer ${TOKEN}x` }],
      ['', { authorization: basic('operator', 'wrong') }],
      ['', { authorization: TOKEN }],
      // Spellings the router decodes to a board route must not slip past the check.
      ['/api/%71ueues', {}],
      ['/static/../api/queues', {}],
    ];
    for (const [path, headers] of attempts) {
      const res = await fetch(boardUrl(all, path), { headers });
      expect({ path, headers, status: res.status }).toEqual({ path, headers, status: 401 });
      expect(res.headers.get('content-type')).toMatch(/json/);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/operator token/);
      expect(res.headers.get('www-authenticate')).toMatch(/Basic realm="queues"/);
      expect(res.headers.get('www-authenticate')).toMatch(/Bearer/);
    }
  });

  it('serves the board with the token as a bearer token or as the Basic password', async () => {
    const page = await fetch(boardUrl(all), { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/html/);
    const viaBasic = await fetch(boardUrl(all), { headers: { authorization: basic('anyone', TOKEN) } });
    expect(viaBasic.status).toBe(200);
    const list = await fetch(boardUrl(all, '/api/queues'), { headers: { authorization: basic('', TOKEN) } });
    expect(list.status).toBe(200);
    const body = (await list.json()) as { queues: { name: string; counts: Record<string, number> }[] };
    const queue = body.queues.find((q) => q.name === SPINE_TEST_QUEUE);
    expect(queue).toBeDefined();
    expect(queue!.counts).toMatchObject({
      waiting: expect.any(Number),
      active: expect.any(Number),
      failed: expect.any(Number),
      completed: expect.any(Number),
    });
  });

  it('lists a failed job and lets an operator retry it', async () => {
    const keys = spineTestKeys(all.config.redisPrefix);
    await redis.set(keys.fail('doomed-1'), '1');
    const job = await queueOf(all).add('probe', {}, { jobId: 'doomed-1', attempts: 1 });
    await eventually(async () => (await job.getState()) === 'failed', 'the job to fail');

    const auth = { authorization: `Bearer ${TOKEN}` };
    const failed = await fetch(boardUrl(all, `/api/queues?activeQueue=${SPINE_TEST_QUEUE}&status=failed`), {
      headers: auth,
    });
    const listed = (
      (await failed.json()) as { queues: { name: string; jobs: { id: string; failedReason: string }[] }[] }
    ).queues.find((q) => q.name === SPINE_TEST_QUEUE)!;
    expect(listed.jobs).toEqual([expect.objectContaining({ id: 'doomed-1', failedReason: 'told to fail' })]);

    await redis.del(keys.fail('doomed-1'));
    const retry = await fetch(boardUrl(all, `/api/queues/${SPINE_TEST_QUEUE}/doomed-1/retry`), {
      method: 'PUT',
      headers: auth,
    });
    expect(retry.status).toBe(204);
    await eventually(async () => (await job.getState()) === 'completed', 'the retried job to complete');
    expect(await redis.lrange(keys.runs, 0, -1)).toContain(`doomed-1 ${process.pid}`);
  });
});
