import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/app';
import { customRole, keyWithScopes } from '../support/identity-fixtures';
import { addMember } from '../support/member-fixtures';
import { eventually } from '../support/processes';
import { startReceiver, WebhookReceiver } from '../support/webhook-receiver';

/**
 * A rule's deliveries never carry data its author could not read through the API: the read
 * scope of the event's resource is needed to save the rule, and the author's reach as it
 * stands (credential scopes ∩ current role) is checked again before every delivery.
 */
describe('event rules: bounded by their author (e2e)', () => {
  let t: TestApp;
  let rx: WebhookReceiver;

  beforeAll(async () => {
    t = await startTestApp({
      env: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
    });
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx.close();
    await t.close();
  });

  it('refuses a rule for events the credential cannot read (403 {detail}, nothing appended)', async () => {
    const owner = await t.bootstrap('Narrow keys');
    const wid = owner.workspaceId;
    const narrow = await keyWithScopes(t, owner.apiKey, ['automations:write']);
    const cases: [string, string][] = [
      ['member:updated', 'members:read'],
      ['chat:created', 'chats:read'],
      ['chat.message.created', 'chats:read'],
      ['call:completed', 'chats:read'],
      ['message:received', 'chats:read'],
      ['email.received', 'chats:read'],
      ['task.created', 'assignments:read'],
      ['workflow.failed', 'workflows:read'],
      ['record.created', 'records:admin'],
    ];
    for (const [eventType, scope] of cases) {
      const res = await t.request('POST', `/w/${wid}/event-rules`, {
        token: narrow,
        body: { name: 'leak', eventType, actionParams: { webhookUrl: rx.url } },
      });
      expect({ eventType, status: res.status, detail: res.body.detail }).toEqual({
        eventType,
        status: 403,
        detail: expect.stringMatching(new RegExp(`^eventType: a rule for \\S+ .*the scope ${scope}`)),
      });
      expect(await t.eventsOf(res)).toEqual([]);
    }
    // The short form names its field.
    const short = await t.request('POST', `/w/${wid}/event-rules`, {
      token: narrow,
      body: { trigger: 'task.updated', action: 'webhook:send', webhookUrl: rx.url },
    });
    expect(short.status).toBe(403);
    expect(short.body.detail).toMatch(/^trigger: .*assignments:read/);

    // With the scope, the same key may; and it may not retype the rule beyond its reach.
    const chats = await keyWithScopes(t, owner.apiKey, ['automations:write', 'chats:read']);
    const ok = await t.request('POST', `/w/${wid}/event-rules`, {
      token: chats,
      body: { name: 'chats', eventType: 'chat:created', actionParams: { webhookUrl: rx.url } },
    });
    expect(ok.status).toBe(201);
    const retype = await t.request('PUT', `/w/${wid}/event-rules/${ok.body.id}`, {
      token: chats,
      body: { eventType: 'member:updated' },
    });
    expect(retype.status).toBe(403);
    expect(retype.body.detail).toMatch(/members:read/);
    expect(await t.eventsOf(retype)).toEqual([]);
  });

  it("stops delivering once the author's role no longer reads the events, and logs why", async () => {
    const owner = await t.bootstrap('Demotion');
    const wid = owner.workspaceId;
    const roleId = await customRole(t, wid, owner.apiKey, 'Automator', [
      'automations:write',
      'webhooks:read',
      'members:read',
    ]);
    // Another account joins the workspace with that role and makes the rule with its own key.
    const author = await t.bootstrap('Author home');
    await addMember(t, { workspaceId: wid, roleId, accountUuid: author.accountUuid });
    const rule = await t.request('POST', `/w/${wid}/event-rules`, {
      token: author.apiKey,
      body: { name: 'members out', eventType: 'member:updated', actionParams: { webhookUrl: rx.url } },
    });
    expect(rule.status).toBe(201);
    const ruleId = rule.body.id as number;
    const mine = (r: { body: { eventRule?: { id: number } } }) => r.body?.eventRule?.id === ruleId;

    const rename = async (name: string) => {
      const res = await t.request('PUT', `/w/${wid}/members/${owner.memberId}`, {
        token: owner.apiKey,
        body: { name },
      });
      expect(res.status).toBe(200);
    };
    await rename('Before demotion');
    const [first] = await rx.waitFor(1, 10_000, mine);
    expect(first.body.member.name).toBe('Before demotion');

    // The owner takes members:read away from the author's role.
    const demote = await t.request('PUT', `/w/${wid}/member-roles/${roleId}`, {
      token: owner.apiKey,
      body: { permissions: ['automations:write', 'webhooks:read'] },
    });
    expect(demote.status).toBe(200);
    await rename('After demotion');

    const refused = await eventually(async () => {
      const logs = await t.request('GET', `/w/${wid}/webhook-logs?ruleId=${ruleId}&status=failed`, {
        token: owner.apiKey,
      });
      return (
        logs.body.items as { attempts: { error: string | null; responseStatus: number | null }[] }[]
      )[0];
    }, 'the refused delivery');
    expect(refused.attempts).toHaveLength(1);
    expect(refused.attempts[0]).toMatchObject({
      responseStatus: null,
      error: expect.stringMatching(/^not sent: .*members:read/),
    });
    // Nothing after the demotion reached the receiver.
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.received.filter(mine).map((r) => r.body.member.name)).toEqual(['Before demotion']);

    // Given back, the rule delivers new events again.
    const restore = await t.request('PUT', `/w/${wid}/member-roles/${roleId}`, {
      token: owner.apiKey,
      body: { permissions: ['automations:write', 'webhooks:read', 'members:read'] },
    });
    expect(restore.status).toBe(200);
    await rename('Restored');
    const again = await rx.waitFor(2, 10_000, mine);
    expect(again.map((r) => r.body.member.name)).toEqual(['Before demotion', 'Restored']);
  });

  it('stops delivering once the author is no longer a member of the workspace', async () => {
    const owner = await t.bootstrap('Removal');
    const wid = owner.workspaceId;
    const roleId = await customRole(t, wid, owner.apiKey, 'Automator', ['automations:write', 'members:read']);
    const author = await t.bootstrap('Leaver home');
    const { memberId } = await addMember(t, { workspaceId: wid, roleId, accountUuid: author.accountUuid });
    const rule = await t.request('POST', `/w/${wid}/event-rules`, {
      token: author.apiKey,
      body: { trigger: 'member:updated', webhookUrl: rx.url },
    });
    expect(rule.status).toBe(201);
    const ruleId = rule.body.id as number;
    const removed = await t.request('DELETE', `/w/${wid}/members/${memberId}`, { token: owner.apiKey });
    expect(removed.status).toBe(200);
    const put = await t.request('PUT', `/w/${wid}/members/${owner.memberId}`, {
      token: owner.apiKey,
      body: { name: 'After the author left' },
    });
    expect(put.status).toBe(200);
    const refused = await eventually(async () => {
      const logs = await t.request('GET', `/w/${wid}/webhook-logs?ruleId=${ruleId}`, { token: owner.apiKey });
      const items = logs.body.items as { status: string; attempts: { error: string | null }[] }[];
      return items.find((d) => d.status === 'failed');
    }, 'the refused delivery');
    expect(refused.attempts[0].error).toMatch(/^not sent: .*no longer an active member/);
    expect(rx.received.filter((r) => r.body?.eventRule?.id === ruleId)).toEqual([]);
  });

  it('sends nothing for a rule without an author (saved before authors were kept) until it is saved again', async () => {
    const owner = await t.bootstrap('Legacy rule');
    const wid = owner.workspaceId;
    const rule = await t.request('POST', `/w/${wid}/event-rules`, {
      token: owner.apiKey,
      body: { name: 'legacy', eventType: 'member:updated', actionParams: { webhookUrl: rx.url } },
    });
    expect(rule.status).toBe(201);
    const ruleId = rule.body.id as number;
    const mine = (r: { body: { eventRule?: { id: number } } }) => r.body?.eventRule?.id === ruleId;
    // The rule as one saved before the author column existed has it: no author.
    await t.app.get(DataSource).query(`UPDATE event_rules SET author = NULL WHERE id = $1`, [ruleId]);
    const rename = async (name: string) => {
      const res = await t.request('PUT', `/w/${wid}/members/${owner.memberId}`, {
        token: owner.apiKey,
        body: { name },
      });
      expect(res.status).toBe(200);
    };
    await rename('Unbounded');
    const refused = await eventually(async () => {
      const logs = await t.request('GET', `/w/${wid}/webhook-logs?ruleId=${ruleId}&status=failed`, {
        token: owner.apiKey,
      });
      return (
        logs.body.items as { attempts: { error: string | null; responseStatus: number | null }[] }[]
      )[0];
    }, 'the refused delivery');
    expect(refused.attempts).toHaveLength(1);
    expect(refused.attempts[0]).toMatchObject({
      responseStatus: null,
      error: expect.stringMatching(/^not sent: the rule has no recorded author/),
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.received.filter(mine)).toEqual([]);

    // A caller who may read the events saves it again and becomes its author: it delivers.
    const adopt = await t.request('PUT', `/w/${wid}/event-rules/${ruleId}`, {
      token: owner.apiKey,
      body: { name: 'legacy, adopted' },
    });
    expect(adopt.status).toBe(200);
    await t.expectEvents(adopt, [
      {
        type: 'EventRuleUpdated',
        data: { author: { memberId: owner.memberId, accountUuid: owner.accountUuid } },
      },
    ]);
    await rename('Bounded');
    const [delivered] = await rx.waitFor(1, 10_000, mine);
    expect(delivered.body.member.name).toBe('Bounded');
  });
});
