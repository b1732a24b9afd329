import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/app';
import { keyWithScopes } from '../support/identity-fixtures';
import { eventually } from '../support/processes';
import { startReceiver, WebhookReceiver } from '../support/webhook-receiver';

/**
 * Event rules as a resource: both request forms, aliases, the fixed list of types, the
 * secret never shown, ETag / If-Match, list filters, scopes, and the URL rules of an app
 * configured as production would be (https only, no private or loopback receivers).
 */
describe('event rules (e2e)', () => {
  let t: TestApp;
  let wid: string;
  let key: string;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    // The URL rules of production: no WEBHOOK_ALLOW_HTTP, no private networks. Saving needs
    // the host to resolve, so rules here point at literal public addresses.
    t = await startTestApp();
    ({ workspaceId: wid, apiKey: key } = await t.bootstrap('Rules'));
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  const publicUrl = 'https://93.184.216.34/hook';

  it('creates a rule in the long form: 201 with Location, the long form back, the secret never', async () => {
    const secret = 'a-long-signing-secret-0123456789';
    const res = await t.request('POST', `/w/${wid}/event-rules`, {
      token: key,
      body: {
        name: 'Members to CRM',
        eventType: 'member:updated',
        actionType: 'webhook:send',
        actionParams: { webhookUrl: publicUrl, signingSecret: secret },
      },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/api/v2/w/${wid}/event-rules/${res.body.id}`);
    expect(res.body).toMatchObject({
      name: 'Members to CRM',
      eventType: 'member:updated',
      actionType: 'webhook:send',
      actionParams: {
        webhookUrl: publicUrl,
        payloadFormat: 'flat',
        maxPerSecond: null,
        hasSigningSecret: true,
      },
      enabled: true,
      hasSigningSecret: true,
    });
    expect(res.body.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.stringify(res.body)).not.toContain(secret);
    const [created] = await t.expectEvents(res, [
      { type: 'EventRuleCreated', stream: `eventrule-${res.body.id}`, data: { eventType: 'member:updated' } },
    ]);
    // At rest the secret is sealed: the event holds no trace of it.
    expect(JSON.stringify(created.data)).not.toContain(secret);
    expect((created.data as { secret: string }).secret).toMatch(/^v1\./);
    const got = await t.request('GET', `/w/${wid}/event-rules/${res.body.id}`, { token: key });
    expect(got.status).toBe(200);
    expect(JSON.stringify(got.body)).not.toContain(secret);
    expect(got.headers.get('etag')).toBe('"1"');
  });

  it('takes the short form and the dotted aliases, answering the long form with the canonical type', async () => {
    const res = await t.request('POST', `/w/${wid}/event-rules`, {
      token: key,
      body: { trigger: 'record.created', action: 'webhook:send', webhookUrl: publicUrl },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'record.created',
      eventType: 'data_record:created',
      actionType: 'webhook:send',
      actionParams: { webhookUrl: publicUrl, hasSigningSecret: false },
    });
    const task = await t.request('POST', `/w/${wid}/event-rules`, {
      token: key,
      body: { name: 'tasks', eventType: 'task.created', actionParams: { webhookUrl: publicUrl } },
    });
    expect(task.status).toBe(201);
    expect(task.body.eventType).toBe('task.created');
    const sms = await t.request('POST', `/w/${wid}/event-rules`, {
      token: key,
      body: { trigger: 'message:received', webhookUrl: publicUrl },
    });
    expect(sms.status).toBe(201);
    const listed = await t.request('GET', `/w/${wid}/event-rules?eventType=record.created`, { token: key });
    expect(listed.body.items.map((r: { id: number }) => r.id)).toEqual([res.body.id]);
  });

  it('refuses an unknown type listing the valid ones, and a field given in both forms', async () => {
    const res = await t.request('POST', `/w/${wid}/event-rules`, {
      token: key,
      body: { name: 'x', eventType: 'member.updated', actionParams: { webhookUrl: publicUrl } },
    });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(
      /^eventType: unknown event type "member.updated"; valid: data_record:created, /,
    );
    expect(res.body.detail).toContain('record.created');
    expect(res.body.detail).toContain('message:received');
    const both = await t.request('POST', `/w/${wid}/event-rules`, {
      token: key,
      body: { name: 'x', eventType: 'member:updated', trigger: 'member:updated', webhookUrl: publicUrl },
    });
    expect(both.status).toBe(400);
    expect(both.body.detail).toMatch(/^trigger: give eventType \(long form\) or trigger/);
    const noUrl = await t.request('POST', `/w/${wid}/event-rules`, {
      token: key,
      body: { name: 'x', eventType: 'member:updated' },
    });
    expect(noUrl.body.detail).toMatch(/^actionParams.webhookUrl: required/);
    const extra = await t.request('POST', `/w/${wid}/event-rules`, {
      token: key,
      body: {
        name: 'x',
        eventType: 'member:updated',
        actionParams: { webhookUrl: publicUrl, colour: 'red' },
      },
    });
    expect(extra.status).toBe(400);
    expect(extra.body.detail).toContain('colour');
    const filters = await t.request('POST', `/w/${wid}/event-rules`, {
      token: key,
      body: {
        name: 'x',
        eventType: 'member:updated',
        channel: 'phone-sms',
        actionParams: { webhookUrl: publicUrl },
      },
    });
    expect(filters.status).toBe(400);
    expect(filters.body.detail).toMatch(/^channel, workflowUuid: filter only chat:summary/);
    const summary = await t.request('POST', `/w/${wid}/event-rules`, {
      token: key,
      body: {
        name: 'sms summaries',
        eventType: 'chat:summary',
        channel: 'phone-sms',
        actionParams: { webhookUrl: publicUrl },
      },
    });
    expect(summary.status).toBe(201);
    expect(summary.body.channel).toBe('phone-sms');
  });

  it.each([
    ['http://93.184.216.34/hook', /must be an https:\/\/ URL/],
    ['https://localhost/hook', /resolves to a loopback, private, link-local or metadata address/],
    ['https://127.0.0.1:8443/hook', /resolves to a loopback/],
    ['https://[::1]/hook', /resolves to a loopback/],
    ['https://10.0.0.5/hook', /resolves to a loopback/],
    ['https://169.254.169.254/latest/meta-data', /metadata address/],
    ['https://[::ffff:192.168.0.1]/hook', /resolves to a loopback/],
    ['https://user:pass@93.184.216.34/hook', /must not carry credentials/],
  ])('refuses the URL %s at save time, writing nothing', async (webhookUrl, detail) => {
    const res = await t.request('POST', `/w/${wid}/event-rules`, {
      token: key,
      body: { name: 'bad', eventType: 'member:updated', actionParams: { webhookUrl } },
    });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^actionParams.webhookUrl: /);
    expect(res.body.detail).toMatch(detail);
    await t.expectEvents(res, []);
    const short = await t.request('POST', `/w/${wid}/event-rules`, {
      token: key,
      body: { trigger: 'member:updated', webhookUrl },
    });
    expect(short.body.detail).toMatch(/^webhookUrl: /);
  });

  it('updates with If-Match, disables and re-enables, filters the list, deletes', async () => {
    const created = await t.request('POST', `/w/${wid}/event-rules`, {
      token: key,
      body: { name: 'to update', eventType: 'chat:created', actionParams: { webhookUrl: publicUrl } },
    });
    const path = `/w/${wid}/event-rules/${created.body.id}`;
    const stale = await t.request('PUT', path, {
      token: key,
      body: { name: 'x' },
      headers: { 'if-match': '"7"' },
    });
    expect(stale.status).toBe(412);
    const put = await t.request('PUT', path, {
      token: key,
      body: { name: 'renamed', enabled: false, actionParams: { payloadFormat: 'envelope', maxPerSecond: 5 } },
      headers: { 'if-match': '"1"' },
    });
    expect(put.status).toBe(200);
    expect(put.headers.get('etag')).toBe('"2"');
    expect(put.body).toMatchObject({
      name: 'renamed',
      enabled: false,
      disabledReason: 'manual',
      actionParams: { payloadFormat: 'envelope', maxPerSecond: 5 },
    });
    const disabled = await t.request('GET', `/w/${wid}/event-rules?enabled=false`, { token: key });
    expect(disabled.body.items.map((r: { id: number }) => r.id)).toContain(created.body.id);
    const enabled = await t.request('GET', `/w/${wid}/event-rules?enabled=true&pageSize=1000`, {
      token: key,
    });
    expect(enabled.body.items.map((r: { id: number }) => r.id)).not.toContain(created.body.id);
    const back = await t.request('PUT', path, { token: key, body: { enabled: true } });
    expect(back.body).toMatchObject({ enabled: true, disabledReason: null });
    const del = await t.request('DELETE', path, { token: key, headers: { 'if-match': '"3"' } });
    expect(del.status).toBe(204);
    await t.expectEvents(del, [{ type: 'EventRuleDeleted', stream: `eventrule-${created.body.id}` }]);
    expect((await t.request('GET', path, { token: key })).status).toBe(404);
  });

  it('keeps rules to their workspace and to the automations and webhooks scopes', async () => {
    const other = await t.bootstrap('Other');
    const mine = await t.request('POST', `/w/${wid}/event-rules`, {
      token: key,
      body: { trigger: 'member:updated', webhookUrl: publicUrl },
    });
    const path = `/w/${other.workspaceId}/event-rules/${mine.body.id}`;
    expect((await t.request('GET', path, { token: other.apiKey })).status).toBe(404);
    expect((await t.request('PUT', path, { token: other.apiKey, body: { name: 'x' } })).status).toBe(404);
    expect((await t.request('DELETE', path, { token: other.apiKey })).status).toBe(404);
    const list = await t.request('GET', `/w/${other.workspaceId}/event-rules`, { token: other.apiKey });
    expect(list.body.total).toBe(0);

    const reader = await keyWithScopes(t, key, ['automations:read']);
    expect((await t.request('GET', `/w/${wid}/event-rules`, { token: reader })).status).toBe(200);
    const denied = await t.request('POST', `/w/${wid}/event-rules`, {
      token: reader,
      body: { trigger: 'member:updated', webhookUrl: publicUrl },
    });
    expect(denied.status).toBe(403);
    expect(denied.body.detail).toContain('automations:write');
    expect((await t.request('GET', `/w/${wid}/webhook-logs`, { token: reader })).status).toBe(403);
    const logReader = await keyWithScopes(t, key, ['webhooks:read']);
    expect((await t.request('GET', `/w/${wid}/webhook-logs`, { token: logReader })).status).toBe(200);
  });

  it('checks the address again at delivery time, on the address it connects to (a name re-bound to 127.0.0.1)', async () => {
    const { workspaceId, apiKey, memberId } = await t.bootstrap('Rebinding');
    const rule = await t.request('POST', `/w/${workspaceId}/event-rules`, {
      token: apiKey,
      body: { trigger: 'member:updated', webhookUrl: publicUrl },
    });
    expect(rule.status).toBe(201);
    // Stands in for a DNS answer that changed after the save-time check: the name the rule
    // holds now resolves to loopback, where a real receiver listens.
    await t.app
      .get(DataSource)
      .query(`UPDATE event_rules SET webhook_url = $2 WHERE id = $1`, [
        rule.body.id,
        `https://localhost:${receiver.port}/hook`,
      ]);
    const put = await t.request('PUT', `/w/${workspaceId}/members/${memberId}`, {
      token: apiKey,
      body: { name: 'Rebound' },
    });
    expect(put.status).toBe(200);
    const log = await eventually(async () => {
      const res = await t.request('GET', `/w/${workspaceId}/webhook-logs`, { token: apiKey });
      return res.body.items[0]?.attempts.length ? res.body.items[0] : undefined;
    }, 'a first attempt');
    expect(log.attempts[0]).toMatchObject({ responseStatus: null });
    expect(log.attempts[0].error).toMatch(/EWEBHOOKFORBIDDEN: localhost resolves to a loopback/);
    expect(receiver.received).toHaveLength(0);
  });

  it('keeps the sealed secret out of every read model column a response is made from', async () => {
    const secret = 'another-secret-that-must-not-leak';
    const res = await t.request('POST', `/w/${wid}/event-rules`, {
      token: key,
      body: { trigger: 'member:updated', webhookUrl: publicUrl, signingSecret: secret },
    });
    const rows = (await t.app
      .get(DataSource)
      .query(`SELECT secret FROM event_rules WHERE id = $1`, [res.body.id])) as { secret: string }[];
    expect(rows[0].secret).toMatch(/^v1\./);
    expect(rows[0].secret).not.toContain(secret);
    const rotated = await t.request('POST', `/w/${wid}/event-rules/${res.body.id}/rotate-secret`, {
      token: key,
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.signingSecret).toMatch(/^whsec_/);
    expect(Date.parse(rotated.body.previousSecretValidUntil)).toBeGreaterThan(Date.now() + 23 * 3600 * 1000);
    const again = await t.request('GET', `/w/${wid}/event-rules/${res.body.id}`, { token: key });
    expect(JSON.stringify(again.body)).not.toContain(rotated.body.signingSecret);
  });
});
