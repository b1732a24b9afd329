import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/app';
import { WEBHOOK_QUEUE } from '../../src/modules/automation/workers/webhook-delivery.processor';
import { keyWithScopes } from '../support/identity-fixtures';
import { eventually } from '../support/processes';
import { startReceiver, verifyStripeStyle, WebhookReceiver } from '../support/webhook-receiver';

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

  describe('the delivery log', () => {
    it("lists newest first in a stable order under equal timestamps, every delivery on exactly one page, and finds another workspace's rule in none", async () => {
      const w = await workspace('Log pages');
      const other = await workspace('Log pages, other');
      const { id } = await w.rule();
      const theirs = await other.rule();
      for (let i = 0; i < 7; i++) await w.updateMember(`Page ${i}`);
      await other.updateMember('Theirs');
      await eventually(
        async () => (await w.logs('?status=succeeded')).total === 7 || undefined,
        'seven deliveries',
      );
      await eventually(
        async () => (await other.logs('?status=succeeded')).total === 1 || undefined,
        'theirs',
      );
      // Five of them logged in the same microsecond: the order must still be one order.
      const db = t.app.get(DataSource);
      const all = (await w.logs()).items.map((d) => d.id as string);
      await db.query(`UPDATE webhook_deliveries SET created_at = '2026-01-01T00:00:00Z' WHERE id = ANY($1)`, [
        all.slice(1, 6),
      ]);
      const pages: string[] = [];
      for (let page = 1; page <= 4; page++) {
        const l = await w.logs(`?pageSize=2&page=${page}`);
        expect(l.total).toBe(7);
        pages.push(...l.items.map((d) => d.id as string));
      }
      expect(pages).toHaveLength(7);
      expect(new Set(pages).size).toBe(7);
      const full = (await w.logs()).items;
      expect(full.map((d) => d.id)).toEqual(pages);
      for (let i = 1; i < full.length; i++)
        expect(Date.parse(full[i - 1].createdAt)).toBeGreaterThanOrEqual(Date.parse(full[i].createdAt));
      // Another workspace's rule id filters to nothing, its deliveries are never listed here.
      expect(await w.logs(`?ruleId=${theirs.id}`)).toMatchObject({ items: [], total: 0 });
      expect(await w.logs(`?ruleId=${id}`)).toMatchObject({ total: 7 });
      const theirDelivery = (await other.logs()).items[0].id as string;
      expect(pages).not.toContain(theirDelivery);
      const peek = await t.request('GET', `${w.base}/webhook-logs/${theirDelivery}`, { token: w.apiKey });
      expect(peek.status).toBe(404);
    });

    it('refuses malformed filters with a 400 naming the field: status, ruleId, dates, a window ending before it starts', async () => {
      const w = await workspace('Log filters');
      for (const [query, field] of [
        ['?status=done', /^status: /],
        ['?status=', /^status: /],
        ['?status=failed&status=pending', /^status: /],
        ['?ruleId=abc', /^ruleId: /],
        ['?ruleId=0', /^ruleId: /],
        ['?from=yesterday', /^from: /],
        ['?from=2026-01-01', /^from: /],
        ['?to=2026-01-01T00:00:00', /^to: /],
        ['?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', /^from: must not be after to/],
        ['?from=2026-01-02T00:00:00Z&endTime=2026-01-01T00:00:00Z', /^from: must not be after to/],
        ['?startTime=2026-01-02T00:00:00Z&endTime=2026-01-01T00:00:00Z', /^startTime: /],
        ['?from=2026-01-01T00:00:00Z&startTime=2026-01-01T00:00:00Z', /^from: /],
        ['?eventType=member.updated', /^eventType: unknown event type/],
      ] as const) {
        const res = await t.request('GET', `${w.base}/webhook-logs${query}`, { token: w.apiKey });
        expect({ query, status: res.status }).toEqual({ query, status: 400 });
        expect(res.body.detail).toMatch(field);
      }
      // An alias filters as its canonical type.
      const alias = await t.request('GET', `${w.base}/webhook-logs?eventType=record.updated`, {
        token: w.apiKey,
      });
      expect(alias.status).toBe(200);
    });

    it('logs each attempt with the headers as sent: both signatures during a rotation, never a secret, nothing of the member', async () => {
      const w = await workspace('Logged headers');
      const { id } = await w.rule({ signingSecret: secret });
      const rotated = await t.request('POST', `${w.base}/event-rules/${id}/rotate-secret`, {
        token: w.apiKey,
      });
      expect(rotated.status).toBe(200);
      const fresh = rotated.body.signingSecret as string;
      const before = rx.received.length;
      await w.updateMember('Quiet Patient Name');
      const [got] = (await rx.waitFor(before + 1)).slice(before);
      const d = await eventually(async () => (await w.logs('?status=succeeded')).items[0], 'the delivery');
      const headers = d.attempts[0].requestHeaders as Record<string, string>;
      // Exactly the headers the receiver got, signatures included.
      for (const name of [
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
        'x-webhook-signature',
        'x-webhook-event',
      ])
        expect(headers[name]).toBe(got.headers[name]);
      expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
      expect(headers['x-webhook-signature'].match(/v1=/g)).toHaveLength(2);
      const text = JSON.stringify(d);
      for (const s of [secret, fresh, fresh.slice('whsec_'.length)]) expect(text).not.toContain(s);
      expect(JSON.stringify(headers)).not.toContain('Quiet Patient Name');
      expect(Object.keys(headers).sort()).toEqual([
        'content-type',
        'user-agent',
        'webhook-id',
        'webhook-signature',
        'webhook-timestamp',
        'x-webhook-event',
        'x-webhook-id',
        'x-webhook-signature',
      ]);
    });
  });

  describe('recover and redeliver at their edges', () => {
    it("recovers nothing from the future or for a rule without failures, and answers another workspace's rule as a missing one", async () => {
      const w = await workspace('Recover edges');
      const other = await workspace('Recover edges, other');
      const { id } = await w.rule();
      const theirs = await other.rule();
      await w.updateMember('Delivered');
      await eventually(async () => (await w.logs('?status=succeeded')).total === 1 || undefined, 'delivered');
      const recover = (body: object) =>
        t.request('POST', `${w.base}/webhook-logs/recover`, { token: w.apiKey, body });
      expect((await recover({ ruleId: id, since: '2999-01-01T00:00:00Z' })).body).toEqual({
        requeued: 0,
        deliveryIds: [],
      });
      // Its one delivery succeeded: nothing to recover, and the success is not sent again.
      const before = rx.received.length;
      expect((await recover({ ruleId: id, since: '2000-01-01T00:00:00Z' })).body).toEqual({
        requeued: 0,
        deliveryIds: [],
      });
      const foreign = await recover({ ruleId: theirs.id, since: '2000-01-01T00:00:00Z' });
      const missing = await recover({ ruleId: 2_000_000_000, since: '2000-01-01T00:00:00Z' });
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual(missing.body);
      for (const body of [
        { ruleId: id, since: 'last week' },
        { ruleId: id, since: '2026-01-01' },
        { ruleId: id, since: 1_700_000_000 },
        { ruleId: String(id), since: '2000-01-01T00:00:00Z' },
        { ruleId: id },
      ]) {
        const res = await recover(body);
        expect(res.status).toBe(400);
        expect(res.body.detail).toMatch(/^(ruleId|since): /);
      }
      await new Promise((r) => setTimeout(r, 300));
      expect(rx.received.length).toBe(before);
      expect((await other.logs()).items.every((d) => d.redeliveries === 0)).toBe(true);
    });

    it('leaves a delivery redeliverable when its job could not be queued, never pending with nothing to send it', async () => {
      const w = await workspace('Redeliver enqueue fails');
      await w.rule();
      const before = rx.received.length;
      await w.updateMember('Enqueue fails');
      await rx.waitFor(before + 1);
      const d = await eventually(async () => (await w.logs('?status=succeeded')).items[0], 'delivered');
      // Redis refuses the job (the one fault injected: the queue is the real one otherwise).
      const queue = t.app.get<Queue>(getQueueToken(WEBHOOK_QUEUE), { strict: false });
      const spy = jest.spyOn(queue, 'addBulk').mockRejectedValueOnce(new Error('Connection is closed.'));
      try {
        const failed = await t.request('POST', `${w.base}/webhook-logs/${d.id}/redeliver`, {
          token: w.apiKey,
        });
        expect(failed.status).toBeGreaterThanOrEqual(500);
      } finally {
        spy.mockRestore();
      }
      const after = (await t.request('GET', `${w.base}/webhook-logs/${d.id}`, { token: w.apiKey })).body;
      expect(after).toMatchObject({ status: 'succeeded', redeliveries: 0, attemptCount: 1 });
      expect(after.completedAt).toBe(d.completedAt);
      const again = await t.request('POST', `${w.base}/webhook-logs/${d.id}/redeliver`, { token: w.apiKey });
      expect(again.status).toBe(202);
      const [resent] = (await rx.waitFor(before + 2)).slice(before + 1);
      expect(resent.headers['webhook-id']).toBe(d.id);
    });

    it('redelivers a delivery that succeeded, under the same webhook-id, counting its attempts on', async () => {
      const w = await workspace('Redeliver success');
      await w.rule();
      const before = rx.received.length;
      await w.updateMember('Once more');
      const [first] = (await rx.waitFor(before + 1)).slice(before);
      const d = await eventually(async () => (await w.logs('?status=succeeded')).items[0], 'delivered');
      const res = await t.request('POST', `${w.base}/webhook-logs/${d.id}/redeliver`, { token: w.apiKey });
      expect(res.status).toBe(202);
      const [again] = (await rx.waitFor(before + 2)).slice(before + 1);
      expect(again.headers['webhook-id']).toBe(first.headers['webhook-id']);
      expect(again.raw.equals(first.raw)).toBe(true);
      const after = await eventually(async () => {
        const l = (await w.logs('?status=succeeded')).items[0];
        return l?.attempts.length === 2 ? l : undefined;
      }, 'the redelivery logged');
      expect(after).toMatchObject({ id: d.id, redeliveries: 1, attempts: [{ attempt: 1 }, { attempt: 2 }] });
    });
  });

  describe('what deliveries carry', () => {
    it("delivers member:updated with the member as the API shows it, nothing more, and never another workspace's events", async () => {
      const w = await workspace('Payload A');
      const b = await workspace('Payload B');
      await w.rule({ webhookUrl: `${rx.url}?ws=a` });
      const before = rx.received.length;
      await b.updateMember('Only in B');
      await w.updateMember('Only in A');
      const [got] = await rx.waitFor(1, 10_000, (r) => r.n > before && r.path.endsWith('?ws=a'));
      const member = (await t.request('GET', `${w.base}/members/${w.memberId}`, { token: w.apiKey })).body;
      expect(Object.keys(got.body).sort()).toEqual([
        'event',
        'eventId',
        'eventRule',
        'member',
        'timestamp',
        'workspace',
      ]);
      expect(got.body.member).toEqual(member);
      expect(got.body.workspace.uuid).toBe(w.workspaceId);
      await new Promise((r) => setTimeout(r, 300));
      const toA = rx.received.filter((r) => r.n > before && r.path.endsWith('?ws=a'));
      expect(toA).toHaveLength(1);
      expect(JSON.stringify(toA.map((r) => r.body))).not.toContain('Only in B');
    });
  });

  describe('rotation by a key that cannot read what the rule delivers', () => {
    it("refuses a lesser key's rotate-secret of the owner's rule as it refuses its PUT: 403, no secret, nothing changed", async () => {
      const w = await workspace('Rotate lesser');
      const { id } = await w.rule({ signingSecret: secret });
      const narrow = await keyWithScopes(t, w.apiKey, ['automations:write', 'automations:read']);
      const viaPut = await t.request('PUT', `${w.base}/event-rules/${id}`, {
        token: narrow,
        body: { signingSecret: 'a-secret-of-my-own-choosing' },
      });
      expect(viaPut.status).toBe(403);
      const res = await t.request('POST', `${w.base}/event-rules/${id}/rotate-secret`, { token: narrow });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({
        detail: expect.stringMatching(/^eventType: a rule for member:updated .*members:read/),
      });
      expect(await t.eventsOf(res)).toEqual([]);
      const events = await t.store.readStream(`eventrule-${id}`);
      expect(events.map((e) => e.type)).toEqual(['EventRuleCreated']);
      // Deliveries are signed with the owner's secret alone, as before.
      const before = rx.received.length;
      await w.updateMember('Still signed by the owner');
      const [got] = (await rx.waitFor(before + 1)).slice(before);
      expect(verifyStripeStyle(got.headers['x-webhook-signature'], got.raw, secret)).toBeNull();
      expect(got.headers['x-webhook-signature'].match(/v1=/g)).toHaveLength(1);
      // The owner, who may read members, still rotates.
      const own = await t.request('POST', `${w.base}/event-rules/${id}/rotate-secret`, { token: w.apiKey });
      expect(own.status).toBe(200);
    });
  });

  describe('rule input', () => {
    it("takes no name of Object's prototype for an event type: 400 listing the valid ones, nothing stored, nobody's rules stalled", async () => {
      const w = await workspace('Prototype names');
      const other = await workspace('Prototype names, bystander');
      for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']) {
        for (const body of [
          { trigger: name, webhookUrl: rx.url },
          { name: 'n', eventType: name, actionType: 'webhook:send', actionParams: { webhookUrl: rx.url } },
        ]) {
          const res = await t.request('POST', `${w.base}/event-rules`, { token: w.apiKey, body });
          expect({ name, status: res.status }).toEqual({ name, status: 400 });
          expect(res.body.detail).toMatch(
            /^(trigger|eventType): unknown event type .*; valid: data_record:created/,
          );
        }
        for (const list of ['webhook-logs', 'event-rules']) {
          const res = await t.request('GET', `${w.base}/${list}?eventType=${name}`, { token: w.apiKey });
          expect({ name, list, status: res.status }).toEqual({ name, list, status: 400 });
          expect(res.body.detail).toMatch(/^eventType: unknown event type/);
        }
      }
      const { id } = await w.rule();
      const put = await t.request('PUT', `${w.base}/event-rules/${id}`, {
        token: w.apiKey,
        body: { eventType: 'constructor' },
      });
      expect(put.status).toBe(400);
      expect((await w.getRule(id)).eventType).toBe('member:updated');
      expect((await t.request('GET', `${w.base}/event-rules`, { token: w.apiKey })).body.total).toBe(1);
      // The rules' read model keeps up: another workspace's rule is made and read back at once.
      const started = Date.now();
      await other.rule();
      expect(Date.now() - started).toBeLessThan(5000);
    });

    it('keeps the rules read model going past a rule stored without a type before that was refused', async () => {
      const w = await workspace('Typeless rule stored');
      // What a POST with trigger "constructor" stored before the fix: the type lost in JSON.
      await t.store.append(
        'eventrule-1999999999',
        [
          {
            type: 'EventRuleCreated',
            data: {
              ruleId: 1_999_999_999,
              uuid: '0b0e0f00-0000-4000-8000-000000000001',
              workspaceId: w.workspaceId,
              name: 'constructor',
              webhookUrl: rx.url,
              payloadFormat: 'flat',
              filters: {},
              maxPerSecond: null,
              actionType: 'webhook:send',
              secret: null,
              createdAt: new Date().toISOString(),
            },
            metadata: {
              workspaceId: w.workspaceId,
              actor: { kind: 'system', id: 'system' },
              correlationId: 'typeless-rule',
              occurredAt: new Date().toISOString(),
              schemaVersion: 1,
            },
          },
        ],
        { expectedRevision: 'no_stream' },
      );
      const started = Date.now();
      const { id } = await w.rule();
      expect(Date.now() - started).toBeLessThan(5000);
      const listed = (await t.request('GET', `${w.base}/event-rules`, { token: w.apiKey })).body;
      expect(listed.items.map((r: { id: number }) => r.id)).toEqual([id]);
      const gone = await t.request('GET', `${w.base}/event-rules/1999999999`, { token: w.apiKey });
      expect(gone.status).toBe(404);
    });

    it('refuses a payloadFormat other than flat or envelope, and a URL carrying credentials, without echoing them', async () => {
      const w = await workspace('Rule input');
      const { id } = await w.rule();
      const before = await t.request('GET', `${w.base}/event-rules/${id}`, { token: w.apiKey });
      for (const payloadFormat of ['FLAT', 'Envelope', 'xml', '', 1, null, ['flat'], { flat: true }]) {
        const put = await t.request('PUT', `${w.base}/event-rules/${id}`, {
          token: w.apiKey,
          body: { actionParams: { payloadFormat } },
        });
        expect({ payloadFormat, status: put.status }).toEqual({ payloadFormat, status: 400 });
        expect(put.body.detail).toMatch(/^actionParams\.payloadFormat: /);
        const post = await t.request('POST', `${w.base}/event-rules`, {
          token: w.apiKey,
          body: {
            name: 'x',
            eventType: 'member:updated',
            actionType: 'webhook:send',
            actionParams: { webhookUrl: rx.url, payloadFormat },
          },
        });
        expect(post.status).toBe(400);
      }
      const password = 'hunter2-in-the-url';
      const withCredentials = rx.url.replace('http://', `http://robot:${password}@`);
      for (const body of [
        { webhookUrl: withCredentials },
        { actionParams: { webhookUrl: withCredentials } },
        { webhookUrl: rx.url.replace('http://', 'http://robot@') },
      ]) {
        const put = await t.request('PUT', `${w.base}/event-rules/${id}`, { token: w.apiKey, body });
        expect(put.status).toBe(400);
        expect(put.body.detail).toMatch(/webhookUrl: must not carry credentials/);
        expect(put.body.detail).not.toContain(password);
        const post = await t.request('POST', `${w.base}/event-rules`, {
          token: w.apiKey,
          body: { trigger: 'member:updated', ...body },
        });
        expect(post.status).toBe(400);
        expect(JSON.stringify(post.body)).not.toContain(password);
      }
      const after = await t.request('GET', `${w.base}/event-rules/${id}`, { token: w.apiKey });
      expect(after.body).toEqual(before.body);
      expect((await t.request('GET', `${w.base}/event-rules`, { token: w.apiKey })).body.total).toBe(1);
    });
  });
});
