import { startTestApp, TestApp } from '../support/app';
import { startTwilioPeer, TwilioPeer, twilioServiceEnv } from '../support/twilio-peer';
import { person } from '../support/work-fixtures';

const PUBLIC_BASE_URL = 'https://prototype-keys.example.test/api/v2';

/** Names every plain object answers for through Object.prototype. */
const PROTOTYPE_NAMES = [
  'constructor',
  'toString',
  'valueOf',
  'hasOwnProperty',
  '__proto__',
  'isPrototypeOf',
  '__defineGetter__',
];

/**
 * Lookup tables indexed by a name the caller (or a provider's form) chooses: a name that
 * Object.prototype holds is as unknown as any other, never a value read off the prototype.
 */
describe('Prototype names as lookup keys (e2e)', () => {
  let peer: TwilioPeer;
  let t: TestApp;
  let wid: string;
  let key: string;
  let phoneId: number;
  let patientId: number;

  beforeAll(async () => {
    peer = await startTwilioPeer();
    t = await startTestApp({ env: { ...twilioServiceEnv(peer), PUBLIC_BASE_URL } });
    ({ workspaceId: wid, apiKey: key } = await t.bootstrap('Prototype Keys Clinic'));
    phoneId = (
      await t.request('POST', `/w/${wid}/phone-numbers`, { token: key, body: { number: '+14155550990' } })
    ).body.id;
    patientId = (await person(t, wid, key)).memberId;
  });
  afterAll(async () => {
    await t.close();
    await peer.close();
  });

  it('a voice status callback whose CallStatus is a prototype name is an unknown status: no call event, the real end still recorded', async () => {
    const created = await t.request('POST', `/w/${wid}/chats`, {
      token: key,
      body: { channel: 'phone-voice', memberId: patientId, phoneNumberId: phoneId },
    });
    expect(created.status).toBe(201);
    const chatId = created.body.id as number;
    const status = (params: Record<string, string>) =>
      peer.webhook(
        `${PUBLIC_BASE_URL}/providers/twilio/voice/status?chatId=${chatId}`,
        t.baseUrl,
        PUBLIC_BASE_URL,
        { AccountSid: peer.accountSid, ...params },
      );

    for (const name of PROTOTYPE_NAMES) {
      const res = await status({ CallSid: 'CA900', CallStatus: name, CallDuration: '5' });
      expect({ name, status: res.status }).toEqual({ name, status: 204 });
    }
    const calls = async () =>
      (await t.store.readStream(`chat-${chatId}`)).filter((e) => e.type.startsWith('Call'));
    expect(await calls()).toEqual([]);

    expect((await status({ CallSid: 'CA900', CallStatus: 'completed', CallDuration: '30' })).status).toBe(
      204,
    );
    expect((await calls()).map((e) => [e.type, e.data])).toEqual([
      [
        'CallCompleted',
        expect.objectContaining({ chatId, callSid: 'CA900', durationSeconds: 30, outcome: 'completed' }),
      ],
    ]);
  });

  it("a tool schema's format named after a prototype member is an unknown format, refused at its path", async () => {
    const kit = await t.request('POST', `/w/${wid}/custom-toolkits`, {
      token: key,
      body: { name: 'Kit', slug: 'proto-kit' },
    });
    expect(kit.status).toBe(201);
    const tools = `/w/${wid}/custom-toolkits/${kit.body.id}/tools`;
    for (const name of PROTOTYPE_NAMES) {
      const res = await t.request('POST', tools, {
        token: key,
        body: {
          name: 'tool',
          inputSchema: { type: 'object', properties: { a: { type: 'string', format: name } } },
        },
      });
      expect({ name, status: res.status }).toEqual({ name, status: 400 });
      expect(res.body.detail).toMatch(
        new RegExp(
          `^inputSchema\\.properties\\.a\\.format: unknown format "${name}"; known formats: date-time`,
        ),
      );
      await t.expectEvents(res, []);
    }
  });
});
