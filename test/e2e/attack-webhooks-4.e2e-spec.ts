import { DeliveryLog } from '../../src/modules/automation/delivery/delivery-log';
import { startTestApp, TestApp } from '../support/app';
import { eventually } from '../support/processes';
import { startReceiver, WebhookReceiver } from '../support/webhook-receiver';

/**
 * A careless or hostile API client against event rules, fourth round: a test send racing
 * the rule's DELETE, bodies sent to the operations that take none (a client believing it
 * chose its own secret on rotate-secret), recovery and redelivery for a rule that cannot
 * send, the attempt numbers an auditor reads after a redelivery, and a rule created stopped.
 */
describe('attack: event rules, fourth round (e2e)', () => {
  let t: TestApp;
  let rx: WebhookReceiver;

  beforeAll(async () => {
    t = await startTestApp({
      env: {
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_RETRY_DELAYS_MS: '50,50',
      },
    });
    rx = await startReceiver();
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await rx.close();
    await t.close();
  });

  async function workspace(name: string) {
    const w = await t.bootstrap(name);
    const rule = async (body: Record<string, unknown> = {}) => {
      const res = await t.request('POST', `/w/${w.workspaceId}/event-rules`, {
        token: w.apiKey,
        body: { trigger: 'member:updated', webhookUrl: rx.url, ...body },
      });
      expect(res.status).toBe(201);
      return res;
    };
    const updateMember = async (name: string) => {
      const res = await t.request('PUT', `/w/${w.workspaceId}/members/${w.memberId}`, {
        token: w.apiKey,
        body: { name },
      });
      expect(res.status).toBe(200);
    };
    const logs = async (query = '') =>
      (await t.request('GET', `/w/${w.workspaceId}/webhook-logs${query}`, { token: w.apiKey })).body;
    const failedDelivery = async (ruleId: number) => {
      rx.reply = () => ({ status: 500 });
      await updateMember(`fails ${ruleId}`);
      return eventually(
        async () => (await logs(`?status=failed&ruleId=${ruleId}`)).items[0],
        'a failed delivery',
      );
    };
    return { ...w, rule, updateMember, logs, failedDelivery };
  }

  it('answers a test send whose rule is deleted meanwhile with 404, never 500, and sends nothing', async () => {
    const w = await workspace('Test racing delete');
    const created = (await w.rule()).body as { id: number };
    const path = `/w/${w.workspaceId}/event-rules/${created.id}`;
    // The DELETE lands between the test's read of the rule and its send (the race, made certain).
    const log = t.app.get(DeliveryLog, { strict: false });
    const insertPending = log.insertPending.bind(log);
    jest.spyOn(log, 'insertPending').mockImplementationOnce(async (rows) => {
      const deleted = await t.request('DELETE', path, { token: w.apiKey });
      expect(deleted.status).toBe(204);
      return insertPending(rows);
    });
    const before = rx.received.length;
    const res = await t.request('POST', `${path}/test`, { token: w.apiKey });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'Event rule not found' });
    expect(rx.received).toHaveLength(before);
    // The test is in the log as not sent, not left pending.
    const logged = await w.logs(`?ruleId=${created.id}`);
    expect(logged.items).toHaveLength(1);
    expect(logged.items[0]).toMatchObject({
      isTest: true,
      status: 'failed',
      attempts: [{ attempt: 1, error: 'not sent: the rule was deleted', responseStatus: null }],
    });
  });

  it('refuses fields sent to rotate-secret, test and redeliver (400 naming them), and takes none, an empty body or {}', async () => {
    const w = await workspace('Bodies');
    const created = (await w.rule({ signingSecret: 'the-secret-i-hold-now' })).body as { id: number };
    const rulePath = `/w/${w.workspaceId}/event-rules/${created.id}`;
    const before = await t.request('GET', rulePath, { token: w.apiKey });

    // A client that believes it set its own secret.
    const mine = await t.request('POST', `${rulePath}/rotate-secret`, {
      token: w.apiKey,
      body: { signingSecret: 'mine' },
    });
    expect(mine.status).toBe(400);
    expect(mine.body.detail).toMatch(/^signingSecret: unknown field/);
    await t.expectEvents(mine, []);
    const two = await t.request('POST', `${rulePath}/rotate-secret`, {
      token: w.apiKey,
      body: { signingSecret: 'mine', overlapHours: 0 },
    });
    expect(two.status).toBe(400);
    expect(two.body.detail).toMatch(/^signingSecret: unknown field; overlapHours: unknown field/);
    const list = await t.request('POST', `${rulePath}/rotate-secret`, { token: w.apiKey, body: ['mine'] });
    expect(list.status).toBe(400);
    expect(list.body.detail).toMatch(/^body: this operation takes no body/);
    const after = await t.request('GET', rulePath, { token: w.apiKey });
    expect(after.headers.get('etag')).toBe(before.headers.get('etag'));

    rx.reply = () => ({ status: 200 });
    const sent = rx.received.length;
    const test = await t.request('POST', `${rulePath}/test`, {
      token: w.apiKey,
      body: { event: 'data_record:created' },
    });
    expect(test.status).toBe(400);
    expect(test.body.detail).toMatch(/^event: unknown field/);
    expect((await w.logs(`?ruleId=${created.id}`)).total).toBe(0);
    expect(rx.received).toHaveLength(sent);

    // None, an empty body with Content-Type: application/json, or {}: fine.
    for (const opts of [{}, { raw: '' }, { body: {} }]) {
      const ok = await t.request('POST', `${rulePath}/rotate-secret`, { token: w.apiKey, ...opts });
      expect(ok.status).toBe(200);
      expect(ok.body.signingSecret).toEqual(expect.any(String));
      const sample = await t.request('POST', `${rulePath}/test`, { token: w.apiKey, ...opts });
      expect(sample.status).toBe(200);
    }

    const failed = await w.failedDelivery(created.id);
    const redeliverPath = `/w/${w.workspaceId}/webhook-logs/${failed.id}/redeliver`;
    const redo = await t.request('POST', redeliverPath, { token: w.apiKey, body: { webhookUrl: rx.url } });
    expect(redo.status).toBe(400);
    expect(redo.body.detail).toMatch(/^webhookUrl: unknown field/);
    const still = await t.request('GET', `/w/${w.workspaceId}/webhook-logs/${failed.id}`, {
      token: w.apiKey,
    });
    expect(still.body).toMatchObject({ status: 'failed', redeliveries: 0 });
    rx.reply = () => ({ status: 200 });
    const ok = await t.request('POST', redeliverPath, { token: w.apiKey, raw: '' });
    expect(ok.status).toBe(202);
  });

  it('refuses to recover or redeliver for a disabled rule (409 naming it), and recovers once it is enabled', async () => {
    const w = await workspace('Disabled recovery');
    const since = new Date().toISOString();
    const created = (await w.rule()).body as { id: number };
    const failed = await w.failedDelivery(created.id);
    const rulePath = `/w/${w.workspaceId}/event-rules/${created.id}`;
    const off = await t.request('PUT', rulePath, { token: w.apiKey, body: { enabled: false } });
    expect(off.body.enabled).toBe(false);

    rx.reply = () => ({ status: 200 });
    const sent = rx.received.length;
    const recover = await t.request('POST', `/w/${w.workspaceId}/webhook-logs/recover`, {
      token: w.apiKey,
      body: { ruleId: created.id, since },
    });
    expect(recover.status).toBe(409);
    expect(recover.body.detail).toBe(
      `ruleId: event rule ${created.id} is disabled; enable it (PUT enabled: true), then recover`,
    );
    const redeliver = await t.request('POST', `/w/${w.workspaceId}/webhook-logs/${failed.id}/redeliver`, {
      token: w.apiKey,
    });
    expect(redeliver.status).toBe(409);
    expect(redeliver.body.detail).toBe(
      `Event rule ${created.id} of this delivery is disabled; enable it (PUT enabled: true), then redeliver`,
    );
    const still = await t.request('GET', `/w/${w.workspaceId}/webhook-logs/${failed.id}`, {
      token: w.apiKey,
    });
    expect(still.body).toMatchObject({ status: 'failed', redeliveries: 0, attemptCount: 3 });
    expect(rx.received).toHaveLength(sent);

    await t.request('PUT', rulePath, { token: w.apiKey, body: { enabled: true } });
    const again = await t.request('POST', `/w/${w.workspaceId}/webhook-logs/recover`, {
      token: w.apiKey,
      body: { ruleId: created.id, since },
    });
    expect(again.status).toBe(202);
    expect(again.body.deliveryIds).toEqual([failed.id]);
    await eventually(
      async () => (await w.logs(`?status=succeeded&ruleId=${created.id}`)).total === 1,
      'the recovered delivery',
    );

    // A deleted rule's delivery cannot be sent either.
    const gone = await w.rule();
    const lost = await w.failedDelivery(gone.body.id);
    await t.request('DELETE', `/w/${w.workspaceId}/event-rules/${gone.body.id}`, { token: w.apiKey });
    const orphan = await t.request('POST', `/w/${w.workspaceId}/webhook-logs/${lost.id}/redeliver`, {
      token: w.apiKey,
    });
    expect(orphan.status).toBe(409);
    expect(orphan.body.detail).toMatch(
      new RegExp(`^Event rule ${gone.body.id} of this delivery was deleted`),
    );
  });

  it('numbers attempts on across a redelivery: one number per attempt of a webhook-id', async () => {
    const w = await workspace('Attempt numbers');
    const created = (await w.rule()).body as { id: number };
    const failed = await w.failedDelivery(created.id);
    expect(failed.attempts.map((a: { attempt: number }) => a.attempt)).toEqual([1, 2, 3]);

    // The redelivery fails once more, then succeeds on its retry.
    let answers = 0;
    rx.reply = () => ({ status: answers++ === 0 ? 503 : 200 });
    const redo = await t.request('POST', `/w/${w.workspaceId}/webhook-logs/${failed.id}/redeliver`, {
      token: w.apiKey,
    });
    expect(redo.status).toBe(202);
    const done = await eventually(async () => {
      const d = (await t.request('GET', `/w/${w.workspaceId}/webhook-logs/${failed.id}`, { token: w.apiKey }))
        .body;
      return d.status === 'succeeded' ? d : undefined;
    }, 'the redelivery to succeed');
    expect(done.attempts.map((a: { attempt: number }) => a.attempt)).toEqual([1, 2, 3, 4, 5]);
    expect(done.attempts.map((a: { responseStatus: number }) => a.responseStatus)).toEqual([
      500, 500, 500, 503, 200,
    ]);
    expect(done).toMatchObject({ attemptCount: 5, redeliveries: 1 });
    // The redelivery had its own round of retries (the schedule restarts), not none left.
    expect(done.attempts[3].nextRetryAt).toEqual(expect.any(String));
  });

  it('creates a rule stopped in one event carrying enabled: false, never enabled in between', async () => {
    const w = await workspace('Created stopped');
    const stopped = await w.rule({ enabled: false });
    expect(stopped.body).toMatchObject({ enabled: false, disabledReason: 'manual' });
    await t.expectEvents(stopped, [
      { type: 'EventRuleCreated', stream: `eventrule-${stopped.body.id}`, data: { enabled: false } },
    ]);
    const started = await w.rule({ enabled: true });
    const [event] = await t.expectEvents(started, [{ type: 'EventRuleCreated' }]);
    expect(event.data).not.toHaveProperty('enabled');
    // Enabled later, it delivers new events (and only those).
    rx.reply = () => ({ status: 200 });
    await t.request('PUT', `/w/${w.workspaceId}/event-rules/${stopped.body.id}`, {
      token: w.apiKey,
      body: { enabled: true },
    });
    await w.updateMember('after enabling');
    const delivered = await eventually(
      async () => (await w.logs(`?ruleId=${stopped.body.id}`)).items[0],
      'a delivery of the enabled rule',
    );
    expect(delivered).toMatchObject({ status: 'succeeded' });
  });
});

