import { Webhook } from 'standardwebhooks';
import { startTestApp, TestApp } from '../support/app';
import { eventually, ServiceProcess, startWorkerProcess } from '../support/processes';
import {
  makeTestCertificate,
  startReceiver,
  TestCertificate,
  verifyStripeStyle,
  WebhookReceiver,
} from '../support/webhook-receiver';

/**
 * Deliveries as deployed: an API process (ROLE=api) takes the rules and the writes;
 * separate worker processes (src/worker.ts, ROLE=worker) run the reactor and deliver, over
 * HTTPS to a receiver with a certificate made now (trusted by the workers through
 * NODE_EXTRA_CA_CERTS), at `localhost`, a name that resolves to 127.0.0.1. A worker killed
 * in the middle of a delivery leaves it to another, which delivers it under the same webhook-id.
 */
describe('webhook delivery across processes (e2e)', () => {
  let t: TestApp;
  let cert: TestCertificate;
  let rx: WebhookReceiver;
  const workers: ServiceProcess[] = [];
  const webhookEnv = {
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_RETRY_DELAYS_MS: '100,200,400',
    WEBHOOK_TIMEOUT_MS: '20000',
  };

  beforeAll(async () => {
    cert = makeTestCertificate();
    rx = await startReceiver({ tls: cert, host: 'localhost' });
    t = await startTestApp({ env: { ...webhookEnv, ROLE: 'api' } });
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.kill('SIGKILL')));
    await rx.close();
    await t.close();
  });

  async function startWorker(name: string): Promise<ServiceProcess> {
    const w = await startWorkerProcess(t, name, { ...webhookEnv, NODE_EXTRA_CA_CERTS: cert.certFile });
    workers.push(w);
    return w;
  }

  it('delivers over HTTPS to a name resolving to 127.0.0.1, signed', async () => {
    const first = await startWorker('worker-1');
    const { workspaceId, apiKey, memberId } = await t.bootstrap('Processes');
    const secret = 'secret-across-processes-0001';
    const rule = await t.request('POST', `/w/${workspaceId}/event-rules`, {
      token: apiKey,
      body: { trigger: 'member:updated', webhookUrl: rx.url, signingSecret: secret },
    });
    expect(rule.status).toBe(201);
    expect(rx.url).toMatch(/^https:\/\/localhost:\d+\/hook$/);
    await t.request('PUT', `/w/${workspaceId}/members/${memberId}`, {
      token: apiKey,
      body: { name: 'Over TLS' },
    });
    const [req] = await rx.waitFor(1, 30_000);
    expect(req.body).toMatchObject({ event: 'member:updated', member: { name: 'Over TLS' } });
    expect(new Webhook(secret, { format: 'raw' }).verify(req.raw.toString('utf8'), req.headers)).toBeTruthy();
    expect(verifyStripeStyle(req.headers['x-webhook-signature'], req.raw, secret)).toBeNull();

    // Killed mid-delivery: the receiver holds the first request of the next delivery open
    // while its worker is killed; another worker delivers it again, same webhook-id.
    rx.reply = (r) => (r.n === 2 ? 'hang' : { status: 200 });
    await t.request('PUT', `/w/${workspaceId}/members/${memberId}`, {
      token: apiKey,
      body: { name: 'Crash' },
    });
    const [, held] = await rx.waitFor(2, 30_000);
    await first.kill('SIGKILL');
    await startWorker('worker-2');
    const got = await rx.waitFor(3, 45_000);
    expect(got[2].headers['webhook-id']).toBe(held.headers['webhook-id']);
    expect(got[2].raw.equals(held.raw)).toBe(true);
    const done = await eventually(
      async () => {
        const l = await t.request('GET', `/w/${workspaceId}/webhook-logs?status=succeeded`, {
          token: apiKey,
        });
        return l.body.total === 2 ? l.body.items : undefined;
      },
      'both deliveries to succeed',
      30_000,
    );
    expect(done.map((d: { id: string }) => d.id)).toContain(held.headers['webhook-id']);
  }, 180_000);
});
