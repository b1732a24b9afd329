import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/app';
import { eventually } from '../support/processes';
import { startReceiver, WebhookReceiver } from '../support/webhook-receiver';

/**
 * A fifth hostile pass over event rules and webhooks: a receiver's 410 that arrives after
 * the rule was moved elsewhere or switched back on, the delivery log's filters, order and
 * pages, what an attempt's logged headers hold, recovery and redelivery at their edges.
 */
describe('attack: webhooks, fifth round (e2e)', () => {
  let t: TestApp;
  let rx: WebhookReceiver;
  let server: Server;
  let raw = '';
  /** Requests held by the raw receiver until the test answers them. */
  const held: { path: string; res: ServerResponse }[] = [];
  const secret = 'fifth-round-signing-secret-0001';

  beforeAll(async () => {
    t = await startTestApp({
      env: {
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_RETRY_DELAYS_MS: '50,50',
      },
    });
    rx = await startReceiver();
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.on('end', () => held.push({ path: req.url ?? '', res }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    raw = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await rx.close();
    await t.close();
  });

  async function workspace(name: string) {
    const w = await t.bootstrap(name);
    const base = `/w/${w.workspaceId}`;
    const rule = async (body: Record<string, unknown> = {}) => {
      const res = await t.request('POST', `${base}/event-rules`, {
        token: w.apiKey,
        body: { trigger: 'member:updated', webhookUrl: rx.url, ...body },
      });
      expect(res.status).toBe(201);
      return res.body as { id: number };
    };
    const updateMember = async (memberName: string) => {
      const res = await t.request('PUT', `${base}/members/${w.memberId}`, {
        token: w.apiKey,
        body: { name: memberName },
      });
      expect(res.status).toBe(200);
    };
    const logs = async (query = '') => {
      const res = await t.request('GET', `${base}/webhook-logs${query}`, { token: w.apiKey });
      expect(res.status).toBe(200);
      return res.body as { items: any[]; total: number };
    };
    const getRule = async (id: number) =>
      (await t.request('GET', `${base}/event-rules/${id}`, { token: w.apiKey })).body;
    return { ...w, base, rule, updateMember, logs, getRule };
  }

  const heldAt = (path: string, count: number) =>
    eventually(async () => {
      const got = held.filter((h) => h.path === path);
      return got.length >= count ? got : undefined;
    }, `${count} requests held at ${path}`);

  const answerGone = (h: { res: ServerResponse }) => {
    h.res.writeHead(410);
    h.res.end('gone');
  };

  describe('a 410 answered after the rule changed', () => {
    it('does not disable a rule moved to another URL by the 410 of the URL it left', async () => {
      const w = await workspace('Gone after move');
      const { id } = await w.rule({ webhookUrl: `${raw}/moved-away` });
      await w.updateMember('Before the move');
      const [request] = await heldAt('/moved-away', 1);
      // The owner moves the rule to its new receiver while the old one is still answering.
      const put = await t.request('PUT', `${w.base}/event-rules/${id}`, {
        token: w.apiKey,
        body: { webhookUrl: rx.url },
      });
      expect(put.status).toBe(200);
      answerGone(request);
      await eventually(
        async () => (await w.logs('?status=failed')).total === 1 || undefined,
        'the 410 logged',
      );
      // The old receiver's 410 says it is gone, not the new one: the new one gets what follows.
      const before = rx.received.length;
      await w.updateMember('After the move');
      const [got] = (await rx.waitFor(before + 1, 10_000)).slice(before);
      expect(got.body).toMatchObject({ event: 'member:updated', member: { name: 'After the move' } });
      const events = await t.store.readStream(`eventrule-${id}`);
      expect(events.map((e) => e.type)).not.toContain('EventRuleDisabled');
      expect(await w.getRule(id)).toMatchObject({ enabled: true, disabledReason: null });
    });

    it('does not disable again a rule switched back on by a 410 to an attempt made before', async () => {
      const w = await workspace('Gone before re-enable');
      const { id } = await w.rule({ webhookUrl: `${raw}/re-enabled` });
      await w.updateMember('First');
      await w.updateMember('Second');
      const [first, second] = await heldAt('/re-enabled', 2);
      answerGone(first);
      await eventually(
        async () => ((await w.getRule(id)).disabledReason === 'receiver_gone' ? true : undefined),
        'the rule disabled by the first 410',
      );
      // The owner fixed the receiver and switches the rule back on ...
      const put = await t.request('PUT', `${w.base}/event-rules/${id}`, {
        token: w.apiKey,
        body: { enabled: true, webhookUrl: rx.url },
      });
      expect(put.status).toBe(200);
      // ... then the answer to the attempt made before that arrives: it is no news.
      answerGone(second);
      await eventually(
        async () => (await w.logs('?status=failed')).total === 2 || undefined,
        'both 410s logged',
      );
      const before = rx.received.length;
      await w.updateMember('Third');
      const [got] = (await rx.waitFor(before + 1, 10_000)).slice(before);
      expect(got.body).toMatchObject({ member: { name: 'Third' } });
      const events = await t.store.readStream(`eventrule-${id}`);
      expect(events.filter((e) => e.type === 'EventRuleDisabled')).toHaveLength(1);
      expect(await w.getRule(id)).toMatchObject({ enabled: true, disabledReason: null });
    });

    it('still disables a rule on the 410 of its current receiver', async () => {
      const w = await workspace('Gone now');
      const { id } = await w.rule({ webhookUrl: `${raw}/gone-now` });
      // A change that keeps the receiver (its name) does not shield it from that receiver's 410.
      const put = await t.request('PUT', `${w.base}/event-rules/${id}`, {
        token: w.apiKey,
        body: { name: 'renamed' },
      });
      expect(put.status).toBe(200);
      await w.updateMember('Now');
      const [request] = await heldAt('/gone-now', 1);
      answerGone(request);
      await eventually(
        async () => ((await w.getRule(id)).disabledReason === 'receiver_gone' ? true : undefined),
        'the rule disabled',
      );
    });
  });
});
