import { Webhook } from 'standardwebhooks';
import { startTestApp, TestApp } from '../support/app';
import { startReceiver, verifyStripeStyle, WebhookReceiver } from '../support/webhook-receiver';

/**
 * A careless or hostile API client against event rules, third round: secrets that no
 * Standard Webhooks verifier can load (and that Node would key with next to nothing),
 * IPv4-compatible IPv6 spellings of loopback and metadata addresses, a PUT naming one
 * chat:summary filter (or null to remove one), and a rule created stopped. Under the URL
 * rules of production (https only, no private networks).
 */
describe('attack: event rules, third round (e2e)', () => {
  let t: TestApp;
  let wid: string;
  let key: string;
  const publicUrl = 'https://93.184.216.34/hook';

  beforeAll(async () => {
    t = await startTestApp();
    ({ workspaceId: wid, apiKey: key } = await t.bootstrap('Third round'));
  });
  afterAll(() => t.close());

  async function rule(body: Record<string, unknown> = { trigger: 'member:updated', webhookUrl: publicUrl }) {
    const res = await t.request('POST', `/w/${wid}/event-rules`, { token: key, body });
    expect(res.status).toBe(201);
    return res;
  }

  /** A 400 naming the field, nothing appended, the rule (if any) as it was. */
  async function refused(
    method: 'POST' | 'PUT',
    path: string,
    body: Record<string, unknown>,
    detail: RegExp,
  ): Promise<void> {
    const before = method === 'PUT' ? await t.request('GET', path, { token: key }) : undefined;
    const res = await t.request(method, path, { token: key, body });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(detail);
    await t.expectEvents(res, []);
    if (before) {
      const after = await t.request('GET', path, { token: key });
      expect(after.body).toEqual(before.body);
      expect(after.headers.get('etag')).toBe(before.headers.get('etag'));
    }
  }

  // Node's base64 decoder skips what is not base64: the first would key the webhook-signature
  // HMAC with no bytes at all (a signature anyone can compute), and the standardwebhooks
  // library throws on every one of them, so no receiver using it could verify a delivery.
  it.each([
    'whsec_!!!!!!!!!!!!!!!!!!!!!!!!',
    'whsec_my-webhook-signing-secret',
    'whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3===',
    'whsec_MDEy MzQ1 Njc4 OWFi Y2Rl ZjAx',
  ])('refuses the signing secret %s, which is not base64 after whsec_', async (secret) => {
    const detail = (field: string) =>
      new RegExp(`^${field.replace('.', '\\.')}: a whsec_ secret must be base64`);
    await refused(
      'POST',
      `/w/${wid}/event-rules`,
      { trigger: 'member:updated', webhookUrl: publicUrl, signingSecret: secret },
      detail('signingSecret'),
    );
    await refused(
      'POST',
      `/w/${wid}/event-rules`,
      {
        name: 'junk secret',
        eventType: 'member:updated',
        actionParams: { webhookUrl: publicUrl, signingSecret: secret },
      },
      detail('actionParams.signingSecret'),
    );
    const existing = await rule();
    const path = `/w/${wid}/event-rules/${existing.body.id}`;
    await refused('PUT', path, { signingSecret: secret }, detail('signingSecret'));
    await refused(
      'PUT',
      path,
      { actionParams: { signingSecret: secret } },
      detail('actionParams.signingSecret'),
    );
  });

  it('still takes whsec_ secrets in base64, padded or not, and secrets without the prefix', async () => {
    for (const signingSecret of [
      'whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3',
      'whsec_QUFBQUFBQUFBQUE=',
      'whsec_QUFBQUFBQUFBQUE',
      'not-whsec-but-utf8-bytes!',
    ]) {
      const res = await rule({ trigger: 'member:updated', webhookUrl: publicUrl, signingSecret });
      expect(res.body.hasSigningSecret).toBe(true);
    }
  });

  // ::a.b.c.d (IPv4-compatible, deprecated) is "unicast" to ipaddr.js; it names 127.0.0.1
  // and the metadata address as much as ::ffff:a.b.c.d does.
  it.each([
    'https://[::127.0.0.1]/hook',
    'https://[::7f00:1]:8443/hook',
    'https://[::169.254.169.254]/latest',
  ])('refuses the IPv4-compatible address %s at save time, in both forms and on PUT', async (webhookUrl) => {
    const detail = /webhookUrl: the host resolves to a loopback, private, link-local or metadata address/;
    await refused('POST', `/w/${wid}/event-rules`, { trigger: 'member:updated', webhookUrl }, detail);
    await refused(
      'POST',
      `/w/${wid}/event-rules`,
      { name: 'compat', eventType: 'member:updated', actionParams: { webhookUrl } },
      detail,
    );
    const existing = await rule();
    await refused('PUT', `/w/${wid}/event-rules/${existing.body.id}`, { webhookUrl }, detail);
  });

  it('changes only the chat:summary filter a PUT names, and removes one (or the rate limit) with null', async () => {
    const wf = '0c4a7d1e-2b3f-4a5c-8d6e-7f8091a2b3c4';
    const summary = await rule({
      trigger: 'chat:summary',
      webhookUrl: publicUrl,
      channel: 'phone-sms',
      actionParams: { maxPerSecond: 2 },
    });
    const path = `/w/${wid}/event-rules/${summary.body.id}`;
    // Naming the workflow kept the channel: the rule must not start delivering every channel's summaries.
    const both = await t.request('PUT', path, { token: key, body: { workflowUuid: wf } });
    expect(both.status).toBe(200);
    expect(both.body).toMatchObject({ channel: 'phone-sms', workflowUuid: wf });
    await t.expectEvents(both, [
      { type: 'EventRuleUpdated', data: { filters: { channel: 'phone-sms', workflowUuid: wf } } },
    ]);
    const moved = await t.request('PUT', path, { token: key, body: { channel: 'email' } });
    expect(moved.body).toMatchObject({ channel: 'email', workflowUuid: wf });
    const anyChannel = await t.request('PUT', path, { token: key, body: { channel: null } });
    expect(anyChannel.status).toBe(200);
    expect(anyChannel.body.workflowUuid).toBe(wf);
    expect(anyChannel.body).not.toHaveProperty('channel');
    expect(anyChannel.body.actionParams.maxPerSecond).toBe(2);
    const unpaced = await t.request('PUT', path, {
      token: key,
      body: { actionParams: { maxPerSecond: null } },
    });
    expect(unpaced.status).toBe(200);
    expect(unpaced.body.actionParams.maxPerSecond).toBeNull();
    expect(unpaced.body.workflowUuid).toBe(wf);
    // Still refused: a filter on a type without filters, and an impossible one.
    await refused('PUT', path, { channel: 'sms' }, /^channel: must be one of/);
    const member = await rule();
    await refused(
      'PUT',
      `/w/${wid}/event-rules/${member.body.id}`,
      { channel: 'email' },
      /^channel, workflowUuid: filter only chat:summary/,
    );
    // On create there is nothing to remove: null is a 400 naming the field (as
    // attack-quiet-summaries-rules pins for the filters).
    for (const [body, detail] of [
      [{ channel: null }, /^channel: must not be null when creating/],
      [{ workflowUuid: null }, /^workflowUuid: must not be null when creating/],
      [
        { actionParams: { webhookUrl: publicUrl, maxPerSecond: null } },
        /^actionParams\.maxPerSecond: must not be null when creating/,
      ],
    ] as const)
      await refused(
        'POST',
        `/w/${wid}/event-rules`,
        { name: 'summaries', eventType: 'chat:summary', actionParams: { webhookUrl: publicUrl }, ...body },
        detail,
      );
  });

  it('creates a rule stopped with enabled: false (the field the response carries), in both forms', async () => {
    const short = await rule({ trigger: 'member:updated', webhookUrl: publicUrl, enabled: false });
    expect(short.body).toMatchObject({ enabled: false, disabledReason: 'manual' });
    // One event: the rule is disabled from its first event on (attack-webhooks-4).
    await t.expectEvents(short, [
      { type: 'EventRuleCreated', stream: `eventrule-${short.body.id}`, data: { enabled: false } },
    ]);
    const long = await rule({
      name: 'stopped',
      eventType: 'chat:created',
      actionType: 'webhook:send',
      actionParams: { webhookUrl: publicUrl },
      enabled: false,
    });
    expect(long.body).toMatchObject({ name: 'stopped', enabled: false });
    const stopped = await t.request('GET', `/w/${wid}/event-rules?enabled=false&pageSize=1000`, {
      token: key,
    });
    expect(stopped.body.items.map((r: { id: number }) => r.id)).toEqual(
      expect.arrayContaining([short.body.id, long.body.id]),
    );
    const started = await rule({ trigger: 'member:updated', webhookUrl: publicUrl, enabled: true });
    expect(started.body).toMatchObject({ enabled: true, disabledReason: null });
    await t.expectEvents(started, [{ type: 'EventRuleCreated' }]);
    await refused(
      'POST',
      `/w/${wid}/event-rules`,
      { trigger: 'member:updated', webhookUrl: publicUrl, enabled: 'no' },
      /^enabled: must be a boolean value/,
    );
  });
});

