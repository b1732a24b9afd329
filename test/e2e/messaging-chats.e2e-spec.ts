import { startTestApp, TestApp } from '../support/app';
import { keyWithScopes, signup } from '../support/identity-fixtures';
import { eventually } from '../support/processes';

/** Phone numbers, inboxes, chats and messages over HTTP (SMS_PROVIDER=log, the default). */
describe('Messaging: phone numbers, inboxes, chats (e2e)', () => {
  let t: TestApp;
  let wid: string;
  let key: string;
  let ownerId: number;

  beforeAll(async () => {
    t = await startTestApp();
    const b = await t.bootstrap('Clinic');
    ({ workspaceId: wid, apiKey: key, memberId: ownerId } = b);
  });
  afterAll(() => t.close());

  const post = (path: string, body: unknown, token = key) =>
    t.request('POST', `/w/${wid}${path}`, { token, body });
  const get = (path: string, token = key) => t.request('GET', `/w/${wid}${path}`, { token });

  describe('phone numbers', () => {
    it('normalises to E.164, answers with Location and ETag, and appends PhoneNumberCreated', async () => {
      const res = await post('/phone-numbers', { number: '+1 (415) 555-0100', name: 'Front desk' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ number: '+14155550100', name: 'Front desk', signupRoleId: null });
      expect(res.headers.get('location')).toBe(`/api/v2/w/${wid}/phone-numbers/${res.body.id}`);
      await t.expectEvents(res, [
        {
          type: 'PhoneNumberCreated',
          stream: `phonenumber-${res.body.id}`,
          data: { number: '+14155550100' },
        },
      ]);
      const one = await get(`/phone-numbers/${res.body.id}`);
      expect(one.status).toBe(200);
      expect(one.headers.get('etag')).toBe('"1"');
    });

    it('is unique in the whole service: 409 in this and in another workspace, free again once deleted', async () => {
      const first = await post('/phone-numbers', { number: '+14155550111' });
      expect(first.status).toBe(201);
      expect((await post('/phone-numbers', { number: '+1 415 555 0111' })).status).toBe(409);
      const other = await t.bootstrap('Other clinic');
      const elsewhere = await t.request('POST', `/w/${other.workspaceId}/phone-numbers`, {
        token: other.apiKey,
        body: { number: '+14155550111' },
      });
      expect(elsewhere.status).toBe(409);
      expect(elsewhere.body.detail).toMatch(/^number: /);
      // Another workspace cannot see or delete it.
      expect(
        (
          await t.request('DELETE', `/w/${other.workspaceId}/phone-numbers/${first.body.id}`, {
            token: other.apiKey,
          })
        ).status,
      ).toBe(404);
      expect(
        (await t.request('DELETE', `/w/${wid}/phone-numbers/${first.body.id}`, { token: key })).status,
      ).toBe(204);
      const again = await t.request('POST', `/w/${other.workspaceId}/phone-numbers`, {
        token: other.apiKey,
        body: { number: '+14155550111' },
      });
      expect(again.status).toBe(201);
    });

    it('refuses a number that is not one (400 naming the field) and honours If-Match on PUT', async () => {
      const bad = await post('/phone-numbers', { number: 'call me' });
      expect(bad.status).toBe(400);
      expect(bad.body.detail).toMatch(/^number: /);
      const created = await post('/phone-numbers', { number: '+14155550122' });
      const stale = await t.request('PUT', `/w/${wid}/phone-numbers/${created.body.id}`, {
        token: key,
        body: { name: 'x' },
        headers: { 'if-match': '"7"' },
      });
      expect(stale.status).toBe(412);
      const ok = await t.request('PUT', `/w/${wid}/phone-numbers/${created.body.id}`, {
        token: key,
        body: { name: 'Night line' },
        headers: { 'if-match': '"1"' },
      });
      expect(ok.status).toBe(200);
      expect(ok.body.name).toBe('Night line');
      expect(ok.headers.get('etag')).toBe('"2"');
    });

    it('needs phones:* scopes', async () => {
      const reader = await keyWithScopes(t, key, ['phones:read']);
      expect((await get('/phone-numbers', reader)).status).toBe(200);
      const refused = await post('/phone-numbers', { number: '+14155550133' }, reader);
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toMatch(/phones:write/);
      const list = await get('/phone-numbers?pageSize=2', reader);
      expect(list.body).toMatchObject({ page: 1, pageSize: 2 });
    });
  });

  describe('inboxes', () => {
    it('creates an inbox owned by the caller, unique in the service (409)', async () => {
      const res = await post('/inboxes', { email: 'Care@Clinic.example' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ email: 'care@clinic.example', ownerMemberId: ownerId, memberIds: [] });
      await t.expectEvents(res, [{ type: 'InboxCreated', data: { email: 'care@clinic.example' } }]);
      expect((await post('/inboxes', { email: 'care@clinic.example' })).status).toBe(409);
      expect((await get(`/inboxes/${res.body.id}`)).status).toBe(200);
    });

    it('shows a member without inboxes:read only the inboxes it was granted', async () => {
      const granted = await signup(t, wid, key, { email: 'granted@example.com' });
      const other = await signup(t, wid, key, { email: 'other@example.com' });
      const inbox = await post('/inboxes', { email: 'team@clinic.example', memberIds: [granted.member.id] });
      expect(inbox.status).toBe(201);
      const mine = await get('/inboxes', granted.token);
      expect(mine.status).toBe(200);
      expect(mine.body.items.map((i: { id: number }) => i.id)).toEqual([inbox.body.id]);
      expect((await get(`/inboxes/${inbox.body.id}`, granted.token)).status).toBe(200);
      expect((await get('/inboxes', other.token)).body.items).toEqual([]);
      expect((await get(`/inboxes/${inbox.body.id}`, other.token)).status).toBe(404);
      expect((await post('/inboxes', { email: 'x@clinic.example' }, granted.token)).status).toBe(403);
    });
  });

  describe('chats', () => {
    let phoneId: number;
    let patient: { id: number; token: string };
    let nurse: number;

    beforeAll(async () => {
      phoneId = (await post('/phone-numbers', { number: '+14155550199' })).body.id;
      const p = await signup(t, wid, key, {
        email: 'patient@example.com',
        phone: '+14155551000',
        name: 'Pat',
      });
      patient = { id: p.member.id, token: p.token };
      nurse = (await signup(t, wid, key, { email: 'nurse@example.com', name: 'Nurse Joy' })).member.id;
    });

    it('creates a chat per the spec and appends ChatCreated', async () => {
      const res = await post('/chats', {
        channel: 'phone-sms',
        memberId: patient.id,
        phoneNumberId: phoneId,
        participants: [{ memberId: nurse, role: 'supervisor' }],
        title: 'Follow-up',
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        channel: 'phone-sms',
        workflowId: null,
        memberId: patient.id,
        assistantKind: 'ai',
        paused: false,
        needsResponse: false,
        participants: [
          { memberId: patient.id, role: 'user', name: 'Pat' },
          { memberId: nurse, role: 'supervisor', name: 'Nurse Joy' },
        ],
      });
      expect(res.body.uuid).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.headers.get('location')).toBe(`/api/v2/w/${wid}/chats/${res.body.id}`);
      expect(res.headers.get('deprecation')).toBeNull();
      await t.expectEvents(res, [
        {
          type: 'ChatCreated',
          stream: `chat-${res.body.id}`,
          data: { channel: 'phone-sms', memberId: patient.id },
        },
      ]);
    });

    it.each([
      [{ channel: 'fax' }, /^channel: /],
      [{ channel: 'phone-sms' }, /^phoneNumberId: required/],
      [{ channel: 'phone-voice' }, /^phoneNumberId: required/],
      [{ channel: 'web-chat', phoneNumberId: 999999 }, /^phoneNumberId: no phone number/],
      [{ channel: 'web-chat', memberId: 999999 }, /^memberId: no active member/],
      [{ channel: 'web-chat', assistantKind: 'robot' }, /^assistantKind: /],
      [{ channel: 'web-chat', assistantKind: 'human' }, /^assistantMemberId: required/],
      [
        { channel: 'web-chat', assistantKind: 'human', assistantMemberId: 999999 },
        /^assistantMemberId: no active/,
      ],
      [{ channel: 'web-chat', assistantMemberId: 1 }, /^assistantMemberId: only a human/],
      [{ channel: 'web-chat', assistantEnabled: false, assistantKind: 'ai' }, /^assistantEnabled: /],
      [{ channel: 'web-chat', participants: [{ memberId: 1, role: 'user' }] }, /^participants\.0\.role: /],
      [
        { channel: 'web-chat', participants: [{ memberId: 999999, role: 'contributor' }] },
        /^participants\.0\.memberId: no active/,
      ],
      [{ channel: 'web-chat', workflowId: 1 }, /^workflowId: /],
      [{ channel: 'web-chat', title: 'x'.repeat(201) }, /^title: /],
      [{ channel: 'web-chat', color: 'red' }, /^color: /],
    ])('refuses %j with 400 naming the field, appending nothing', async (body, detail) => {
      const res = await post('/chats', body);
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(detail);
      expect(await t.eventsOf(res)).toEqual([]);
    });

    it('refuses a participant listed twice, the chat member included', async () => {
      const res = await post('/chats', {
        channel: 'web-chat',
        memberId: patient.id,
        participants: [{ memberId: patient.id, role: 'contributor' }],
      });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/^participants\.0\.memberId: /);
    });

    it('takes the deprecated assistantEnabled:false as a human chat, with a Deprecation header', async () => {
      const res = await post('/chats', {
        channel: 'web-chat',
        assistantEnabled: false,
        assistantMemberId: nurse,
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ assistantKind: 'human', assistantMemberId: nurse, memberId: ownerId });
      expect(res.headers.get('deprecation')).toBe('true');
    });

    it('shows members without chats:read only their own chats; others are 404', async () => {
      const mine = await post('/chats', { channel: 'web-chat' }, patient.token);
      expect(mine.status).toBe(201);
      expect(mine.body.memberId).toBe(patient.id);
      const other = await post('/chats', { channel: 'web-chat' });
      const list = await get('/chats?pageSize=1000', patient.token);
      expect(list.status).toBe(200);
      const ids = list.body.items.map((c: { id: number }) => c.id);
      expect(ids).toContain(mine.body.id);
      expect(ids).not.toContain(other.body.id);
      expect((await get(`/chats/${other.body.id}`, patient.token)).status).toBe(404);
      // Someone else's chat cannot be created without chats:write.
      const forOther = await post('/chats', { channel: 'web-chat', memberId: nurse }, patient.token);
      expect(forOther.status).toBe(403);
      // Filters.
      const sms = await get(`/chats?channel=phone-sms&memberId=${patient.id}`);
      expect(sms.body.items.every((c: { channel: string }) => c.channel === 'phone-sms')).toBe(true);
      expect(sms.body.total).toBeGreaterThan(0);
      expect((await get('/chats?paused=maybe')).status).toBe(400);
      expect((await get('/chats?workflowId=1')).body.total).toBe(0);
    });

    it('updates title and paused with ETag/If-Match, appending ChatUpdated', async () => {
      const chat = await post('/chats', { channel: 'web-chat', memberId: patient.id });
      const res = await t.request('PUT', `/w/${wid}/chats/${chat.body.id}`, {
        token: key,
        body: { title: 'Renamed', paused: true },
        headers: { 'if-match': '"1"' },
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ title: 'Renamed', paused: true });
      // Pausing summarises the chat (a job the request's events cause, same correlation):
      // wait for it, so that the request's events are complete whatever the job's timing.
      await eventually(
        async () => (await get(`/chats/${chat.body.id}/summary`)).status === 200,
        'the summary of the paused chat',
      );
      await t.expectEvents(res, [
        { type: 'ChatUpdated', data: { changes: { title: 'Renamed', paused: true } } },
        { type: 'ChatSummarized', data: { chatId: chat.body.id, trigger: 'paused', messageCount: 0 } },
      ]);
      const paused = await get('/chats?paused=true');
      expect(paused.body.items.map((c: { id: number }) => c.id)).toContain(chat.body.id);
      const stale = await t.request('PUT', `/w/${wid}/chats/${chat.body.id}`, {
        token: key,
        body: { paused: false },
        headers: { 'if-match': '"1"' },
      });
      expect(stale.status).toBe(412);
    });

    it('records user messages (needsResponse) and fans assistant messages out to every participant', async () => {
      const chat = await post('/chats', {
        channel: 'web-chat',
        memberId: patient.id,
        participants: [{ memberId: nurse, role: 'contributor' }],
      });
      const user = await post(
        `/chats/${chat.body.id}/messages`,
        { content: 'I have a question' },
        patient.token,
      );
      expect(user.status).toBe(201);
      expect(user.body).toMatchObject({ direction: 'inbound', role: 'user', content: 'I have a question' });
      await t.expectEvents(user, [
        { type: 'MessageReceived', data: { memberId: patient.id, source: 'api' } },
      ]);
      expect((await get(`/chats/${chat.body.id}`)).body.needsResponse).toBe(true);

      const sent = await post(`/chats/${chat.body.id}/send-assistant-message`, {
        message: 'How can I help?',
      });
      expect(sent.status).toBe(201);
      expect(sent.body).toMatchObject({
        direction: 'outbound',
        role: 'assistant',
        status: 'sent',
        encoding: null,
      });
      expect(sent.body.deliveries.map((d: { memberId: number }) => d.memberId).sort()).toEqual(
        [patient.id, nurse].sort(),
      );
      await t.expectEvents(sent, [
        { type: 'MessageSent', data: { recipientMemberIds: [patient.id, nurse], role: 'assistant' } },
      ]);
      expect((await get(`/chats/${chat.body.id}`)).body.needsResponse).toBe(false);
      const list = await get(`/chats/${chat.body.id}/messages`, patient.token);
      expect(list.body.items.map((m: { content: string }) => m.content)).toEqual([
        'I have a question',
        'How can I help?',
      ]);
    });

    it('delivers SMS through the log provider to consenting members only', async () => {
      await t.request('PUT', `/w/${wid}/members/${patient.id}`, { token: key, body: { notifySms: true } });
      const chat = await post('/chats', {
        channel: 'phone-sms',
        memberId: patient.id,
        phoneNumberId: phoneId,
        participants: [{ memberId: nurse, role: 'supervisor' }],
      });
      const sent = await post(`/chats/${chat.body.id}/send-assistant-message`, {
        message: 'Your results are in',
      });
      expect(sent.body).toMatchObject({ encoding: 'GSM-7', segments: 1 });
      const done = await eventually(async () => {
        const m = await get(`/chats/${chat.body.id}/messages/${sent.body.id}`);
        return m.body.deliveries.every((d: { status: string }) => d.status !== 'sent') ? m.body : undefined;
      }, 'both deliveries to end');
      const byMember = Object.fromEntries(done.deliveries.map((d: { memberId: number }) => [d.memberId, d]));
      expect(byMember[patient.id]).toMatchObject({
        status: 'delivered',
        providerMessageId: expect.stringMatching(/^LOG/),
      });
      // The nurse has no phone and never consented.
      expect(byMember[nurse]).toMatchObject({ status: 'failed', failureReason: 'no_consent' });
      expect(done.status).toBe('delivered');
    });

    it('refuses a message over 10,000 characters (400 naming the field), appending nothing', async () => {
      const chat = await post('/chats', { channel: 'web-chat', memberId: patient.id });
      const res = await post(`/chats/${chat.body.id}/send-assistant-message`, {
        message: 'x'.repeat(10_001),
      });
      expect(res.status).toBe(400);
      expect(res.body.detail).toBe('message: must be shorter than or equal to 10000 characters');
      expect(await t.eventsOf(res)).toEqual([]);
      const ok = await post(`/chats/${chat.body.id}/send-assistant-message`, { message: 'x'.repeat(10_000) });
      expect(ok.status).toBe(201);
    });

    it('refuses an SMS over the segment limit (400 naming the field)', async () => {
      const chat = await post('/chats', {
        channel: 'phone-sms',
        memberId: patient.id,
        phoneNumberId: phoneId,
      });
      const res = await post(`/chats/${chat.body.id}/send-assistant-message`, {
        message: 'ł'.repeat(67 * 10 + 1),
      });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/^message: 11 SMS segments \(UCS-2\)/);
      expect(await t.eventsOf(res)).toEqual([]);
    });
  });
});
