import { startTestApp, TestApp } from '../support/app';
import { signup } from '../support/identity-fixtures';
import { eventually } from '../support/processes';
import { startTwilioPeer, TwilioPeer, twilioServiceEnv } from '../support/twilio-peer';
import { DeliveryService } from '../../src/modules/messaging/workers/delivery.service';
import { SMS_QUEUE } from '../../src/modules/messaging/workers/delivery-job';

const PUBLIC_BASE_URL = 'https://streams.example.test/api/v2';

interface Tenant {
  wid: string;
  key: string;
  number: string;
  phoneId: number;
  memberId: number;
  phone: string;
  chatId: number;
}

/**
 * Attack on the SMS delivery's one-statement read of the chat's stream and its recipient's
 * (event store `readStreams`): two workspaces send at once, and a client of one names the
 * other's members wherever a chat takes a member. A delivery only ever reads a chat and a
 * member of its own workspace, nothing reaches the other tenant's phone, and a delivery
 * whose chat or recipient stream is missing is refused as before, sending nothing.
 */
describe('Attack: SMS delivery reads its chat and recipient streams together (e2e)', () => {
  let peer: TwilioPeer;
  let t: TestApp;
  let a: Tenant;
  let b: Tenant;

  const tenant = async (name: string, number: string, phone: string): Promise<Tenant> => {
    const { workspaceId: wid, apiKey: key } = await t.bootstrap(name);
    const numberRes = await t.request('POST', `/w/${wid}/phone-numbers`, { token: key, body: { number } });
    expect(numberRes.status).toBe(201);
    const member = await signup(t, wid, key, { phone });
    const consent = await t.request('PUT', `/w/${wid}/members/${member.member.id}`, {
      token: key,
      body: { notifySms: true },
    });
    expect(consent.status).toBe(200);
    const chat = await t.request('POST', `/w/${wid}/chats`, {
      token: key,
      body: { channel: 'phone-sms', memberId: member.member.id, phoneNumberId: numberRes.body.id },
    });
    expect(chat.status).toBe(201);
    return {
      wid,
      key,
      number,
      phoneId: numberRes.body.id as number,
      memberId: member.member.id,
      phone,
      chatId: chat.body.id as number,
    };
  };

  beforeAll(async () => {
    peer = await startTwilioPeer();
    t = await startTestApp({ env: { ...twilioServiceEnv(peer), PUBLIC_BASE_URL } });
    a = await tenant('Tenant A', '+14155550410', '+14155552410');
    b = await tenant('Tenant B', '+14155550420', '+14155552420');
  });
  afterAll(async () => {
    await t.close();
    await peer.close();
  });

  const sentTo = (phone: string) => peer.messages.filter((m) => m.to === phone);
  const send = (x: Tenant, message: string) =>
    t.request('POST', `/w/${x.wid}/chats/${x.chatId}/send-assistant-message`, {
      token: x.key,
      body: { message },
    });

  it('deliveries of two workspaces sending at once each read only their own chat and recipient', async () => {
    const reads: string[][] = [];
    const readStreams = t.store.readStreams!.bind(t.store);
    t.store.readStreams = (names: readonly string[]) => {
      reads.push([...names]);
      return readStreams(names);
    };
    try {
      const sends = await Promise.all(
        [1, 2, 3].flatMap((i) => [send(a, `A says ${i}`), send(b, `B says ${i}`)]),
      );
      for (const s of sends) expect(s.status).toBe(201);
      await eventually(
        async () => sentTo(a.phone).length === 3 && sentTo(b.phone).length === 3,
        'both tenants’ texts to reach the provider',
      );
    } finally {
      t.store.readStreams = readStreams;
    }
    expect(
      sentTo(a.phone)
        .map((m) => m.body)
        .sort(),
    ).toEqual(['A says 1', 'A says 2', 'A says 3']);
    expect(
      sentTo(b.phone)
        .map((m) => m.body)
        .sort(),
    ).toEqual(['B says 1', 'B says 2', 'B says 3']);
    expect(sentTo(a.phone).every((m) => m.from === a.number)).toBe(true);
    expect(sentTo(b.phone).every((m) => m.from === b.number)).toBe(true);
    // Each delivery read its chat with its recipient in one statement, both of one workspace.
    const own = [
      [`chat-${a.chatId}`, `member-${a.memberId}`],
      [`chat-${b.chatId}`, `member-${b.memberId}`],
    ];
    expect(reads.length).toBeGreaterThanOrEqual(6);
    for (const names of reads) expect(own).toContainEqual(names);
  });

  it('a chat of A never takes a member of B (member, participant, operator), nor B’s number', async () => {
    const attempts: Record<string, unknown>[] = [
      { channel: 'phone-sms', memberId: b.memberId, phoneNumberId: a.phoneId },
      {
        channel: 'phone-sms',
        memberId: a.memberId,
        phoneNumberId: a.phoneId,
        participants: [{ memberId: b.memberId, role: 'contributor' }],
      },
      {
        channel: 'phone-sms',
        memberId: a.memberId,
        phoneNumberId: a.phoneId,
        assistantKind: 'human',
        assistantMemberId: b.memberId,
      },
      { channel: 'phone-sms', memberId: a.memberId, phoneNumberId: b.phoneId },
    ];
    for (const body of attempts) {
      const res = await t.request('POST', `/w/${a.wid}/chats`, { token: a.key, body });
      expect({ body, status: res.status >= 400 && res.status < 500 }).toEqual({ body, status: true });
    }
    const before = sentTo(b.phone).length;
    const sent = await send(a, 'For A only');
    expect(sent.status).toBe(201);
    await eventually(async () => sentTo(a.phone).some((m) => m.body === 'For A only'), 'A’s text to go out');
    expect(sentTo(b.phone)).toHaveLength(before);
  });

  it('a text from B’s consenting member to A’s number is A’s own contact: A’s reply reads A’s member, without B’s consent', async () => {
    const res = await peer.webhook(
      `${PUBLIC_BASE_URL}/providers/twilio/sms/inbound`,
      t.baseUrl,
      PUBLIC_BASE_URL,
      {
        AccountSid: peer.accountSid,
        MessageSid: 'SMattackcross01',
        From: b.phone,
        To: a.number,
        Body: 'Hi A',
      },
    );
    expect(res.status).toBe(200);
    // A's contact for that phone: a member of A (not B's), in a chat of A.
    const contact = await eventually(async () => {
      const r = await t.request('GET', `/w/${a.wid}/members?phone=${encodeURIComponent(b.phone)}`, {
        token: a.key,
      });
      return r.body.items?.[0] as { id: number; notifySms: boolean; workspaceId: string } | undefined;
    }, 'A’s contact for B’s phone');
    expect(contact).toMatchObject({ workspaceId: a.wid, notifySms: false });
    expect(contact.id).not.toBe(b.memberId);
    const chat = await eventually(async () => {
      const r = await t.request('GET', `/w/${a.wid}/chats?memberId=${contact.id}`, { token: a.key });
      return r.body.items?.[0] as { id: number } | undefined;
    }, 'the contact’s chat in A');

    const reads: string[][] = [];
    const readStreams = t.store.readStreams!.bind(t.store);
    t.store.readStreams = (names: readonly string[]) => {
      reads.push([...names]);
      return readStreams(names);
    };
    const fromA = () => sentTo(b.phone).filter((m) => m.from === a.number).length;
    const before = fromA();
    try {
      const sent = await t.request('POST', `/w/${a.wid}/chats/${chat.id}/send-assistant-message`, {
        token: a.key,
        body: { message: 'Reply from A' },
      });
      expect(sent.status).toBe(201);
      const failed = await eventually(async () => {
        const m = await t.request('GET', `/w/${a.wid}/chats/${chat.id}/messages/${sent.body.id}`, {
          token: a.key,
        });
        return m.body.status === 'failed' ? m.body : undefined;
      }, 'the reply to fail for want of consent');
      // A's contact never consented in A; B's consent for the same phone counts for nothing here.
      expect(failed).toMatchObject({ failureReason: 'no_consent' });
    } finally {
      t.store.readStreams = readStreams;
    }
    expect(fromA()).toBe(before);
    expect(reads).toContainEqual([`chat-${chat.id}`, `member-${contact.id}`]);
    for (const names of reads) expect(names).not.toContain(`member-${b.memberId}`);
  });

  it('a delivery naming a chat or recipient that is missing, or a recipient of another workspace, sends nothing', async () => {
    const sent = await send(a, 'Checked delivery');
    expect(sent.status).toBe(201);
    await eventually(
      async () => sentTo(a.phone).some((m) => m.body === 'Checked delivery'),
      'the text to go out',
    );
    // The worker records the dispatch (the provider's message id) after the peer's answer:
    // wait for that record, as a second run of the job would meet it.
    await eventually(async () => {
      const m = await t.request('GET', `/w/${a.wid}/chats/${a.chatId}/messages/${sent.body.id}`, {
        token: a.key,
      });
      const ds = (m.body.deliveries ?? []) as { providerMessageId: string | null }[];
      return ds.length > 0 && ds.every((d) => d.providerMessageId !== null) ? m.body : undefined;
    }, 'the dispatch to be recorded');
    const deliveries = t.app.get(DeliveryService, { strict: false });
    const job = {
      workspaceId: a.wid,
      chatId: a.chatId,
      messageId: sent.body.id as number,
      recipientMemberId: a.memberId,
      correlationId: 'attack',
      causationId: 'attack',
    };
    const before = peer.messages.length;
    // The same delivery again: already dispatched, nothing sent twice.
    await expect(deliveries.deliver(job, SMS_QUEUE)).resolves.toMatch(/^already-/);
    for (const forged of [
      { ...job, recipientMemberId: b.memberId },
      { ...job, workspaceId: b.wid, recipientMemberId: b.memberId },
      { ...job, chatId: b.chatId },
      { ...job, chatId: 2_000_000_000 },
      { ...job, recipientMemberId: 2_000_000_000 },
    ])
      await expect(deliveries.deliver(forged, SMS_QUEUE)).rejects.toThrow(/not found/);
    expect(peer.messages.length).toBe(before);
  });
});