/**
 * A client creating rules without end (a loop, a script run twice): one event would fan
 * out to every one of them. EVENT_RULES_MAX_PER_WORKSPACE bounds them, racing creations too.
 */
describe('attack: event rules without end (e2e)', () => {
  let t: TestApp;
  const publicUrl = 'https://93.184.216.34/hook';

  beforeAll(async () => {
    t = await startTestApp({ env: { EVENT_RULES_MAX_PER_WORKSPACE: '3' } });
  });
  afterAll(() => t.close());

  it('creates at most EVENT_RULES_MAX_PER_WORKSPACE rules per workspace, racing creations included; 409 beyond', async () => {
    const w = await t.bootstrap('Capped');
    const create = (body: Record<string, unknown> = {}) =>
      t.request('POST', `/w/${w.workspaceId}/event-rules`, {
        token: w.apiKey,
        body: { trigger: 'member:updated', webhookUrl: publicUrl, ...body },
      });
    const answers = await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map((i) => create({ enabled: i % 2 === 0 })));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 201, 409, 409, 409, 409, 409]);
    const refused = answers.find((a) => a.status === 409)!;
    expect(refused.body.detail).toBe(
      'This workspace has 3 event rules, the most it may have (EVENT_RULES_MAX_PER_WORKSPACE); delete one first',
    );
    await t.expectEvents(refused, []);
    const list = await t.request('GET', `/w/${w.workspaceId}/event-rules`, { token: w.apiKey });
    expect(list.body.total).toBe(3);

    // Disabled rules count too; another workspace has its own room.
    const other = await t.bootstrap('Not capped by them');
    const theirs = await t.request('POST', `/w/${other.workspaceId}/event-rules`, {
      token: other.apiKey,
      body: { trigger: 'member:updated', webhookUrl: publicUrl },
    });
    expect(theirs.status).toBe(201);
    expect((await create({ enabled: false })).status).toBe(409);

    // A deleted rule frees its place.
    const first = list.body.items[0] as { id: number };
    const del = await t.request('DELETE', `/w/${w.workspaceId}/event-rules/${first.id}`, { token: w.apiKey });
    expect(del.status).toBe(204);
    expect((await create()).status).toBe(201);
    expect((await create()).status).toBe(409);
  });
});
