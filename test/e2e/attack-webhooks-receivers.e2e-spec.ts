import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { startTestApp, TestApp } from '../support/app';
import { eventually } from '../support/processes';
import { makeTestCertificate, startReceiver, WebhookReceiver } from '../support/webhook-receiver';

/**
 * Hostile receivers against the delivery worker (undici dispatch, a small response
 * handler): bodies too big, never ending or too slow, sockets closed mid-answer,
 * redirects, odd Retry-After values. Each must end as a logged attempt (never a hung
 * worker, a followed redirect or a parked delivery), and no logged header holds the secret.
 */
describe('attack: hostile webhook receivers (e2e)', () => {
  let t: TestApp;
  let server: Server;
  let url = '';
  const requests: { path: string; id: string; at: number }[] = [];
  /** How the raw receiver answers, by the path of the rule's URL. */
  const behaviours: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {};
  const receivers: WebhookReceiver[] = [];
  const secret = 'hostile-receivers-signing-secret-1';

  beforeAll(async () => {
    t = await startTestApp({
      env: {
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_RETRY_DELAYS_MS: '100,200',
        WEBHOOK_TIMEOUT_MS: '1500',
      },
    });
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const path = (req.url ?? '').split('?')[0];
        requests.push({ path, id: String(req.headers['webhook-id']), at: Date.now() });
        (behaviours[path] ?? ((_q, r: ServerResponse) => r.end('ok')))(req, res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await Promise.all(receivers.map((r) => r.close()));
    await t.close();
  });

  async function deliveryTo(path: string, behaviour: (req: IncomingMessage, res: ServerResponse) => void) {
    behaviours[path] = behaviour;
    const w = await t.bootstrap(`Hostile ${path}`);
    const rule = await t.request('POST', `/w/${w.workspaceId}/event-rules`, {
      token: w.apiKey,
      body: { trigger: 'member:updated', webhookUrl: `${url}${path}`, signingSecret: secret },
    });
    expect(rule.status).toBe(201);
    const put = await t.request('PUT', `/w/${w.workspaceId}/members/${w.memberId}`, {
      token: w.apiKey,
      body: { name: `Hostile ${path}` },
    });
    expect(put.status).toBe(200);
    const logs = async (query = '') =>
      (await t.request('GET', `/w/${w.workspaceId}/webhook-logs${query}`, { token: w.apiKey })).body;
    return { ...w, logs };
  }

  const settled = (logs: (q?: string) => Promise<any>, status: string, timeoutMs = 15_000) =>
    eventually(
      async () => {
        const l = await logs();
        return l.items[0]?.status === status ? l.items[0] : undefined;
      },
      `the delivery ${status}`,
      timeoutMs,
    );

  const noSecretIn = (d: { attempts: { requestHeaders: Record<string, string> }[] }) => {
    expect(JSON.stringify(d)).not.toContain(secret);
    for (const a of d.attempts) expect(a.requestHeaders['webhook-signature']).toMatch(/^v1,/);
  };

  it('reads no more than a bounded part of a 20 MB answer: 2xx, succeeded, excerpt of at most 1 KB', async () => {
    const w = await deliveryTo('/huge', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(1024 * 1024, 'x');
      let sent = 0;
      const more = () => {
        while (sent < 20 && res.write(chunk)) sent++;
        if (sent >= 20) res.end();
        else res.once('drain', () => (sent++, more()));
      };
      res.on('error', () => undefined);
      more();
    });
    const d = await settled(w.logs, 'succeeded');
    expect(d.attempts).toHaveLength(1);
    expect(d.attempts[0].responseStatus).toBe(200);
    expect(d.attempts[0].responseBodyExcerpt.length).toBeLessThanOrEqual(1024);
    noSecretIn(d);
  });

  it('times out a never-ending chunked answer and a too slow body, retrying each, same webhook-id', async () => {
    const endless = (_req: IncomingMessage, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('.'), 50);
      res.on('close', () => clearInterval(timer));
    };
    const slow = (_req: IncomingMessage, res: ServerResponse) => {
      res.writeHead(200, { 'content-length': '10' });
      res.write('12345');
      const timer = setTimeout(() => res.end('67890'), 3000);
      res.on('close', () => clearTimeout(timer));
    };
    const a = await deliveryTo('/endless', endless);
    const b = await deliveryTo('/slow-body', slow);
    for (const w of [a, b]) {
      const d = await settled(w.logs, 'failed', 20_000);
      expect(d.attempts).toHaveLength(3);
      for (const at of d.attempts) {
        expect(at.responseStatus).toBeNull();
        expect(at.error).toBe('no answer within 1500 ms');
        expect(at.durationMs).toBeLessThan(4000);
      }
      noSecretIn(d);
    }
    for (const path of ['/endless', '/slow-body']) {
      const got = requests.filter((r) => r.path === path);
      expect(got).toHaveLength(3);
      expect(new Set(got.map((r) => r.id)).size).toBe(1);
    }
  }, 40_000);

  it('logs a socket closed mid-answer as an error and retries it', async () => {
    let n = 0;
    const w = await deliveryTo('/hangup', (req, res) => {
      n++;
      if (n === 1) {
        // Headers and half of a declared body, then the connection is gone.
        res.writeHead(200, { 'content-length': '100' });
        res.write('half');
        setTimeout(() => req.socket.destroy(), 50);
      } else if (n === 2) req.socket.destroy();
      else res.end('fine');
    });
    const d = await settled(w.logs, 'succeeded');
    expect(d.attempts).toHaveLength(3);
    expect(d.attempts[0]).toMatchObject({ responseStatus: null });
    expect(d.attempts[0].error).toEqual(expect.any(String));
    expect(d.attempts[1]).toMatchObject({ responseStatus: null });
    expect(d.attempts[2]).toMatchObject({ responseStatus: 200, responseBodyExcerpt: 'fine' });
    noSecretIn(d);
  });

  it('never follows a redirect, not even to a receiver that would answer 2xx', async () => {
    const target = await startReceiver();
    receivers.push(target);
    const w = await deliveryTo('/redirect', (_req, res) => {
      res.writeHead(307, { location: target.url });
      res.end();
    });
    const d = await settled(w.logs, 'failed');
    expect(d.attempts.map((a: { responseStatus: number }) => a.responseStatus)).toEqual([307, 307, 307]);
    expect(target.received).toHaveLength(0);
  });

  it('caps a huge Retry-After at a day, ignores a negative one, honours an HTTP date', async () => {
    const huge = await deliveryTo('/retry-huge', (_req, res) => {
      res.writeHead(503, { 'retry-after': '99999999999999999999' });
      res.end();
    });
    const parked = await eventually(async () => {
      const l = await huge.logs();
      return l.items[0]?.attempts.length ? l.items[0] : undefined;
    }, 'the first attempt');
    const next = Date.parse(parked.attempts[0].nextRetryAt);
    expect(parked.status).toBe('pending');
    noSecretIn(parked);
    expect(next).toBeGreaterThan(Date.now() + 23 * 3600 * 1000);
    expect(next).toBeLessThanOrEqual(Date.now() + 24 * 3600 * 1000 + 5000);

    const negative = await deliveryTo('/retry-negative', (_req, res) => {
      res.writeHead(503, { 'retry-after': '-5' });
      res.end();
    });
    const failed = await settled(negative.logs, 'failed');
    expect(failed.attempts).toHaveLength(3);
    const times = requests.filter((r) => r.path === '/retry-negative').map((r) => r.at);
    expect(times[2] - times[0]).toBeLessThan(2000);

    let n = 0;
    const dated = await deliveryTo('/retry-date', (_req, res) => {
      n++;
      if (n === 1) {
        res.writeHead(503, { 'retry-after': new Date(Date.now() + 3000).toUTCString() });
        res.end();
      } else res.end('ok');
    });
    await settled(dated.logs, 'succeeded');
    const [first, second] = requests.filter((r) => r.path === '/retry-date').map((r) => r.at);
    // An HTTP date has whole seconds: at least two of the three seconds asked for.
    expect(second - first).toBeGreaterThanOrEqual(1900);
  }, 40_000);

  it('refuses a receiver whose certificate it does not trust, and logs why', async () => {
    const untrusted = await startReceiver({ tls: makeTestCertificate(), host: 'localhost' });
    receivers.push(untrusted);
    const w = await t.bootstrap('Untrusted certificate');
    const rule = await t.request('POST', `/w/${w.workspaceId}/event-rules`, {
      token: w.apiKey,
      body: { trigger: 'member:updated', webhookUrl: untrusted.url, signingSecret: secret },
    });
    expect(rule.status).toBe(201);
    await t.request('PUT', `/w/${w.workspaceId}/members/${w.memberId}`, {
      token: w.apiKey,
      body: { name: 'Over a TLS nobody vouches for' },
    });
    const d = await settled(
      async () => (await t.request('GET', `/w/${w.workspaceId}/webhook-logs`, { token: w.apiKey })).body,
      'failed',
    );
    expect(d.attempts).toHaveLength(3);
    for (const a of d.attempts) {
      expect(a.responseStatus).toBeNull();
      expect(a.error).toMatch(/SELF_SIGNED|certificate/i);
    }
    expect(untrusted.received).toHaveLength(0);
    noSecretIn(d);
  });

  it('logs a garbled answer and a body of NUL and invalid UTF-8 without losing the delivery', async () => {
    const garbled = await deliveryTo('/garbled', (req) => {
      req.socket.end('SMTP ready\r\n\r\n');
    });
    const g = await settled(garbled.logs, 'failed');
    expect(g.attempts).toHaveLength(3);
    expect(g.attempts[0]).toMatchObject({ responseStatus: null, error: expect.any(String) });

    const binary = await deliveryTo('/binary', (_req, res) => {
      res.writeHead(500);
      res.end(Buffer.from([0x00, 0x41, 0xff, 0xfe, 0xc3, 0x00, 0x42]));
    });
    const b = await settled(binary.logs, 'failed');
    expect(b.attempts.map((a: { responseStatus: number }) => a.responseStatus)).toEqual([500, 500, 500]);
    expect(b.attempts[0].responseBodyExcerpt).toEqual(expect.any(String));
    expect(b.attempts[0].responseBodyExcerpt).not.toContain('\u0000');
    expect(requests.filter((r) => r.path === '/binary')).toHaveLength(3);
  });

  it('disables a rule once for a burst of 410s, sending each delivery once and logging every one failed', async () => {
    const w = await deliveryTo('/gone', (_req, res) => {
      setTimeout(() => {
        res.writeHead(410);
        res.end('gone');
      }, 300);
    });
    const rule = (await t.request('GET', `/w/${w.workspaceId}/event-rules`, { token: w.apiKey })).body
      .items[0];
    for (let i = 0; i < 4; i++)
      await t.request('PUT', `/w/${w.workspaceId}/members/${w.memberId}`, {
        token: w.apiKey,
        body: { name: `Burst ${i}` },
      });
    const failed = await eventually(async () => {
      const l = await w.logs('?status=failed');
      return l.total === 5 && (await w.logs('?status=pending')).total === 0 ? l.items : undefined;
    }, 'five failed deliveries');
    const got = requests.filter((r) => r.path === '/gone');
    expect(new Set(got.map((r) => r.id)).size).toBe(got.length);
    expect(failed.every((d: { attempts: unknown[] }) => d.attempts.length === 1)).toBe(true);
    const events = await t.store.readStream(`eventrule-${rule.id}`);
    expect(events.filter((e) => e.type === 'EventRuleDisabled')).toHaveLength(1);
  });
});
