import { grants } from '../../src/core/auth/scopes';
import { startTestApp, TestApp, TestResponse } from '../support/app';
import { keyWithScopes, signup } from '../support/identity-fixtures';
import { eventually } from '../support/processes';
import { agentMember, createWorkflow } from '../support/work-fixtures';
import { startReceiver, WebhookReceiver } from '../support/webhook-receiver';

const SECRET = 'attack-inbound-mail-secret';

interface Tenant {
  wid: string;
  key: string;
  memberId: number;
  workflowId: number;
  workflowUuid: string;
  assignmentId: number;
  chatId: number;
  messageId: number;
  phoneId: number;
  inboxId: number;
  ruleId: number;
  deliveryId: string;
}

/**
 * A hostile client against messaging and automation: another tenant's ids in every path and
 * body field, keys holding one scope trying every route, odd input (NUL in inbound mail,
 * huge and negative ids), Idempotency-Key reuse with another body, stale If-Match, and
 * concurrent PUTs.
 */
describe('attack: messaging and automation (e2e)', () => {
  let t: TestApp;
  let rx: WebhookReceiver;
  let a: Tenant;
  let b: Tenant;
  let n = 0;

  async function tenant(name: string): Promise<Tenant> {
    const boot = await t.bootstrap(name, `${name.toLowerCase()}-owner@example.com`);
    const { workspaceId: wid, apiKey: key } = boot;
    const ok = <T = any>(res: TestResponse<T>, status = 201): TestResponse<T> => {
      if (res.status !== status) throw new Error(`${name}: ${res.status} ${JSON.stringify(res.body)}`);
      return res;
    };
    const member = await signup(t, wid, key, { email: `${name.toLowerCase()}-member@example.com` });
    const agent = await agentMember(t, wid, key);
    const wf = await createWorkflow(t, wid, key, { name: `${name} flow`, agentId: agent });
    const assignment = ok(
      await t.request('POST', `/w/${wid}/assignments`, {
        token: key,
        body: { workflowId: wf.id, memberId: member.member.id },
      }),
    );
    const chat = ok(
      await t.request('POST', `/w/${wid}/chats`, {
        token: key,
        body: {
          channel: 'web-chat',
          memberId: member.member.id,
          assistantKind: 'human',
          assistantMemberId: boot.memberId,
          title: `${name} chat`,
        },
      }),
    );
    const message = ok(
      await t.request('POST', `/w/${wid}/chats/${chat.body.id}/messages`, {
        token: key,
        body: { content: `${name} secret message` },
      }),
    );
    const phone = ok(
      await t.request('POST', `/w/${wid}/phone-numbers`, {
        token: key,
        body: { number: `+1415555${String(9000 + ++n).padStart(4, '0')}` },
      }),
    );
    const inbox = ok(
      await t.request('POST', `/w/${wid}/inboxes`, {
        token: key,
        body: { email: `care@${name.toLowerCase()}.example` },
      }),
    );
    const rule = ok(
      await t.request('POST', `/w/${wid}/event-rules`, {
        token: key,
        body: { name: `${name} members`, eventType: 'member:updated', actionParams: { webhookUrl: rx.url } },
      }),
    );
    ok(
      await t.request('PUT', `/w/${wid}/members/${member.member.id}`, {
        token: key,
        body: { name: `${name} renamed` },
      }),
      200,
    );
    const delivery = await eventually(async () => {
      const logs = await t.request('GET', `/w/${wid}/webhook-logs?ruleId=${rule.body.id}`, { token: key });
      return (logs.body.items as { id: string }[] | undefined)?.[0];
    }, `${name}'s delivery`);
    return {
      wid,
      key,
      memberId: member.member.id,
      workflowId: wf.id,
      workflowUuid: wf.uuid,
      assignmentId: assignment.body.id as number,
      chatId: chat.body.id as number,
      messageId: message.body.id as number,
      phoneId: phone.body.id as number,
      inboxId: inbox.body.id as number,
      ruleId: rule.body.id as number,
      deliveryId: delivery.id,
    };
  }

  beforeAll(async () => {
    rx = await startReceiver();
    t = await startTestApp({
      env: {
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        INBOUND_EMAIL_SECRET: SECRET,
      },
    });
    a = await tenant('Alpha');
    b = await tenant('Beta');
  }, 60_000);
  afterAll(async () => {
    await t.close();
    await rx.close();
  });

  /** A GET of an SSE stream must answer at once when refused; a stream that opens is a failure. */
  async function streamStatus(path: string, token: string): Promise<number> {
    const res = await fetch(`${t.baseUrl}${path}`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(5_000),
    });
    const status = res.status;
    await res.body?.cancel().catch(() => undefined);
    return status;
  }

  it("answers 404 for another tenant's ids in every messaging and automation path, and changes nothing", async () => {
    const w = `/w/${a.wid}`;
    const routes: [string, string, unknown?][] = [
      ['GET', `${w}/chats/${b.chatId}`],
      ['PUT', `${w}/chats/${b.chatId}`, { title: 'taken' }],
      ['POST', `${w}/chats/${b.chatId}/messages`, { content: 'planted' }],
      ['POST', `${w}/chats/${b.chatId}/send-assistant-message`, { message: 'planted' }],
      ['GET', `${w}/chats/${b.chatId}/messages`],
      ['GET', `${w}/chats/${b.chatId}/messages/${b.messageId}`],
      ['GET', `${w}/chats/${a.chatId}/messages/${b.messageId}`],
      ['GET', `${w}/chats/${b.chatId}/summary`],
      ['GET', `/recordings/chat/${b.chatId}/audio.wav`],
      ['GET', `${w}/phone-numbers/${b.phoneId}`],
      ['PUT', `${w}/phone-numbers/${b.phoneId}`, { name: 'taken' }],
      ['DELETE', `${w}/phone-numbers/${b.phoneId}`],
      ['GET', `${w}/inboxes/${b.inboxId}`],
      ['GET', `${w}/event-rules/${b.ruleId}`],
      ['PUT', `${w}/event-rules/${b.ruleId}`, { enabled: false }],
      ['DELETE', `${w}/event-rules/${b.ruleId}`],
      ['POST', `${w}/event-rules/${b.ruleId}/test`],
      ['POST', `${w}/event-rules/${b.ruleId}/rotate-secret`],
      ['GET', `${w}/webhook-logs/${b.deliveryId}`],
      ['POST', `${w}/webhook-logs/${b.deliveryId}/redeliver`],
      ['POST', `${w}/webhook-logs/recover`, { ruleId: b.ruleId, since: '2000-01-01T00:00:00Z' }],
      ['GET', `${w}/assignments/${b.assignmentId}`],
      ['PUT', `${w}/assignments/${b.assignmentId}`, { status: 'cancelled' }],
    ];
    for (const [method, path, body] of routes) {
      const res = await t.request(method, path, { token: a.key, body });
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 404 });
      expect(JSON.stringify(res.body)).not.toContain('Beta');
      expect(await t.eventsOf(res)).toEqual([]);
    }
    expect(await streamStatus(`${w}/chats/${b.chatId}/stream`, a.key)).toBe(404);
    // Beta's things are as they were.
    const chat = await t.request('GET', `/w/${b.wid}/chats/${b.chatId}`, { token: b.key });
    expect(chat.body.title).toBe('Beta chat');
    const rule = await t.request('GET', `/w/${b.wid}/event-rules/${b.ruleId}`, { token: b.key });
    expect(rule.body.enabled).toBe(true);
  });

  it("refuses another tenant's ids in every body field and finds none of them through list filters", async () => {
    const w = `/w/${a.wid}`;
    const cases: [string, string, unknown, RegExp][] = [
      ['POST', `${w}/chats`, { channel: 'web-chat', memberId: b.memberId }, /memberId/],
      [
        'POST',
        `${w}/chats`,
        { channel: 'phone-sms', memberId: a.memberId, phoneNumberId: b.phoneId },
        /phoneNumberId/,
      ],
      [
        'POST',
        `${w}/chats`,
        { channel: 'web-chat', memberId: a.memberId, workflowId: b.workflowId },
        /workflowId/,
      ],
      [
        'POST',
        `${w}/chats`,
        {
          channel: 'web-chat',
          memberId: a.memberId,
          participants: [{ memberId: b.memberId, role: 'supervisor' }],
        },
        /participants/,
      ],
      [
        'POST',
        `${w}/chats`,
        { channel: 'web-chat', memberId: a.memberId, assistantKind: 'human', assistantMemberId: b.memberId },
        /assistantMemberId/,
      ],
      ['PUT', `${w}/chats/${a.chatId}`, { assignmentId: b.assignmentId }, /assignmentId/],
      ['POST', `${w}/assignments`, { workflowId: b.workflowId, memberId: a.memberId }, /workflowId/],
      ['POST', `${w}/assignments`, { workflowId: a.workflowId, memberId: b.memberId }, /memberId/],
    ];
    for (const [method, path, body, field] of cases) {
      const res = await t.request(method, path, { token: a.key, body });
      expect({ body, clientError: res.status >= 400 && res.status < 500 }).toEqual({
        body,
        clientError: true,
      });
      expect(res.status).not.toBe(403);
      expect(res.body.detail).toMatch(field);
      expect(await t.eventsOf(res)).toEqual([]);
    }
    for (const query of [`memberId=${b.memberId}`, `workflowId=${b.workflowId}`]) {
      const res = await t.request('GET', `${w}/chats?${query}`, { token: a.key });
      expect({ query, status: res.status, total: res.body.total }).toEqual({ query, status: 200, total: 0 });
    }
    const logs = await t.request('GET', `${w}/webhook-logs?ruleId=${b.ruleId}`, { token: a.key });
    expect(logs.status).toBe(200);
    expect(logs.body.items).toEqual([]);
  });

  it('lets a key holding one scope reach no messaging or automation route that needs another', async () => {
    const w = `/w/${a.wid}`;
    const since = '2000-01-01T00:00:00Z';
    // [method, path, body, scope the route needs]
    const routes: [string, string, unknown, string][] = [
      ['GET', `${w}/chats`, undefined, 'chats:read'],
      ['POST', `${w}/chats`, { channel: 'web-chat', memberId: a.memberId }, 'chats:write'],
      ['GET', `${w}/chats/${a.chatId}`, undefined, 'chats:read'],
      ['PUT', `${w}/chats/${a.chatId}`, { title: 'narrow' }, 'chats:write'],
      ['POST', `${w}/chats/${a.chatId}/messages`, { content: 'narrow' }, 'chats:write'],
      ['POST', `${w}/chats/${a.chatId}/send-assistant-message`, { message: 'narrow' }, 'chats:write'],
      ['GET', `${w}/chats/${a.chatId}/messages`, undefined, 'chats:read'],
      ['GET', `${w}/chats/${a.chatId}/messages/${a.messageId}`, undefined, 'chats:read'],
      ['GET', `${w}/chats/${a.chatId}/summary`, undefined, 'chats:read'],
      ['GET', `/recordings/chat/${a.chatId}/audio.wav`, undefined, 'chats:read'],
      ['GET', `${w}/phone-numbers`, undefined, 'phones:read'],
      ['POST', `${w}/phone-numbers`, { number: '+14155550999' }, 'phones:write'],
      ['GET', `${w}/phone-numbers/${a.phoneId}`, undefined, 'phones:read'],
      ['PUT', `${w}/phone-numbers/${a.phoneId}`, { name: 'narrow' }, 'phones:write'],
      ['DELETE', `${w}/phone-numbers/${a.phoneId}`, undefined, 'phones:admin'],
      ['GET', `${w}/inboxes`, undefined, 'inboxes:read'],
      ['POST', `${w}/inboxes`, { email: 'narrow@alpha.example' }, 'inboxes:write'],
      ['GET', `${w}/inboxes/${a.inboxId}`, undefined, 'inboxes:read'],
      ['GET', `${w}/event-rules`, undefined, 'automations:read'],
      [
        'POST',
        `${w}/event-rules`,
        { name: 'narrow', eventType: 'member:updated', actionParams: { webhookUrl: rx.url } },
        'automations:write',
      ],
      ['GET', `${w}/event-rules/${a.ruleId}`, undefined, 'automations:read'],
      ['PUT', `${w}/event-rules/${a.ruleId}`, { name: 'narrow' }, 'automations:write'],
      ['POST', `${w}/event-rules/${a.ruleId}/test`, undefined, 'automations:write'],
      ['POST', `${w}/event-rules/${a.ruleId}/rotate-secret`, undefined, 'automations:write'],
      ['DELETE', `${w}/event-rules/${a.ruleId}`, undefined, 'automations:admin'],
      ['GET', `${w}/webhook-logs`, undefined, 'webhooks:read'],
      ['GET', `${w}/webhook-logs/${a.deliveryId}`, undefined, 'webhooks:read'],
      ['POST', `${w}/webhook-logs/${a.deliveryId}/redeliver`, undefined, 'webhooks:write'],
      ['POST', `${w}/webhook-logs/recover`, { ruleId: a.ruleId, since }, 'webhooks:write'],
    ];
    const scopes = [
      'members:admin',
      'chats:read',
      'chats:write',
      'phones:read',
      'phones:write',
      'inboxes:read',
      'inboxes:write',
      'automations:read',
      'automations:write',
      'webhooks:read',
      'webhooks:write',
      'records:admin',
    ];
    for (const scope of scopes) {
      const key = await keyWithScopes(t, a.key, [scope]);
      for (const [method, path, body, needed] of routes) {
        if (grants([scope], needed)) continue;
        const res = await t.request(method, path, { token: key, body });
        // A list the caller may see its own part of answers that part: nothing.
        const emptyList =
          method === 'GET' && res.status === 200 && Array.isArray(res.body.items) && !res.body.items.length;
        expect({ scope, method, path, refused: [403, 404].includes(res.status) || emptyList }).toEqual({
          scope,
          method,
          path,
          refused: true,
        });
        expect(JSON.stringify(res.body)).not.toContain('Alpha secret message');
        expect(await t.eventsOf(res)).toEqual([]);
      }
      if (!grants([scope], 'chats:read'))
        expect([403, 404]).toContain(await streamStatus(`${w}/chats/${a.chatId}/stream`, key));
    }
  }, 120_000);

  it('refuses odd ids in paths (404) and bodies (400 naming the field), and arrays where objects belong', async () => {
    const w = `/w/${a.wid}`;
    for (const id of ['-1', '0', '1.5', '1e3', '99999999999999999999', '2147483648', '0x10', '%20', 'null']) {
      for (const path of [
        `${w}/chats/${id}`,
        `${w}/chats/${a.chatId}/messages/${id}`,
        `${w}/phone-numbers/${id}`,
        `${w}/inboxes/${id}`,
        `${w}/event-rules/${id}`,
        `${w}/webhook-logs/${id}`,
        `/recordings/chat/${id}/audio.wav`,
      ]) {
        const res = await t.request('GET', path, { token: a.key });
        expect({ path, status: res.status }).toEqual({ path, status: 404 });
      }
    }
    for (const bad of [-1, 0, 1.5, 2147483648, 1e300, '1', true, [1], { id: 1 }]) {
      for (const [path, body, field] of [
        [`${w}/chats`, { channel: 'phone-sms', memberId: a.memberId, phoneNumberId: bad }, 'phoneNumberId'],
        [`${w}/chats`, { channel: 'web-chat', memberId: bad }, 'memberId'],
        [`${w}/chats`, { channel: 'web-chat', memberId: a.memberId, workflowId: bad }, 'workflowId'],
        [`${w}/webhook-logs/recover`, { ruleId: bad, since: '2000-01-01T00:00:00Z' }, 'ruleId'],
      ] as const) {
        const res = await t.request('POST', path, { token: a.key, body });
        expect({ bad, field, status: res.status < 500 && res.status >= 400 }).toEqual({
          bad,
          field,
          status: true,
        });
        expect({ bad, detail: res.body.detail }).toEqual({ bad, detail: expect.stringContaining(field) });
        expect(await t.eventsOf(res)).toEqual([]);
      }
    }
    for (const [method, path, body] of [
      ['POST', `${w}/chats`, [{ channel: 'web-chat' }]],
      ['POST', `${w}/chats/${a.chatId}/messages`, ['hello']],
      ['POST', `${w}/event-rules`, [{ name: 'x' }]],
      ['PUT', `${w}/chats/${a.chatId}`, ['title']],
      [
        'POST',
        `${w}/chats`,
        { channel: 'web-chat', memberId: a.memberId, participants: { memberId: a.memberId } },
      ],
      ['POST', `${w}/event-rules`, { name: 'x', eventType: 'member:updated', actionParams: [rx.url] }],
    ] as const) {
      const res = await t.request(method, path, { token: a.key, body });
      expect({ path, body, status: res.status }).toEqual({ path, body, status: 400 });
      expect(typeof res.body.detail).toBe('string');
      expect(await t.eventsOf(res)).toEqual([]);
    }
  });

  it('keeps unicode as sent, and records inbound mail holding NUL characters without them (no 500, no lost mail)', async () => {
    const w = `/w/${a.wid}`;
    const text = 'Łódź 東京 مرحبا 👩🏽‍⚕️ \u202e reversed';
    const posted = await t.request('POST', `${w}/chats/${a.chatId}/messages`, {
      token: a.key,
      body: { content: text },
    });
    expect(posted.status).toBe(201);
    const got = await t.request('GET', `${w}/chats/${a.chatId}/messages/${posted.body.id}`, { token: a.key });
    expect(got.body.content).toBe(text);

    const mail = (body: string, subject = 'Question') =>
      fetch(`${t.baseUrl}/providers/email/inbound`, {
        method: 'POST',
        headers: { 'content-type': 'message/rfc822', 'x-inbound-email-secret': SECRET },
        body: [
          'From: Nul Sender <nul.sender@mail.example>',
          'To: care@alpha.example',
          `Subject: ${subject}`,
          `Message-ID: <${Math.random().toString(36).slice(2)}@sender.example>`,
          'Content-Type: text/plain; charset=utf-8',
          '',
          body,
          '',
        ].join('\r\n'),
      });
    const res = await mail('before\u0000after', 'with\u0000nul');
    expect(res.status).toBeLessThan(500);
    const events = await t.eventsOf({ requestId: res.headers.get('x-request-id')! } as never);
    const received = events.find((e) => e.type === 'MessageReceived');
    expect(received?.data).toMatchObject({ source: 'email', content: 'beforeafter', subject: 'withnul' });
  });

  it('never runs a POST twice for one Idempotency-Key, and refuses the key with another body (422)', async () => {
    const w = `/w/${a.wid}`;
    for (const [path, body, other] of [
      [`${w}/chats/${a.chatId}/send-assistant-message`, { message: 'once' }, { message: 'twice' }],
      [`${w}/chats/${a.chatId}/messages`, { content: 'once' }, { content: 'twice' }],
      [
        `${w}/event-rules`,
        { name: 'idem', eventType: 'member:updated', actionParams: { webhookUrl: rx.url } },
        { name: 'idem 2', eventType: 'member:updated', actionParams: { webhookUrl: rx.url } },
      ],
      [`${w}/phone-numbers`, { number: '+14155559990' }, { number: '+14155559991' }],
    ] as const) {
      const headers = { 'idempotency-key': `attack-${path}-${Date.now()}` };
      const [one, two] = await Promise.all([
        t.request('POST', path, { token: a.key, body, headers }),
        t.request('POST', path, { token: a.key, body, headers }),
      ]);
      expect([one.status, two.status].sort()).toEqual(
        one.status === two.status ? [201, 201] : [201, 409].sort(),
      );
      const written = [...(await t.eventsOf(one)), ...(await t.eventsOf(two))];
      expect(written.length).toBeGreaterThan(0);
      const firstIds = new Set(written.map((e) => e.streamName));
      const changed = await t.request('POST', path, { token: a.key, body: other, headers });
      expect({ path, status: changed.status }).toEqual({ path, status: 422 });
      expect(changed.body.detail).toMatch(/Idempotency-Key/i);
      expect(await t.eventsOf(changed)).toEqual([]);
      const replay = await t.request('POST', path, { token: a.key, body, headers });
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(await t.eventsOf(replay)).toEqual([]);
      expect(firstIds.size).toBeGreaterThan(0);
    }
  });

  it('refuses a stale If-Match (412, nothing written), and of two PUTs pinned to one version only one wins', async () => {
    const w = `/w/${a.wid}`;
    for (const path of [
      `${w}/chats/${a.chatId}`,
      `${w}/phone-numbers/${a.phoneId}`,
      `${w}/event-rules/${a.ruleId}`,
    ]) {
      const body = path.includes('chats') ? { title: 'x' } : { name: 'x' };
      const stale = await t.request('PUT', path, { token: a.key, body, headers: { 'if-match': '"999"' } });
      expect({ path, status: stale.status }).toEqual({ path, status: 412 });
      expect(await t.eventsOf(stale)).toEqual([]);
      const current = await t.request('GET', path, { token: a.key });
      const etag = current.headers.get('etag')!;
      expect(etag).toMatch(/^"\d+"$/);
      const puts = await Promise.all(
        ['one', 'two', 'three'].map((v) =>
          t.request('PUT', path, {
            token: a.key,
            headers: { 'if-match': etag },
            body: path.includes('chats') ? { title: `race ${v}` } : { name: `race ${v}` },
          }),
        ),
      );
      expect({ path, statuses: puts.map((p) => p.status).sort() }).toEqual({
        path,
        statuses: [200, 412, 412],
      });
    }
    for (const path of [`${w}/event-rules/${a.ruleId}`, `${w}/phone-numbers/${a.phoneId}`]) {
      const del = await t.request('DELETE', path, { token: a.key, headers: { 'if-match': '"999"' } });
      expect({ path, status: del.status }).toEqual({ path, status: 412 });
      expect(await t.eventsOf(del)).toEqual([]);
    }
  });

  it('gives one of two concurrent creates of one phone number or inbox address the 201, the other 409', async () => {
    const w = `/w/${a.wid}`;
    for (const [path, body] of [
      [`${w}/phone-numbers`, { number: '+14155559980' }],
      [`${w}/inboxes`, { email: 'race@alpha.example' }],
    ] as const) {
      const res = await Promise.all([
        t.request('POST', path, { token: a.key, body }),
        t.request('POST', path, { token: a.key, body }),
        t.request('POST', path.replace(a.wid, b.wid), { token: b.key, body }),
      ]);
      expect({ path, statuses: res.map((r) => r.status).sort() }).toEqual({
        path,
        statuses: [201, 409, 409],
      });
    }
  });

  it('does not let a key without chats:read reach a recording through the own-chats rule, as no chat route does', async () => {
    // Alpha's owner is the human assistant of Alpha's chat: it takes part in it.
    const path = `/recordings/chat/${a.chatId}/audio.wav`;
    const narrow = await keyWithScopes(t, a.key, ['members:read']);
    for (const key of [narrow, await keyWithScopes(t, a.key, ['webhooks:read'])]) {
      const res = await t.request('GET', path, { token: key });
      expect({ status: res.status, detail: res.body.detail }).toEqual({
        status: 404,
        detail: 'Chat not found',
      });
      // The chat routes say the same for that key.
      const chat = await t.request('GET', `/w/${a.wid}/chats/${a.chatId}`, { token: key });
      expect(chat.status).toBe(404);
    }
    // Past the access check, the chat simply has no audio.
    for (const key of [a.key, await keyWithScopes(t, a.key, ['chats:read'])]) {
      const res = await t.request('GET', path, { token: key });
      expect({ status: res.status, detail: res.body.detail }).toEqual({
        status: 404,
        detail: 'No audio recording for this chat',
      });
    }
  });

  it('shows a webhooks:read key the delivery log without the bodies it could not read through the API', async () => {
    const logsOnly = await keyWithScopes(t, a.key, ['webhooks:read']);
    const withMembers = await keyWithScopes(t, a.key, ['webhooks:read', 'members:read']);
    for (const path of [`/w/${a.wid}/webhook-logs`, `/w/${a.wid}/webhook-logs/${a.deliveryId}`]) {
      const hidden = await t.request('GET', path, { token: logsOnly });
      expect(hidden.status).toBe(200);
      expect(JSON.stringify(hidden.body)).not.toContain('Alpha renamed');
      expect(JSON.stringify(hidden.body)).not.toContain('alpha-member@example.com');
    }
    // The list carries no bodies; the delivery itself shows it to a key that reads members.
    const shown = await t.request('GET', `/w/${a.wid}/webhook-logs/${a.deliveryId}`, { token: withMembers });
    expect(JSON.stringify(shown.body)).toContain('Alpha renamed');
  });
});
