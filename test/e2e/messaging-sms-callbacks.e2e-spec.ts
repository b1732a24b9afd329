import { DeliveryService } from '../../src/modules/messaging/workers/delivery.service';
import { WrongExpectedRevisionError } from '../../src/core/event-store/event-store.port';
import { startTestApp, TestApp } from '../support/app';
import { signup } from '../support/identity-fixtures';
import { eventually } from '../support/processes';
import { startTwilioPeer, TwilioPeer, twilioServiceEnv } from '../support/twilio-peer';

const PUBLIC_BASE_URL = 'https://callbacks.example.test/api/v2';
const WORKSPACE_NUMBER = '+14155550400';
const CHATS = 12;

/**
 * A provider that calls back as soon as it answers (Twilio can; the tests' peer always
 * does with `autoStatus`): the status callback reaches the service while its worker is
 * still recording the provider's answer. The callback waits for that record, so the
 * chat's stream tells the delivery in order (dispatched, then delivered), and no append
 * loses a race to the other (the loser read the stream and decided again).
 */
describe('Messaging: a status callback sent as the provider answers (e2e)', () => {
  let peer: TwilioPeer;
  let t: TestApp;
  let wid: string;
  let key: string;

  beforeAll(async () => {
    peer = await startTwilioPeer();
    t = await startTestApp({ env: { ...twilioServiceEnv(peer), PUBLIC_BASE_URL } });
    ({ workspaceId: wid, apiKey: key } = await t.bootstrap('Callback Clinic'));
    peer.autoStatus = { status: 'delivered', appBaseUrl: t.baseUrl, publicBaseUrl: PUBLIC_BASE_URL };
    // Counts the appends to a chat's stream refused for a newer revision (observed, not changed).
    const append = t.store.append.bind(t.store);
    t.store.append = async (...args) => {
      try {
        return await append(...args);
      } catch (err) {
        if (err instanceof WrongExpectedRevisionError && args[0].startsWith('chat-')) lostRaces++;
        throw err;
      }
    };
  });
  let lostRaces = 0;
  afterAll(async () => {
    await t.close();
    await peer.close();
  });

  it('records each dispatch before its delivered callback, and sends each SMS once', async () => {
    const post = (path: string, body: unknown) => t.request('POST', `/w/${wid}${path}`, { token: key, body });
    const phoneId = (await post('/phone-numbers', { number: WORKSPACE_NUMBER })).body.id as number;
    const chats: number[] = [];
    for (let i = 0; i < CHATS; i++) {
      const member = await signup(t, wid, key, { phone: `+141555530${String(i).padStart(2, '0')}` });
      await t.request('PUT', `/w/${wid}/members/${member.member.id}`, {
        token: key,
        body: { notifySms: true },
      });
      const chat = await post('/chats', {
        channel: 'phone-sms',
        memberId: member.member.id,
        phoneNumberId: phoneId,
      });
      chats.push(chat.body.id as number);
    }
    const sent = await Promise.all(
      chats.map((id) => post(`/chats/${id}/send-assistant-message`, { message: 'Your results are ready' })),
    );
    expect(sent.map((s) => s.status)).toEqual(chats.map(() => 201));
    await eventually(
      async () => (peer.callbacks >= CHATS ? true : undefined),
      'every status callback to be answered',
    );

    for (const id of chats) {
      const events = await t.store.readStream(`chat-${id}`);
      expect(events.map((e) => e.type)).toEqual([
        'ChatCreated',
        'MessageSent',
        'MessageDispatched',
        'MessageDelivered',
      ]);
    }
    expect(lostRaces).toBe(0);
    expect(peer.callbackFailures).toBe(0);
    expect(peer.messages).toHaveLength(CHATS);
  });

  /**
   * The send decides on the chat as this process wrote it (its creation), the status
   * callback on the chat as the worker left it after the dispatch: of the three, only the
   * worker reads the chat's stream (a retried job must see a recorded provider id).
   */
  it("reads a chat's stream once per SMS sent and delivered (the worker's read), and decides anew on a stream another writer moved", async () => {
    const post = (path: string, body: unknown) => t.request('POST', `/w/${wid}${path}`, { token: key, body });
    const phones = await t.request('GET', `/w/${wid}/phone-numbers`, { token: key });
    const phoneId = phones.body.items.find((p: { number: string }) => p.number === WORKSPACE_NUMBER)
      .id as number;
    const chats: number[] = [];
    for (let i = 0; i < 3; i++) {
      const member = await signup(t, wid, key, { phone: `+141555531${String(i).padStart(2, '0')}` });
      await t.request('PUT', `/w/${wid}/members/${member.member.id}`, {
        token: key,
        body: { notifySms: true },
      });
      chats.push(
        (await post('/chats', { channel: 'phone-sms', memberId: member.member.id, phoneNumberId: phoneId }))
          .body.id as number,
      );
    }
    const readStream = t.store.readStream.bind(t.store);
    const reads = new Map<string, number>();
    t.store.readStream = ((name: string, ...rest: unknown[]) => {
      reads.set(name, (reads.get(name) ?? 0) + 1);
      return (readStream as (...args: unknown[]) => unknown)(name, ...rest);
    }) as typeof t.store.readStream;
    // The worker reads the chat with its recipient's stream in one statement (readStreams).
    const readStreams = t.store.readStreams!.bind(t.store);
    t.store.readStreams = (names: readonly string[]) => {
      for (const name of names) reads.set(name, (reads.get(name) ?? 0) + 1);
      return readStreams(names);
    };
    const callbacksBefore = peer.callbacks;
    try {
      // Another writer (another process) moves the last chat on: this process's state of it is stale.
      const stale = chats[2];
      const [created] = await readStream(`chat-${stale}`);
      await t.store.append(
        `chat-${stale}`,
        [
          {
            type: 'ChatUpdated',
            data: {
              chatId: stale,
              workspaceId: wid,
              changes: { title: 'Moved elsewhere' },
              updatedAt: new Date().toISOString(),
            },
            metadata: { ...created.metadata, occurredAt: new Date().toISOString() },
          },
        ],
        { expectedRevision: created.revision },
      );
      reads.clear();
      for (const id of chats)
        expect(
          (await post(`/chats/${id}/send-assistant-message`, { message: 'See you Monday' })).status,
        ).toBe(201);
      await eventually(
        async () => (peer.callbacks >= callbacksBefore + chats.length ? true : undefined),
        'the status callbacks to be answered',
      );
      await eventually(async () => {
        const types = (await readStream(`chat-${stale}`)).map((e) => e.type);
        return types.at(-1) === 'MessageDelivered' ? true : undefined;
      }, 'the last delivery to be recorded');
      // Fresh chats: the worker's read only. The moved one: the send's retry on the stored stream too.
      expect(chats.map((id) => reads.get(`chat-${id}`) ?? 0)).toEqual([1, 1, 2]);
      for (const id of chats)
        expect((await readStream(`chat-${id}`)).map((e) => e.type)).toEqual([
          'ChatCreated',
          ...(id === stale ? ['ChatUpdated'] : []),
          'MessageSent',
          'MessageDispatched',
          'MessageDelivered',
        ]);
    } finally {
      t.store.readStream = readStream;
      t.store.readStreams = readStreams;
    }
  });
  /**
   * The worker takes the SMS address from the member's own stream, which it reads anyway for
   * consent at send time, not from the members read model: a phone changed just before the
   * send goes to the new number even while the read model still shows the old one.
   */
  it("sends to the phone the member's stream holds, ahead of the members read model", async () => {
    const post = (path: string, body: unknown) => t.request('POST', `/w/${wid}${path}`, { token: key, body });
    const phones = await t.request('GET', `/w/${wid}/phone-numbers`, { token: key });
    const phoneId = phones.body.items.find((p: { number: string }) => p.number === WORKSPACE_NUMBER)
      .id as number;
    const member = await signup(t, wid, key, { phone: '+14155553200' });
    const memberId = member.member.id as number;
    const changed = await t.request('PUT', `/w/${wid}/members/${memberId}`, {
      token: key,
      body: { notifySms: true, phone: '+14155553201' },
    });
    expect(changed.status).toBe(200);
    // The read model lagging behind the stream: it still shows the number before the PUT.
    await t.database.pool().query(`UPDATE members SET phone = '+14155553200' WHERE id = $1`, [memberId]);
    const chat = await post('/chats', { channel: 'phone-sms', memberId, phoneNumberId: phoneId });
    expect(chat.status).toBe(201);
    const sent = await post(`/chats/${chat.body.id as number}/send-assistant-message`, {
      message: 'New number',
    });
    expect(sent.status).toBe(201);
    const delivered = await eventually(
      async () => peer.messages.find((m) => m.body === 'New number'),
      'the SMS to reach the peer',
    );
    expect(delivered.to).toBe('+14155553201');
    expect(peer.messages.filter((m) => m.to === '+14155553200')).toEqual([]);
  });
  /**
   * A callback that reaches the service before the provider's answer does (the peer posts it
   * first, and answers once the service has taken the callback in) waits for the worker's
   * record of that answer and rides in its append: the chat takes one append for the
   * dispatch and the outcome, not two.
   */
  it("records a callback that came before the provider's answer in the dispatch's own append", async () => {
    const post = (path: string, body: unknown) => t.request('POST', `/w/${wid}${path}`, { token: key, body });
    const phones = await t.request('GET', `/w/${wid}/phone-numbers`, { token: key });
    const phoneId = phones.body.items.find((p: { number: string }) => p.number === WORKSPACE_NUMBER)
      .id as number;
    const member = await signup(t, wid, key, { phone: '+14155553300' });
    await t.request('PUT', `/w/${wid}/members/${member.member.id}`, {
      token: key,
      body: { notifySms: true },
    });
    const chatId = (
      await post('/chats', { channel: 'phone-sms', memberId: member.member.id, phoneNumberId: phoneId })
    ).body.id as number;
    // Observed, not changed: the peer answers once the callback has reached the deliveries.
    const deliveries = t.app.get(DeliveryService);
    const recordWithDispatch = deliveries.recordWithDispatch.bind(deliveries);
    let callbackIn!: () => void;
    const callbackArrived = new Promise<void>((resolve) => (callbackIn = resolve));
    deliveries.recordWithDispatch = (...args) => {
      const recorded = recordWithDispatch(...args);
      callbackIn();
      return recorded;
    };
    const auto = peer.autoStatus!;
    peer.autoStatus = {
      ...auto,
      answerAfter: () => Promise.race([callbackArrived, new Promise((r) => setTimeout(r, 5000))]),
    };
    const append = t.store.append.bind(t.store);
    let appends = 0;
    t.store.append = (async (...args: Parameters<typeof append>) => {
      if (args[0] === `chat-${chatId}`) appends++;
      return append(...args);
    }) as typeof t.store.append;
    const callbacksBefore = peer.callbacks;
    try {
      const sent = await post(`/chats/${chatId}/send-assistant-message`, { message: 'Early callback' });
      expect(sent.status).toBe(201);
      await eventually(async () => (peer.callbacks > callbacksBefore ? true : undefined), 'the callback');
      const events = await t.store.readStream(`chat-${chatId}`);
      expect(events.map((e) => e.type)).toEqual([
        'ChatCreated',
        'MessageSent',
        'MessageDispatched',
        'MessageDelivered',
      ]);
      expect(events[3].position.commit).toBe(events[2].position.commit);
      expect(appends).toBe(2);
      // The outcome was appended by the worker, not by this client's request: the read model
      // shows it once its projection passed that append.
      const message = await eventually(async () => {
        const m = await t.request('GET', `/w/${wid}/chats/${chatId}/messages/${sent.body.id as number}`, {
          token: key,
        });
        return m.body.status === 'delivered' ? m.body : undefined;
      }, 'the message to show delivered');
      expect(message.status).toBe('delivered');
    } finally {
      peer.autoStatus = auto;
      t.store.append = append;
      deliveries.recordWithDispatch = recordWithDispatch;
    }
  });
});
