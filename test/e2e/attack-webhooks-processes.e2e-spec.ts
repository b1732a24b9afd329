import { startTestApp, TestApp } from '../support/app';
import { eventually, ServiceProcess, startWorkerProcess } from '../support/processes';
import { startReceiver, WebhookReceiver } from '../support/webhook-receiver';

/**
 * A worker killed while a delivery's first attempt hangs (so far logged only as pending,
 * with no attempt: the first attempt's record was to be written with its row). Another
 * worker sends it again under the same webhook-id and the log keeps one row for it, which
 * ends succeeded.
 */
describe('attack: webhook worker killed mid-delivery (e2e)', () => {
  let t: TestApp;
  let rx: WebhookReceiver;
  const workers: ServiceProcess[] = [];
  const webhookEnv = {
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_RETRY_DELAYS_MS: '100,200,400',
    WEBHOOK_TIMEOUT_MS: '20000',
  };

  beforeAll(async () => {
    rx = await startReceiver();
    t = await startTestApp({ env: { ...webhookEnv, ROLE: 'api' } });
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.kill('SIGKILL')));
    await rx.close();
    await t.close();
  });

  async function startWorker(name: string): Promise<ServiceProcess> {
    const w = await startWorkerProcess(t, name, { ...webhookEnv });
    workers.push(w);
    return w;
  }

  it('resends a delivery listed pending under the same webhook-id and logs it once, succeeded', async () => {
    const first = await startWorker('worker-a');
    const { workspaceId, apiKey, memberId } = await t.bootstrap('Killed');
    const secret = 'killed-worker-signing-secret-01';
    const rule = await t.request('POST', `/w/${workspaceId}/event-rules`, {
      token: apiKey,
      body: { trigger: 'member:updated', webhookUrl: rx.url, signingSecret: secret },
    });
    expect(rule.status).toBe(201);
    const logs = async (q = '') =>
      (await t.request('GET', `/w/${workspaceId}/webhook-logs${q}`, { token: apiKey })).body;
    rx.reply = (r) => (r.n === 1 ? 'hang' : { status: 200 });
    await t.request('PUT', `/w/${workspaceId}/members/${memberId}`, {
      token: apiKey,
      body: { name: 'Held' },
    });
    const [held] = await rx.waitFor(1, 30_000);
    // Past a second in flight: listed pending, no attempt yet, headers of none.
    const listed = await eventually(async () => (await logs('?status=pending')).items[0], 'pending row');
    expect(listed).toMatchObject({ id: held.headers['webhook-id'], attempts: [] });
    await first.kill('SIGKILL');
    await startWorker('worker-b');
    const got = await rx.waitFor(2, 45_000);
    expect(got[1].headers['webhook-id']).toBe(held.headers['webhook-id']);
    expect(got[1].raw.equals(held.raw)).toBe(true);
    const done = await eventually(
      async () => {
        const l = await logs();
        return l.items[0]?.status === 'succeeded' ? l : undefined;
      },
      'the delivery succeeded',
      30_000,
    );
    expect(done.total).toBe(1);
    expect(done.items[0].id).toBe(held.headers['webhook-id']);
    expect(done.items[0].attempts).toHaveLength(1);
    expect(done.items[0].attempts[0].responseStatus).toBe(200);
    expect(JSON.stringify(done)).not.toContain(secret);
  }, 180_000);
});