/**
 * Changes that meet deliveries: a client that rotates a rule's secret twice in a row (it
 * lost the first answer and retried without an Idempotency-Key, or thought better of it)
 * against a receiver that still holds the original secret, which the first rotation
 * promised its overlap; and a client that raises a rule's maxPerSecond under a backlog.
 */
describe('attack: rule changes under delivery (e2e)', () => {
  let t: TestApp;
  let rx: WebhookReceiver;

  beforeAll(async () => {
    t = await startTestApp({ env: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx.close();
    await t.close();
  });

  it('keeps every secret rotated out within its overlap signing, a bounded few', async () => {
    const w = await t.bootstrap('Rotations');
    const original = 'the-original-secret-the-receiver-holds';
    const created = await t.request('POST', `/w/${w.workspaceId}/event-rules`, {
      token: w.apiKey,
      body: { trigger: 'member:updated', webhookUrl: rx.url, signingSecret: original },
    });
    expect(created.status).toBe(201);
    const rotate = async () => {
      const res = await t.request(
        'POST',
        `/w/${w.workspaceId}/event-rules/${created.body.id}/rotate-secret`,
        {
          token: w.apiKey,
        },
      );
      expect(res.status).toBe(200);
      return res.body as { signingSecret: string; previousSecretValidUntil: string };
    };
    const delivered = async (n: number) => {
      const put = await t.request('PUT', `/w/${w.workspaceId}/members/${w.memberId}`, {
        token: w.apiKey,
        body: { name: `Rotated ${n}` },
      });
      expect(put.status).toBe(200);
      return (await rx.waitFor(n))[n - 1];
    };
    const first = await rotate();
    expect(Date.parse(first.previousSecretValidUntil)).toBeGreaterThan(Date.now() + 23 * 3600 * 1000);
    const second = await rotate();

    const req = await delivered(1);
    const body = req.raw.toString('utf8');
    // The original secret's overlap (promised by the first rotation) still runs.
    expect(verifyStripeStyle(req.headers['x-webhook-signature'], req.raw, original)).toBeNull();
    expect(new Webhook(original, { format: 'raw' }).verify(body, req.headers)).toBeTruthy();
    for (const secret of [first.signingSecret, second.signingSecret]) {
      expect(verifyStripeStyle(req.headers['x-webhook-signature'], req.raw, secret)).toBeNull();
      expect(new Webhook(secret).verify(body, req.headers)).toBeTruthy();
    }
    expect(req.headers['webhook-signature'].split(' ')).toHaveLength(3);
    expect(req.headers['x-webhook-signature'].match(/v1=/g)).toHaveLength(3);

    // A rotation loop does not grow the headers without bound: the current secret and the
    // three rotated out last sign; older ones stop.
    const later = [await rotate(), await rotate(), await rotate()];
    const last = await delivered(2);
    expect(last.headers['webhook-signature'].split(' ')).toHaveLength(4);
    expect(last.headers['x-webhook-signature'].match(/v1=/g)).toHaveLength(4);
    for (const secret of [second.signingSecret, ...later.map((r) => r.signingSecret)])
      expect(verifyStripeStyle(last.headers['x-webhook-signature'], last.raw, secret)).toBeNull();
    expect(verifyStripeStyle(last.headers['x-webhook-signature'], last.raw, original)).toBe(
      'no matching signature',
    );
    // The sealed secrets kept for the overlap are no more visible than the others.
    const got = await t.request('GET', `/w/${w.workspaceId}/event-rules/${created.body.id}`, {
      token: w.apiKey,
    });
    for (const r of [first, second, ...later])
      expect(JSON.stringify(got.body)).not.toContain(r.signingSecret);
  });

  it('paces new deliveries at a raised maxPerSecond from now, not behind the backlog of the old rate', async () => {
    const paced = await startReceiver();
    try {
      const w = await t.bootstrap('Raised rate');
      const created = await t.request('POST', `/w/${w.workspaceId}/event-rules`, {
        token: w.apiKey,
        body: {
          name: 'paced',
          eventType: 'member:updated',
          actionParams: { webhookUrl: paced.url, maxPerSecond: 1 },
        },
      });
      expect(created.status).toBe(201);
      const update = async (name: string) => {
        const res = await t.request('PUT', `/w/${w.workspaceId}/members/${w.memberId}`, {
          token: w.apiKey,
          body: { name },
        });
        expect(res.status).toBe(200);
      };
      // A backlog at one per second: eight deliveries, the last about 7 s after the first.
      for (let i = 0; i < 8; i++) await update(`slow ${i}`);
      await paced.waitFor(1);
      const raised = await t.request('PUT', `/w/${w.workspaceId}/event-rules/${created.body.id}`, {
        token: w.apiKey,
        body: { actionParams: { maxPerSecond: 50 } },
      });
      expect(raised.body.actionParams.maxPerSecond).toBe(50);
      const at = Date.now();
      for (let i = 0; i < 3; i++) await update(`fast ${i}`);
      const isFast = (r: { body: any }) => String(r.body?.member?.name).startsWith('fast');
      const fast = await paced.waitFor(3, 15_000, isFast);
      const slow = await paced.waitFor(8, 20_000, (r) => !isFast(r));
      // The new ones came at the new rate, while the backlog still drained at the old one.
      expect(fast[2].at - at).toBeLessThan(3000);
      expect(fast[2].at).toBeLessThan(slow[7].at);
    } finally {
      await paced.close();
    }
  });
});
