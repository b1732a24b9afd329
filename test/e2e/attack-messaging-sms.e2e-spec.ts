import { startTestApp, TestApp } from '../support/app';
import { eventually } from '../support/processes';
import { startTwilioPeer, TwilioPeer, twilioServiceEnv } from '../support/twilio-peer';

const PUBLIC_BASE_URL = 'https://messaging.example.test/api/v2';
const WORKSPACE_NUMBER = '+14155550310';

/**
 * Attack: inbound texts holding characters PostgreSQL cannot store. Twilio does not retry
 * a 4xx, so a text answered 400 was lost: the webhook keeps it (NUL as U+FFFD) instead, a
 * NUL in a field the service does not read changes nothing, and the signature is still
 * checked over the fields as sent.
 */
describe('Attack: inbound SMS with NUL characters (e2e)', () => {
  let peer: TwilioPeer;
  let t: TestApp;
  let wid: string;
  let key: string;

  beforeAll(async () => {
    peer = await startTwilioPeer();
    t = await startTestApp({ env: { ...twilioServiceEnv(peer), PUBLIC_BASE_URL } });
    ({ workspaceId: wid, apiKey: key } = await t.bootstrap('Nul Clinic'));
    const phone = await t.request('POST', `/w/${wid}/phone-numbers`, {
      token: key,
      body: { number: WORKSPACE_NUMBER },
    });
    expect(phone.status).toBe(201);
  });
  afterAll(async () => {
    await t.close();
    await peer.close();
  });

  const inbound = (fields: Record<string, string>, signature?: string) =>
    peer.webhook(
      `${PUBLIC_BASE_URL}/providers/twilio/sms/inbound`,
      t.baseUrl,
      PUBLIC_BASE_URL,
      { AccountSid: peer.accountSid, To: WORKSPACE_NUMBER, ...fields },
      signature,
    );
  /**
   * The events the webhook appended itself, once `count` of them are readable: the inbound
   * webhook answers without waiting for the store's readers to pass its appends.
   */
  const appendedBy = (res: Response, count: number) =>
    eventually(async () => {
      const events = (await t.eventsOf({ requestId: res.headers.get('x-request-id')! } as never)).filter(
        (e) => !e.metadata.causationId,
      );
      return events.length >= count ? events : undefined;
    }, `${count} events appended by the webhook`);
  /** A retry's request appended nothing: its id is absent from the log once a later write is readable. */
  const appendedNothing = async (res: Response) =>
    (await t.eventsOf({ requestId: res.headers.get('x-request-id')! } as never)).filter(
      (e) => !e.metadata.causationId,
    );

  it('keeps a text holding NUL characters (each as U+FFFD) rather than refusing it with a 400', async () => {
    const res = await inbound({
      MessageSid: 'SMnul0001',
      From: '+14155552301',
      Body: 'before\u0000after\u0000',
    });
    expect(res.status).toBe(200);
    const events = await appendedBy(res, 3);
    expect(events.map((e) => e.type)).toEqual(['MemberCreated', 'ChatCreated', 'MessageReceived']);
    expect(events[2].data).toMatchObject({ source: 'sms', content: 'before\ufffdafter\ufffd' });
    const chatId = (events[1].data as { chatId: number }).chatId;
    const messages = await eventually(async () => {
      const page = await t.request('GET', `/w/${wid}/chats/${chatId}/messages`, { token: key });
      return page.status === 200 && page.body.items.length ? page : undefined;
    }, 'the chat and its message readable');
    expect(messages.body.items).toMatchObject([{ direction: 'inbound', content: 'before\ufffdafter\ufffd' }]);
    // Twilio's retry of the same message adds nothing.
    const again = await inbound({
      MessageSid: 'SMnul0001',
      From: '+14155552301',
      Body: 'before\u0000after\u0000',
    });
    expect(again.status).toBe(200);
    // A later text from the same number, once readable, shows the retry appended nothing before it.
    const later = await inbound({ MessageSid: 'SMnul0003', From: '+14155552301', Body: 'later' });
    expect(later.status).toBe(200);
    expect((await appendedBy(later, 1)).map((e) => e.type)).toEqual(['MessageReceived']);
    expect(await appendedNothing(again)).toEqual([]);
  });

  it('keeps a text whose unread fields (FromCity) hold a NUL', async () => {
    const res = await inbound({
      MessageSid: 'SMnul0002',
      From: '+14155552302',
      Body: 'hello',
      FromCity: 'SAN\u0000FRANCISCO',
    });
    expect(res.status).toBe(200);
    const events = await appendedBy(res, 3);
    expect(events.find((e) => e.type === 'MessageReceived')?.data).toMatchObject({ content: 'hello' });
  });

  it('still checks the signature over the fields as sent, NUL and all', async () => {
    const forged = await inbound(
      { MessageSid: 'SMnul0003', From: '+14155552303', Body: 'x\u0000' },
      'Zm9yZ2Vk',
    );
    expect(forged.status).toBe(403);
    const twilio = await import('twilio');
    // Signed over the cleaned text, sent with the NUL: not the message Twilio signed.
    const cleaned = twilio.default.getExpectedTwilioSignature(
      peer.authToken,
      `${PUBLIC_BASE_URL}/providers/twilio/sms/inbound`,
      {
        AccountSid: peer.accountSid,
        To: WORKSPACE_NUMBER,
        MessageSid: 'SMnul0004',
        From: '+14155552303',
        Body: 'x\ufffd',
      },
    );
    const res = await inbound({ MessageSid: 'SMnul0004', From: '+14155552303', Body: 'x\u0000' }, cleaned);
    expect(res.status).toBe(403);
  });

  it('still refuses a NUL in the query of the webhook address (400 naming it)', async () => {
    const res = await fetch(`${t.baseUrl}/providers/twilio/sms/inbound?x=%00`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'Body=hi',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/^query x: must not contain NUL/);
  });
});
