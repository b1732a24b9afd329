import { createServer, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../../core/config/config';
import { TIMEOUT_GRANULARITY_MS, WebhookSender } from './webhook-sender';
import { WebhookTargets } from './webhook-targets';

/**
 * WEBHOOK_TIMEOUT_MS bounds a POST as a whole, against a real local receiver: one that
 * never answers and one that answers at once but trickles its body forever both end as
 * "no answer within", between the timeout and the timeout plus one signal slice.
 */
describe('WebhookSender timeout', () => {
  const TIMEOUT = 400;
  const open = new Set<ServerResponse>();
  let server: Server;
  let base: string;
  let sender: WebhookSender;

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url === '/ok') return res.end('fine');
        open.add(res);
        if (req.url === '/silent') return;
        // Headers at once, then one byte every 50 ms, forever.
        res.writeHead(200, { 'content-type': 'text/plain' });
        const tick = setInterval(() => res.write('.'), 50);
        res.on('close', () => clearInterval(tick));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const config = loadConfig({
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT),
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    });
    sender = new WebhookSender(config, new WebhookTargets(config));
  });
  afterAll(async () => {
    await sender.onModuleDestroy();
    open.forEach((res) => res.destroy());
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it.each([
    ['never answers', '/silent'],
    ['trickles its body forever', '/trickle'],
  ])('gives up on a receiver that %s within the timeout', async (_, path) => {
    const started = performance.now();
    const result = await sender.send(`${base}${path}`, { 'content-type': 'application/json' }, '{}');
    const took = performance.now() - started;
    expect(result).toMatchObject({ status: null, error: `no answer within ${TIMEOUT} ms` });
    expect(took).toBeGreaterThanOrEqual(TIMEOUT - 5);
    expect(took).toBeLessThan(TIMEOUT + TIMEOUT_GRANULARITY_MS + 1000);
  });

  it('a request that ends in time is not cut by its slice ending later', async () => {
    const results = await Promise.all(Array.from({ length: 5 }, () => sender.send(`${base}/ok`, {}, '{}')));
    await new Promise((r) => setTimeout(r, TIMEOUT + TIMEOUT_GRANULARITY_MS + 50));
    expect(results.map((r) => [r.status, r.bodyExcerpt, r.error])).toEqual(
      Array.from({ length: 5 }, () => [200, 'fine', null]),
    );
    // Sent after earlier slices were aborted: a fresh signal.
    expect(await sender.send(`${base}/ok`, {}, '{}')).toMatchObject({ status: 200, error: null });
  });
});
