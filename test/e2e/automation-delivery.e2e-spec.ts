import { Webhook } from 'standardwebhooks';
import { DeliverWhenMatchedReactor } from '../../src/modules/automation/reactors/deliver-when-matched.reactor';
import { WebhookDeliveryProcessor } from '../../src/modules/automation/workers/webhook-delivery.processor';
import { startTestApp, TestApp } from '../support/app';
import { eventually } from '../support/processes';
import { Reply, startReceiver, verifyStripeStyle, WebhookReceiver } from '../support/webhook-receiver';

/** Retries in milliseconds (6 attempts over about 3 s), so a receiver down for a second still gets everything. */
const RETRY_DELAYS = '100,200,400,800,1600';
/** A tenth of a day's thousandth: 8.64 s of failing, two failures 0.86 s apart, disables a rule. */
const DISABLE_AFTER_DAYS = '0.0001';

/**
 * Webhook delivery end to end: member:updated events (identity's public event, through
 * the catalogue) delivered by the reactor and the queue worker of the app to real local
 * receivers, checked with independent verifiers on the exact bytes received.
 */
describe('webhook delivery (e2e)', () => {
  let t: TestApp;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    t = await startTestApp({
      env: {
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_RETRY_DELAYS_MS: RETRY_DELAYS,
        WEBHOOK_TIMEOUT_MS: '2000',
        WEBHOOK_DISABLE_AFTER_DAYS: DISABLE_AFTER_DAYS,
        WEBHOOK_CONCURRENCY: '20',
      },
    });
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await t.close();
  });

  async function receiver(): Promise<WebhookReceiver> {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  }

  async function workspace(name: string) {
    const w = await t.bootstrap(name);
    const rule = async (body: Record<string, unknown>) => {
      const res = await t.request('POST', `/w/${w.workspaceId}/event-rules`, { token: w.apiKey, body });
      expect(res.status).toBe(201);
      return res.body as { id: number; uuid: string; name: string };
    };
    const updateMember = async (n: string | number) => {
      const res = await t.request('PUT', `/w/${w.workspaceId}/members/${w.memberId}`, {
        token: w.apiKey,
        body: { name: `Name ${n}` },
      });
      expect(res.status).toBe(200);
      return res;
    };
    const logs = async (query = '') =>
      (await t.request('GET', `/w/${w.workspaceId}/webhook-logs${query}`, { token: w.apiKey })).body;
    return { ...w, rule, updateMember, logs };
  }

  it('runs the delivery worker at the configured concurrency', () => {
    const processor = t.app.get(WebhookDeliveryProcessor, { strict: false });
    expect(processor.worker.concurrency).toBe(20);
  });

  it('delivers member:updated, flat, with headers and signatures that independent verifiers accept on the exact bytes', async () => {
    const rx = await receiver();
    const w = await workspace('Signed');
    const plainSecret = 'plain-text-signing-secret-42';
    const rule = await w.rule({
      name: 'CRM sync',
      eventType: 'member:updated',
      actionType: 'webhook:send',
      actionParams: { webhookUrl: rx.url, signingSecret: plainSecret },
    });
    const put = await w.updateMember('Ada');
    const [req] = await rx.waitFor(1);
    const [event] = await t.eventsOf(put);

    expect(req.method).toBe('POST');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['user-agent']).toMatch(/^workspace-service-webhooks\//);
    expect(req.headers['x-webhook-event']).toBe('member:updated');
    expect(req.headers['x-webhook-id']).toBe(req.headers['webhook-id']);
    // The spec's flat payload: event at the top level, no data wrapper, the member block.
    expect(req.body).toEqual({
      event: 'member:updated',
      eventId: event.id,
      timestamp: event.metadata.occurredAt,
      workspace: { uuid: w.workspaceId, name: 'Signed' },
      eventRule: { id: rule.id, uuid: rule.uuid, name: 'CRM sync' },
      member: expect.objectContaining({ id: w.memberId, workspaceId: w.workspaceId, name: 'Name Ada' }),
    });
    expect(req.body.member).toHaveProperty('email');

    // Standard Webhooks, by the standardwebhooks package (a plain secret is its raw key).
    const verifier = new Webhook(plainSecret, { format: 'raw' });
    expect(verifier.verify(req.raw.toString('utf8'), req.headers)).toEqual(req.body);
    // The t=,v1= form, by a check written from the documented rule.
    expect(verifyStripeStyle(req.headers['x-webhook-signature'], req.raw, plainSecret)).toBeNull();
    expect(verifyStripeStyle(req.headers['x-webhook-signature'], req.raw, 'another-secret')).toBe(
      'no matching signature',
    );
    const tampered = Buffer.from(req.raw.toString('utf8').replace('Name Ada', 'Name Eve'));
    expect(() => verifier.verify(tampered.toString('utf8'), req.headers)).toThrow();
    expect(verifyStripeStyle(req.headers['x-webhook-signature'], tampered, plainSecret)).toBe(
      'no matching signature',
    );

    // Older than five minutes: both verifiers refuse it.
    const sixMinutesLater = Date.now() + 6 * 60 * 1000;
    const now = jest.spyOn(Date, 'now').mockReturnValue(sixMinutesLater);
    try {
      expect(() => verifier.verify(req.raw.toString('utf8'), req.headers)).toThrow(/too old/);
    } finally {
      now.mockRestore();
    }
    expect(
      verifyStripeStyle(
        req.headers['x-webhook-signature'],
        req.raw,
        plainSecret,
        Math.floor(sixMinutesLater / 1000),
      ),
    ).toBe('timestamp outside tolerance');

    // The log: one delivery, succeeded, its attempt with the headers sent (signature, never the secret).
    const log = await eventually(async () => {
      const l = await w.logs();
      return l.items[0]?.status === 'succeeded' ? l : undefined;
    }, 'the delivery to be logged as succeeded');
    expect(log.total).toBe(1);
    const d = log.items[0];
    expect(d).toMatchObject({
      id: req.headers['webhook-id'],
      ruleId: rule.id,
      eventId: event.id,
      eventType: 'member:updated',
    });
    expect(d.attempts).toHaveLength(1);
    expect(d.attempts[0]).toMatchObject({
      attempt: 1,
      responseStatus: 200,
      responseBodyExcerpt: 'ok',
      nextRetryAt: null,
    });
    expect(d.attempts[0].requestHeaders['x-webhook-signature']).toBe(req.headers['x-webhook-signature']);
    expect(JSON.stringify(log)).not.toContain(plainSecret);
    // A replay of the reactor (the same stored event again) enqueues nothing new.
    await t.app.get(DeliverWhenMatchedReactor, { strict: false }).reactBatch([event]);
    await new Promise((r) => setTimeout(r, 500));
    expect(rx.received).toHaveLength(1);
    const one = await t.request('GET', `/w/${w.workspaceId}/webhook-logs/${d.id}`, { token: w.apiKey });
    expect(one.status).toBe(200);
    expect(one.body.requestBody).toBe(req.raw.toString('utf8'));
  });

  it('sends the envelope form, and a whsec_ secret verifies as Standard Webhooks keys it', async () => {
    const rx = await receiver();
    const w = await workspace('Envelope');
    const secret = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
    await w.rule({
      trigger: 'member:updated',
      webhookUrl: rx.url,
      signingSecret: secret,
    });
    const env = await w.rule({
      name: 'envelope',
      eventType: 'member:updated',
      actionParams: { webhookUrl: rx.url, payloadFormat: 'envelope' },
    });
    const put = await w.updateMember('Env');
    const [event] = await t.eventsOf(put);
    const got = await rx.waitFor(2);
    const signed = got.find((r) => r.headers['webhook-signature'])!;
    expect(new Webhook(secret).verify(signed.raw.toString('utf8'), signed.headers)).toMatchObject({
      event: 'member:updated',
    });
    const unsigned = got.find((r) => !r.headers['webhook-signature'])!;
    expect(unsigned.headers['x-webhook-signature']).toBeUndefined();
    expect(unsigned.body).toEqual({
      eventType: 'member:updated',
      timestamp: event.metadata.occurredAt,
      workspaceId: w.workspaceId,
      data: { id: event.id, member: expect.objectContaining({ id: w.memberId, name: 'Name Env' }) },
    });
    expect(env.id).toBeGreaterThan(0);
  });

  it('retries non-2xx answers on the schedule with one stable webhook-id, and honours Retry-After', async () => {
    const rx = await receiver();
    const replies: Reply[] = [
      { status: 500, body: 'boom' },
      { status: 503, headers: { 'retry-after': '1' } },
      { status: 302, headers: { location: `${rx.url}/elsewhere` } },
    ];
    rx.reply = (r) => replies[r.n - 1] ?? { status: 204 };
    const w = await workspace('Retries');
    await w.rule({ trigger: 'member:updated', webhookUrl: rx.url });
    await w.updateMember('retry');
    const got = await rx.waitFor(4, 15_000);
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(new Set(got.map((r) => r.raw.toString('utf8'))).size).toBe(1);
    expect(got.every((r) => r.path === '/hook')).toBe(true); // the redirect was not followed
    // Retry-After: 1 held the third attempt back a second, far beyond the schedule's 200 ms.
    expect(got[2].at - got[1].at).toBeGreaterThanOrEqual(950);
    const d = await eventually(async () => {
      const l = await w.logs();
      return l.items[0]?.status === 'succeeded' ? l.items[0] : undefined;
    }, 'success after retries');
    expect(d.attempts.map((a: { responseStatus: number }) => a.responseStatus)).toEqual([500, 503, 302, 204]);
    expect(d.attempts[0].responseBodyExcerpt).toBe('boom');
    expect(d.attempts[0].nextRetryAt).not.toBeNull();
    expect(d.attempts[3].nextRetryAt).toBeNull();
  });

  it('logs an answer whose excerpt would end between the halves of a character, after one POST', async () => {
    const rx = await receiver();
    // 1,023 ASCII characters, then one outside the BMP (two UTF-16 units): a 1,024-unit
    // excerpt ends inside it, and half a character is no text PostgreSQL's json accepts.
    rx.reply = () => ({ status: 200, body: `${'a'.repeat(1023)}\u{1F600} and more` });
    const w = await workspace('Excerpt');
    await w.rule({ trigger: 'member:updated', webhookUrl: rx.url });
    await w.updateMember('excerpt');
    const d = await eventually(async () => {
      const l = await w.logs();
      return l.items[0]?.status === 'succeeded' ? l.items[0] : undefined;
    }, 'the delivery logged as succeeded');
    expect(d.attempts).toHaveLength(1);
    expect(d.attempts[0].responseBodyExcerpt).toBe('a'.repeat(1023));
    expect(rx.received).toHaveLength(1);
  });

  it('lists a delivery pending while its first attempt waits on a slow receiver', async () => {
    const rx = await receiver();
    rx.reply = () => 'hang';
    const w = await workspace('Slow');
    const rule = await w.rule({ trigger: 'member:updated', webhookUrl: rx.url });
    await w.updateMember('slow');
    await rx.waitFor(1);
    // Within WEBHOOK_TIMEOUT_MS (2 s) of the POST: listed pending, no attempt recorded yet.
    const listed = await eventually(async () => {
      const l = await w.logs(`?ruleId=${rule.id}&status=pending`);
      return l.items[0];
    }, 'the delivery listed as pending');
    expect(listed.attempts).toHaveLength(0);
    // The attempt that timed out is then appended to that row, with its next retry.
    const retried = await eventually(async () => {
      const l = await w.logs(`?ruleId=${rule.id}`);
      return l.items[0]?.attempts.length ? l.items[0] : undefined;
    }, 'the timed-out attempt logged');
    expect(retried.id).toBe(listed.id);
    expect(retried.status).toBe('pending');
    expect(retried.attempts[0]).toMatchObject({ responseStatus: null, error: 'no answer within 2000 ms' });
    expect(retried.attempts[0].nextRetryAt).toEqual(expect.any(String));
    rx.reply = () => ({ status: 200 });
  });

  it('records a delivery failed after the last retry; redeliver sends it again with the same webhook-id', async () => {
    const rx = await receiver();
    let healthy = false;
    rx.reply = () => (healthy ? { status: 200 } : { status: 500 });
    const w = await workspace('Failing');
    const rule = await w.rule({ trigger: 'member:updated', webhookUrl: rx.url });
    await w.updateMember('fail');
    const failed = await eventually(
      async () => {
        const l = await w.logs(`?status=failed&ruleId=${rule.id}`);
        return l.items[0];
      },
      'the delivery to fail',
      15_000,
    );
    expect(failed.attempts).toHaveLength(6);
    expect(failed.nextRetryAt).toBeNull();
    expect(rx.received).toHaveLength(6);
    const pending = await w.logs('?status=pending');
    expect(pending.total).toBe(0);

    healthy = true;
    const redo = await t.request('POST', `/w/${w.workspaceId}/webhook-logs/${failed.id}/redeliver`, {
      token: w.apiKey,
    });
    expect(redo.status).toBe(202);
    const got = await rx.waitFor(7);
    expect(got[6].headers['webhook-id']).toBe(failed.id);
    const done = await eventually(async () => {
      const l = await w.logs(`?status=succeeded`);
      return l.items[0];
    }, 'the redelivery to succeed');
    expect(done).toMatchObject({ id: failed.id, redeliveries: 1 });
    expect(done.attempts.length).toBe(7);
    const other = await t.bootstrap('Not theirs');
    const foreign = await t.request('POST', `/w/${other.workspaceId}/webhook-logs/${failed.id}/redeliver`, {
      token: other.apiKey,
    });
    expect(foreign.status).toBe(404);
    expect(
      (await t.request('GET', `/w/${other.workspaceId}/webhook-logs/${failed.id}`, { token: other.apiKey }))
        .status,
    ).toBe(404);
  });

  it('disables the rule on 410 Gone, with an event; re-enabled it resumes from new events only', async () => {
    const rx = await receiver();
    rx.reply = () => ({ status: 410 });
    const w = await workspace('Gone');
    const rule = await w.rule({ trigger: 'member:updated', webhookUrl: rx.url });
    await w.updateMember('gone');
    await rx.waitFor(1);
    const disabled = await eventually(async () => {
      const r = await t.request('GET', `/w/${w.workspaceId}/event-rules/${rule.id}`, { token: w.apiKey });
      return r.body.enabled === false ? r.body : undefined;
    }, 'the rule to be disabled');
    expect(disabled.disabledReason).toBe('receiver_gone');
    const events = await t.store.readStream(`eventrule-${rule.id}`);
    expect(events.map((e) => e.type)).toEqual(['EventRuleCreated', 'EventRuleDisabled']);
    expect(events[1].data).toMatchObject({ reason: 'receiver_gone' });
    const log = await w.logs();
    expect(log.items[0]).toMatchObject({ status: 'failed' });
    expect(log.items[0].attempts).toHaveLength(1);

    await w.updateMember('while disabled');
    rx.reply = () => ({ status: 200 });
    const enabled = await t.request('PUT', `/w/${w.workspaceId}/event-rules/${rule.id}`, {
      token: w.apiKey,
      body: { enabled: true },
    });
    expect(enabled.body.enabled).toBe(true);
    await w.updateMember('after');
    const got = await rx.waitFor(2);
    expect(got[1].body.member.name).toBe('Name after');
    await new Promise((r) => setTimeout(r, 500));
    expect(rx.received).toHaveLength(2);
  });

  it('a receiver down for a while gets every delivery once it is back', async () => {
    const rx = await receiver();
    const w = await workspace('Down');
    await w.rule({ trigger: 'member:updated', webhookUrl: rx.url });
    await rx.stop();
    for (let i = 0; i < 8; i++) await w.updateMember(`down ${i}`);
    await new Promise((r) => setTimeout(r, 1200));
    await rx.start();
    const got = await rx.waitFor(8, 20_000);
    expect(new Set(got.map((r) => r.body.eventId)).size).toBe(8);
    const log = await eventually(async () => {
      const l = await w.logs('?status=succeeded');
      return l.total === 8 ? l : undefined;
    }, 'eight succeeded deliveries');
    expect(log.items.some((d: { attempts: unknown[] }) => d.attempts.length > 1)).toBe(true);
  });

  it('a receiver failing half the time gets every delivery, each under one webhook-id', async () => {
    const rx = await receiver();
    rx.reply = (r) => (r.n % 2 === 1 ? { status: 500 } : { status: 200 });
    const w = await workspace('Flaky');
    await w.rule({ trigger: 'member:updated', webhookUrl: rx.url });
    for (let i = 0; i < 12; i++) await w.updateMember(`flaky ${i}`);
    await eventually(
      async () => {
        const l = await w.logs('?status=succeeded');
        return l.total === 12;
      },
      'twelve succeeded deliveries',
      30_000,
    );
    const byEvent = new Map<string, Set<string>>();
    for (const r of rx.received) {
      const ids = byEvent.get(r.body.eventId) ?? new Set();
      ids.add(r.headers['webhook-id']);
      byEvent.set(r.body.eventId, ids);
    }
    expect(byEvent.size).toBe(12);
    expect([...byEvent.values()].every((ids) => ids.size === 1)).toBe(true);
    const succeededIds = new Set(rx.received.filter((r) => r.n % 2 === 0).map((r) => r.body.eventId));
    expect(succeededIds.size).toBe(12);
  });

  it('the test endpoint sends a sample of the rule type now and answers with the attempt', async () => {
    const rx = await receiver();
    rx.reply = () => ({ status: 202, body: 'thanks' });
    const w = await workspace('Test send');
    const secret = 'test-endpoint-secret-123456';
    const rule = await w.rule({ trigger: 'chat:created', webhookUrl: rx.url, signingSecret: secret });
    const res = await t.request('POST', `/w/${w.workspaceId}/event-rules/${rule.id}/test`, {
      token: w.apiKey,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      succeeded: true,
      attempt: { responseStatus: 202, responseBodyExcerpt: 'thanks' },
    });
    const [req] = await rx.waitFor(1);
    expect(req.body).toMatchObject({ event: 'chat:created', test: true, eventRule: { id: rule.id } });
    expect(req.headers['webhook-id']).toBe(res.body.deliveryId);
    expect(verifyStripeStyle(req.headers['x-webhook-signature'], req.raw, secret)).toBeNull();
    const log = await t.request('GET', `/w/${w.workspaceId}/webhook-logs/${res.body.deliveryId}`, {
      token: w.apiKey,
    });
    expect(log.body).toMatchObject({ isTest: true, status: 'succeeded' });
    rx.reply = () => ({ status: 500 });
    const bad = await t.request('POST', `/w/${w.workspaceId}/event-rules/${rule.id}/test`, {
      token: w.apiKey,
    });
    expect(bad.body).toMatchObject({ succeeded: false, attempt: { responseStatus: 500 } });
  });

  it('signs with both secrets during a rotation, so a receiver holding either verifies', async () => {
    const rx = await receiver();
    const w = await workspace('Rotation');
    const oldSecret = 'the-old-secret-before-rotation';
    const rule = await w.rule({ trigger: 'member:updated', webhookUrl: rx.url, signingSecret: oldSecret });
    const rotated = await t.request('POST', `/w/${w.workspaceId}/event-rules/${rule.id}/rotate-secret`, {
      token: w.apiKey,
    });
    const newSecret: string = rotated.body.signingSecret;
    await w.updateMember('rotated');
    const [req] = await rx.waitFor(1);
    expect(req.headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(req.headers['x-webhook-signature'].match(/v1=/g)).toHaveLength(2);
    expect(new Webhook(newSecret).verify(req.raw.toString('utf8'), req.headers)).toMatchObject({
      event: 'member:updated',
    });
    expect(
      new Webhook(oldSecret, { format: 'raw' }).verify(req.raw.toString('utf8'), req.headers),
    ).toBeTruthy();
    expect(verifyStripeStyle(req.headers['x-webhook-signature'], req.raw, oldSecret)).toBeNull();
    expect(verifyStripeStyle(req.headers['x-webhook-signature'], req.raw, newSecret)).toBeNull();
  });

  it('paces a rule with maxPerSecond without holding back another rule', async () => {
    const slow = await receiver();
    const fast = await receiver();
    const w = await workspace('Paced');
    await w.rule({
      name: 'paced',
      eventType: 'member:updated',
      actionParams: { webhookUrl: slow.url, maxPerSecond: 2 },
    });
    await w.rule({ trigger: 'member:updated', webhookUrl: fast.url });
    // Ten updates, one after another (each PUT waits for its projections: slower on a busy machine).
    for (let i = 0; i < 10; i++) await w.updateMember(`paced ${i}`);
    const updated = Date.now();
    const quick = await fast.waitFor(10, 10_000);
    const paced = await slow.waitFor(10, 20_000);
    // 2 per second: ten take at least 4.5 s from the first; the other rule's did not wait for
    // them: each arrived as its update was made, not at the paced rule's rate.
    expect(paced[9].at - paced[0].at).toBeGreaterThanOrEqual(4300);
    expect(quick[9].at).toBeLessThan(paced[9].at - 1000);
    expect(quick[9].at - updated).toBeLessThan(1000);
  });

  it('recovers every delivery of a rule that ended failed since a time, each with its webhook-id', async () => {
    const rx = await receiver();
    let healthy = false;
    rx.reply = () => (healthy ? { status: 200 } : { status: 500 });
    const w = await workspace('Recover');
    const rule = await w.rule({ trigger: 'member:updated', webhookUrl: rx.url });
    const since = new Date().toISOString();
    for (let i = 0; i < 3; i++) await w.updateMember(`lost ${i}`);
    const failed = await eventually(
      async () => {
        const l = await w.logs('?status=failed');
        return l.total === 3 ? l.items : undefined;
      },
      'three failed deliveries',
      20_000,
    );
    healthy = true;
    const res = await t.request('POST', `/w/${w.workspaceId}/webhook-logs/recover`, {
      token: w.apiKey,
      body: { ruleId: rule.id, since },
    });
    expect(res.status).toBe(202);
    expect(res.body.requeued).toBe(3);
    const ok = await eventually(async () => {
      const l = await w.logs('?status=succeeded');
      return l.total === 3 ? l.items : undefined;
    }, 'three recovered deliveries');
    expect(new Set(ok.map((d: { id: string }) => d.id))).toEqual(
      new Set(failed.map((d: { id: string }) => d.id)),
    );
    const lastIds = rx.received.slice(-3).map((r) => r.headers['webhook-id']);
    expect(new Set(lastIds)).toEqual(new Set(failed.map((d: { id: string }) => d.id)));
    const bad = await t.request('POST', `/w/${w.workspaceId}/webhook-logs/recover`, {
      token: w.apiKey,
      body: { ruleId: rule.id, since: 'yesterday' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/^since/);
  });

  it('filters the logs by rule, type (aliases too), status and time, newest first', async () => {
    const rx = await receiver();
    const w = await workspace('Logs');
    const a = await w.rule({ trigger: 'member:updated', webhookUrl: rx.url });
    const b = await w.rule({ trigger: 'member:updated', webhookUrl: rx.url });
    const before = new Date().toISOString();
    await w.updateMember(1);
    await w.updateMember(2);
    await eventually(async () => (await w.logs('?status=succeeded')).total === 4, 'four deliveries');
    const all = await w.logs();
    expect(all.total).toBe(4);
    const times = all.items.map((d: { createdAt: string }) => d.createdAt);
    expect([...times].sort().reverse()).toEqual(times);
    expect((await w.logs(`?ruleId=${a.id}`)).total).toBe(2);
    expect((await w.logs(`?ruleId=${b.id}&pageSize=1`)).items).toHaveLength(1);
    expect((await w.logs('?eventType=member:updated')).total).toBe(4);
    expect((await w.logs('?eventType=record.created')).total).toBe(0);
    expect((await w.logs(`?from=${encodeURIComponent(before)}`)).total).toBe(4);
    expect((await w.logs(`?to=${encodeURIComponent(before)}`)).total).toBe(0);
    const bad = await t.request('GET', `/w/${w.workspaceId}/webhook-logs?status=lost`, { token: w.apiKey });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/^status/);
  });

  it('disables a rule whose every delivery failed for the configured period, keeping its logs', async () => {
    const rx = await receiver();
    rx.reply = () => ({ status: 500 });
    const w = await workspace('Sustained');
    const rule = await w.rule({ trigger: 'member:updated', webhookUrl: rx.url });
    await w.updateMember('first');
    await eventually(async () => (await w.logs('?status=failed')).total === 1, 'a first failure', 15_000);
    await new Promise((r) => setTimeout(r, 6500));
    await w.updateMember('second');
    const disabled = await eventually(
      async () => {
        const r = await t.request('GET', `/w/${w.workspaceId}/event-rules/${rule.id}`, { token: w.apiKey });
        return r.body.enabled === false ? r.body : undefined;
      },
      'the rule to be disabled',
      15_000,
    );
    expect(disabled.disabledReason).toBe('sustained_failure');
    const events = await t.store.readStream(`eventrule-${rule.id}`);
    expect(events.map((e) => e.type)).toEqual(['EventRuleCreated', 'EventRuleDisabled']);
    expect((await w.logs()).total).toBe(2);
  }, 60_000);
});
