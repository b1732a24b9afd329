import { Webhook } from 'standardwebhooks';
import { startTestApp, TestApp } from '../support/app';
import { customRole } from '../support/identity-fixtures';
import { addMember } from '../support/member-fixtures';
import { eventually } from '../support/processes';
import { startReceiver, verifyStripeStyle, WebhookReceiver } from '../support/webhook-receiver';

/**
 * A rule changed while its deliveries are queued or waiting in the worker (behind a slow
 * receiver holding the rule's only POST slot): once the change is answered 2xx, no POST
 * starts to the old URL, for a disabled or deleted rule, or signed without the new secret.
 * The worker keeps rule columns per rule version and parsed URLs per process: neither may
 * outlive the change.
 */
describe('attack: webhook rules changed while deliveries wait (e2e)', () => {
  let t: TestApp;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    t = await startTestApp({
      env: {
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_RETRY_DELAYS_MS: '100,200',
        WEBHOOK_TIMEOUT_MS: '2500',
        // One POST in flight per rule: the next delivery waits in the worker for it.
        WEBHOOK_RULE_CONCURRENCY: '1',
        // 3.6 s of overlap after a rotation.
        WEBHOOK_SECRET_OVERLAP_HOURS: '0.001',
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

  async function setup(name: string, secret?: string) {
    const w = await t.bootstrap(name);
    const old = await receiver();
    const rule = await t.request('POST', `/w/${w.workspaceId}/event-rules`, {
      token: w.apiKey,
      body: { trigger: 'member:updated', webhookUrl: old.url, ...(secret ? { signingSecret: secret } : {}) },
    });
    expect(rule.status).toBe(201);
    const update = async (n: string) => {
      const res = await t.request('PUT', `/w/${w.workspaceId}/members/${w.memberId}`, {
        token: w.apiKey,
        body: { name: n },
      });
      expect(res.status).toBe(200);
    };
    const logs = async (query = '') =>
      (await t.request('GET', `/w/${w.workspaceId}/webhook-logs${query}`, { token: w.apiKey })).body;
    return { ...w, old, ruleId: rule.body.id as number, update, logs };
  }

  /** The first delivery hangs at the old receiver; the second waits in the worker for the slot. */
  async function holdSecondInWorker(s: Awaited<ReturnType<typeof setup>>) {
    s.old.reply = (r) => (r.n === 1 ? 'hang' : { status: 200 });
    await s.update('first');
    await s.old.waitFor(1);
    await s.update('second');
    // Both deliveries are in this worker: the second one loaded and waiting for the slot.
    await new Promise((r) => setTimeout(r, 400));
  }

  it('sends nothing more to the old URL once a PUT moved the rule elsewhere', async () => {
    const s = await setup('Moved');
    await holdSecondInWorker(s);
    const moved = await receiver();
    const put = await t.request('PUT', `/w/${s.workspaceId}/event-rules/${s.ruleId}`, {
      token: s.apiKey,
      body: { webhookUrl: moved.url },
    });
    expect(put.status).toBe(200);
    const got = await moved.waitFor(2, 15_000);
    expect(got.map((r) => r.body.member.name).sort()).toEqual(['first', 'second']);
    expect(s.old.received).toHaveLength(1);
  });

  it.each([
    ['disabled', 'PUT', { enabled: false }, /the rule is disabled/],
    ['deleted', 'DELETE', undefined, /the rule was deleted/],
  ] as const)(
    'starts no POST for a rule %s while its deliveries wait',
    async (what, method, body, reason) => {
      const s = await setup(`Stopped ${what}`);
      await holdSecondInWorker(s);
      const res = await t.request(method, `/w/${s.workspaceId}/event-rules/${s.ruleId}`, {
        token: s.apiKey,
        ...(body ? { body } : {}),
      });
      expect(res.status).toBeLessThan(300);
      const done = await eventually(
        async () => {
          const l = await s.logs('?status=failed');
          return l.total === 2 ? l.items : undefined;
        },
        'both deliveries failed',
        15_000,
      );
      expect(s.old.received).toHaveLength(1);
      // The hung first attempt timed out, its retry found the rule off; the waiting one too.
      for (const d of done) expect(d.attempts.at(-1).error).toMatch(reason);
    },
  );

  it("starts no POST for a delivery whose rule's author left the workspace while it waited", async () => {
    const owner = await t.bootstrap('Author leaves');
    const wid = owner.workspaceId;
    const roleId = await customRole(t, wid, owner.apiKey, 'Automator', ['automations:write', 'members:read']);
    const author = await t.bootstrap('Author home');
    const { memberId } = await addMember(t, { workspaceId: wid, roleId, accountUuid: author.accountUuid });
    const old = await receiver();
    const rule = await t.request('POST', `/w/${wid}/event-rules`, {
      token: author.apiKey,
      body: { trigger: 'member:updated', webhookUrl: old.url },
    });
    expect(rule.status).toBe(201);
    const s = {
      old,
      update: async (n: string) => {
        const res = await t.request('PUT', `/w/${wid}/members/${owner.memberId}`, {
          token: owner.apiKey,
          body: { name: n },
        });
        expect(res.status).toBe(200);
      },
    };
    await holdSecondInWorker(s as Awaited<ReturnType<typeof setup>>);
    const removed = await t.request('DELETE', `/w/${wid}/members/${memberId}`, { token: owner.apiKey });
    expect(removed.status).toBe(200);
    const done = await eventually(
      async () => {
        const l = await t.request('GET', `/w/${wid}/webhook-logs?status=failed`, { token: owner.apiKey });
        return l.body.total === 2 ? l.body.items : undefined;
      },
      'both deliveries refused',
      15_000,
    );
    for (const d of done) expect(d.attempts.at(-1).error).toMatch(/^not sent: .*no longer an active member/);
    expect(old.received).toHaveLength(1);
  });

  it('signs with the new secret (and the old, in the overlap) once a rotation is answered, then with the new only', async () => {
    const oldSecret = 'rotation-in-flight-old-secret-1';
    const s = await setup('Rotated in flight', oldSecret);
    await holdSecondInWorker(s);
    const rotated = await t.request('POST', `/w/${s.workspaceId}/event-rules/${s.ruleId}/rotate-secret`, {
      token: s.apiKey,
    });
    expect(rotated.status).toBe(200);
    const newSecret: string = rotated.body.signingSecret;
    const got = await s.old.waitFor(3, 15_000);
    // Every POST started after the rotation was answered verifies with the new secret.
    for (const r of got.slice(1)) {
      expect(verifyStripeStyle(r.headers['x-webhook-signature'], r.raw, newSecret)).toBeNull();
      expect(verifyStripeStyle(r.headers['x-webhook-signature'], r.raw, oldSecret)).toBeNull();
      expect(new Webhook(newSecret).verify(r.raw.toString('utf8'), r.headers)).toBeTruthy();
    }
    // After the overlap (3.6 s): the new secret only.
    await new Promise((r) =>
      setTimeout(r, Date.parse(rotated.body.previousSecretValidUntil) - Date.now() + 100),
    );
    s.old.reply = () => ({ status: 200 });
    await s.update('after overlap');
    const [late] = await s.old.waitFor(1, 10_000, (r) => r.body.member.name === 'after overlap');
    expect(late.headers['webhook-signature'].split(' ')).toHaveLength(1);
    expect(verifyStripeStyle(late.headers['x-webhook-signature'], late.raw, newSecret)).toBeNull();
    expect(verifyStripeStyle(late.headers['x-webhook-signature'], late.raw, oldSecret)).toBe(
      'no matching signature',
    );
    const log = await s.logs();
    expect(JSON.stringify(log)).not.toContain(newSecret);
    expect(JSON.stringify(log)).not.toContain(oldSecret);
  }, 40_000);

  it('retries to the URL and with the secret of the rule as it is now, not as the first attempt read it', async () => {
    const s = await setup('Moved between retries', 'between-retries-old-secret-1');
    // Keeps failing until moved (Retry-After: 3 leaves time to move it): the retry reads the rule again.
    s.old.reply = () => ({ status: 503, headers: { 'retry-after': '3' } });
    await s.update('retried');
    await s.old.waitFor(1);
    const moved = await receiver();
    const put = await t.request('PUT', `/w/${s.workspaceId}/event-rules/${s.ruleId}`, {
      token: s.apiKey,
      body: { webhookUrl: moved.url, signingSecret: 'between-retries-new-secret-2' },
    });
    expect(put.status).toBe(200);
    const [got] = await moved.waitFor(1, 10_000);
    expect(s.old.received).toHaveLength(1);
    expect(got.headers['webhook-id']).toBe(s.old.received[0].headers['webhook-id']);
    expect(
      verifyStripeStyle(got.headers['x-webhook-signature'], got.raw, 'between-retries-new-secret-2'),
    ).toBeNull();
    const done = await eventually(async () => {
      const l = await s.logs('?status=succeeded');
      return l.items[0];
    }, 'the delivery succeeded');
    expect(done.attempts.map((a: { responseStatus: number }) => a.responseStatus)).toEqual([503, 200]);
  });

  it('queues one redelivery for two racing redeliver requests, and none for a pending or foreign delivery', async () => {
    const s = await setup('Redeliver races');
    s.old.reply = () => ({ status: 500 });
    await s.update('to redeliver');
    const failed = await eventually(async () => (await s.logs('?status=failed')).items[0], 'failed');
    expect(s.old.received).toHaveLength(3);
    s.old.reply = () => 'hang';
    const path = `/w/${s.workspaceId}/webhook-logs/${failed.id}/redeliver`;
    const answers = await Promise.all([1, 2, 3].map(() => t.request('POST', path, { token: s.apiKey })));
    expect(answers.map((a) => a.status).sort()).toEqual([202, 409, 409]);
    await s.old.waitFor(4);
    await new Promise((r) => setTimeout(r, 1000));
    expect(s.old.received).toHaveLength(4);
    expect((await t.request('POST', path, { token: s.apiKey })).status).toBe(409);
    const other = await t.bootstrap('Someone else');
    expect(
      (
        await t.request('POST', `/w/${other.workspaceId}/webhook-logs/${failed.id}/redeliver`, {
          token: other.apiKey,
        })
      ).status,
    ).toBe(404);
    const foreign = await t.request('POST', `/w/${other.workspaceId}/webhook-logs/recover`, {
      token: other.apiKey,
      body: { ruleId: s.ruleId, since: new Date(0).toISOString() },
    });
    expect(foreign.status).toBe(404);
    s.old.reply = () => ({ status: 200 });
  });
});
