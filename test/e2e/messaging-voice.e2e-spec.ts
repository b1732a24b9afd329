import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApp, TestApp } from '../support/app';
import { keyWithScopes, signup } from '../support/identity-fixtures';
import { eventually } from '../support/processes';
import { startTwilioPeer, TwilioPeer, twilioServiceEnv } from '../support/twilio-peer';
import { agentMember, createWorkflow, person } from '../support/work-fixtures';

const PUBLIC_BASE_URL = 'https://voice.example.test/api/v2';

/** A small but real RIFF/WAVE file: 8 kHz mono 16-bit PCM, random samples. */
function wav(samples: number): Buffer {
  const data = randomBytes(samples * 2);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(16000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

/**
 * Voice calls through the Twilio-compatible provider: signed status callbacks become
 * CallStarted / CallCompleted once each, a recording callback makes a worker fetch the WAV
 * from the peer and keep it in the files storage, served back byte for byte.
 */
describe('Messaging: voice calls and recordings (e2e)', () => {
  let peer: TwilioPeer;
  let t: TestApp;
  let dir: string;
  let wid: string;
  let key: string;
  let chatId: number;
  let patient: { memberId: number; token: string };
  let phoneId: number;

  beforeAll(async () => {
    peer = await startTwilioPeer();
    dir = await mkdtemp(join(tmpdir(), 'voice-'));
    t = await startTestApp({
      env: {
        ...twilioServiceEnv(peer),
        PUBLIC_BASE_URL,
        FILE_STORAGE_DIR: dir,
      },
    });
    ({ workspaceId: wid, apiKey: key } = await t.bootstrap('Voice Clinic'));
    phoneId = (
      await t.request('POST', `/w/${wid}/phone-numbers`, { token: key, body: { number: '+14155550700' } })
    ).body.id;
    patient = await person(t, wid, key);
    const chat = await t.request('POST', `/w/${wid}/chats`, {
      token: key,
      body: { channel: 'phone-voice', memberId: patient.memberId, phoneNumberId: phoneId },
    });
    expect(chat.status).toBe(201);
    chatId = chat.body.id;
  });
  afterAll(async () => {
    await t.close();
    await peer.close();
    await rm(dir, { recursive: true, force: true });
  });

  const callback = (kind: 'status' | 'recording', params: Record<string, string>, signature?: string) =>
    peer.webhook(
      `${PUBLIC_BASE_URL}/providers/twilio/voice/${kind}?chatId=${chatId}`,
      t.baseUrl,
      PUBLIC_BASE_URL,
      { AccountSid: peer.accountSid, ...params },
      signature,
    );
  const audio = (token = key) => t.request('GET', `/recordings/chat/${chatId}/audio.wav`, { token });

  it('refuses forged voice callbacks with 403, recording nothing', async () => {
    for (const kind of ['status', 'recording'] as const) {
      const res = await callback(kind, { CallSid: 'CA1', CallStatus: 'in-progress' }, 'forged');
      expect(res.status).toBe(403);
    }
    const events = await t.store.readStream(`chat-${chatId}`);
    expect(events.map((e) => e.type)).toEqual(['ChatCreated']);
  });

  it('turns status callbacks into one CallStarted and one CallCompleted, whatever the order or repeats', async () => {
    expect((await callback('status', { CallSid: 'CA1', CallStatus: 'ringing' })).status).toBe(204);
    expect((await callback('status', { CallSid: 'CA1', CallStatus: 'in-progress' })).status).toBe(204);
    expect((await callback('status', { CallSid: 'CA1', CallStatus: 'in-progress' })).status).toBe(204);
    expect(
      (await callback('status', { CallSid: 'CA1', CallStatus: 'completed', CallDuration: '42' })).status,
    ).toBe(204);
    // Late and repeated: nothing more.
    expect((await callback('status', { CallSid: 'CA1', CallStatus: 'in-progress' })).status).toBe(204);
    expect((await callback('status', { CallSid: 'CA1', CallStatus: 'busy' })).status).toBe(204);
    const events = (await t.store.readStream(`chat-${chatId}`)).filter((e) => e.type.startsWith('Call'));
    expect(events.map((e) => [e.type, e.data])).toEqual([
      ['CallStarted', expect.objectContaining({ chatId, callSid: 'CA1' })],
      [
        'CallCompleted',
        expect.objectContaining({ chatId, callSid: 'CA1', durationSeconds: 42, outcome: 'completed' }),
      ],
    ]);
  });

  it("moves a voice chat's messages from sent to delivered or failed with its call's end", async () => {
    const newChat = async () => {
      const created = await t.request('POST', `/w/${wid}/chats`, {
        token: key,
        body: { channel: 'phone-voice', memberId: patient.memberId, phoneNumberId: phoneId },
      });
      expect(created.status).toBe(201);
      return created.body.id as number;
    };
    const status = (id: number, params: Record<string, string>) =>
      peer.webhook(
        `${PUBLIC_BASE_URL}/providers/twilio/voice/status?chatId=${id}`,
        t.baseUrl,
        PUBLIC_BASE_URL,
        { AccountSid: peer.accountSid, ...params },
      );
    const message = (id: number, messageId: number) =>
      t.request('GET', `/w/${wid}/chats/${id}/messages/${messageId}`, { token: key });

    const answered = await newChat();
    const said = await t.request('POST', `/w/${wid}/chats/${answered}/send-assistant-message`, {
      token: key,
      body: { message: 'Your test results are normal.' },
    });
    expect(said.status).toBe(201);
    expect(said.body).toMatchObject({ status: 'sent' });
    expect((await status(answered, { CallSid: 'CA20', CallStatus: 'in-progress' })).status).toBe(204);
    expect((await message(answered, said.body.id)).body.status).toBe('sent');
    expect(
      (await status(answered, { CallSid: 'CA20', CallStatus: 'completed', CallDuration: '12' })).status,
    ).toBe(204);
    const delivered = (await message(answered, said.body.id)).body;
    expect(delivered).toMatchObject({
      status: 'delivered',
      failureReason: null,
      deliveredAt: expect.any(String),
    });
    expect(delivered.deliveries).toEqual([
      expect.objectContaining({ memberId: patient.memberId, status: 'delivered' }),
    ]);
    // A repeated end changes nothing.
    expect((await status(answered, { CallSid: 'CA20', CallStatus: 'failed' })).status).toBe(204);
    expect((await message(answered, said.body.id)).body.status).toBe('delivered');

    const unanswered = await newChat();
    const lost = await t.request('POST', `/w/${wid}/chats/${unanswered}/send-assistant-message`, {
      token: key,
      body: { message: 'Please call us back.' },
    });
    expect((await status(unanswered, { CallSid: 'CA21', CallStatus: 'no-answer' })).status).toBe(204);
    expect((await message(unanswered, lost.body.id)).body).toMatchObject({
      status: 'failed',
      failureReason: 'call_no-answer',
    });
    const events = (await t.store.readStream(`chat-${unanswered}`)).map((e) => e.type);
    expect(events).toEqual(['ChatCreated', 'MessageSent', 'CallCompleted', 'MessageFailed']);
  });

  it('is 404 before any audio exists, then streams the fetched recording byte for byte', async () => {
    const missing = await audio();
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toMatch(/audio/i);

    const bytes = wav(8000);
    peer.recordings.set('RE1', bytes);
    const res = await callback('recording', {
      CallSid: 'CA1',
      RecordingSid: 'RE1',
      RecordingUrl: peer.recordingUrl('RE1'),
      RecordingStatus: 'completed',
    });
    expect(res.status).toBe(204);
    // The provider's retry of the same callback fetches nothing twice.
    await callback('recording', {
      CallSid: 'CA1',
      RecordingSid: 'RE1',
      RecordingUrl: peer.recordingUrl('RE1'),
    });

    await eventually(async () => (await audio()).status === 200, 'the stored recording');
    const got = await fetch(`${t.baseUrl}/recordings/chat/${chatId}/audio.wav`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('audio/wav');
    expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
    expect(peer.recordingFetches).toBe(1);
    const stored = (await t.store.readStream(`chat-${chatId}`)).filter(
      (e) => e.type === 'CallRecordingStored',
    );
    expect(stored).toHaveLength(1);
    expect(stored[0].data).toMatchObject({ recordingSid: 'RE1', bytes: bytes.length });
  });

  it('serves the audio to the chat member and chats:read holders; others of the workspace or elsewhere get 404', async () => {
    expect((await audio(patient.token)).status).toBe(200);
    const outsider = await person(t, wid, key);
    expect((await audio(outsider.token)).status).toBe(404);
    const noScopes = await keyWithScopes(t, key, ['members:read']);
    expect((await audio(noScopes)).status).toBe(404);
    const other = await t.bootstrap('Elsewhere');
    expect((await audio(other.apiKey)).status).toBe(404);
    expect((await t.request('GET', `/recordings/chat/999999/audio.wav`, { token: key })).status).toBe(404);
    expect((await t.request('GET', `/recordings/chat/${chatId}/audio.wav`)).status).toBe(401);
  });

  it('places the outbound call of a phone-voice workflow chat with assistantEnabled: true, once, with its callbacks', async () => {
    const wf = await createWorkflow(t, wid, key, {
      name: 'Call back',
      agentId: await agentMember(t, wid, key),
      defaultPhoneNumberId: phoneId,
    });
    const callee = await signup(t, wid, key, { email: 'callee@example.com', phone: '+14155550777' });
    const res = await t.request('POST', `/w/${wid}/chats`, {
      token: key,
      body: { channel: 'phone-voice', workflowId: wf.id, memberId: callee.member.id, assistantEnabled: true },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('deprecation')).toBe('true');
    const id = res.body.id as number;
    const placed = await eventually(
      async () => (await t.store.readStream(`chat-${id}`)).find((e) => e.type === 'CallPlaced'),
      'CallPlaced',
    );
    const calls = peer.calls.filter((c) => c.form.To === '+14155550777');
    expect(calls).toHaveLength(1);
    expect(calls[0].form).toMatchObject({
      From: '+14155550700',
      StatusCallback: `${PUBLIC_BASE_URL}/providers/twilio/voice/status?chatId=${id}`,
      RecordingStatusCallback: `${PUBLIC_BASE_URL}/providers/twilio/voice/recording?chatId=${id}`,
      Record: 'true',
    });
    expect(placed.data).toMatchObject({ chatId: id, callSid: calls[0].sid, to: '+14155550777' });
    // A chat without assistantEnabled places nothing.
    const quiet = await t.request('POST', `/w/${wid}/chats`, {
      token: key,
      body: { channel: 'phone-voice', workflowId: wf.id, memberId: callee.member.id },
    });
    expect(quiet.status).toBe(201);
    await new Promise((r) => setTimeout(r, 500));
    expect(peer.calls.filter((c) => c.form.To === '+14155550777')).toHaveLength(1);
  });

  it('stores a transcript the provider sends as a message of the chat, once', async () => {
    const params = {
      CallSid: 'CA1',
      RecordingSid: 'RE1',
      TranscriptionSid: 'TR1',
      TranscriptionStatus: 'completed',
      TranscriptionText: 'I would like to move my appointment to Friday.',
    };
    expect((await callback('recording', params)).status).toBe(204);
    expect((await callback('recording', params)).status).toBe(204);
    const list = await t.request('GET', `/w/${wid}/chats/${chatId}/messages`, { token: key });
    expect(list.status).toBe(200);
    const transcripts = list.body.items.filter(
      (m: { content: string }) => m.content === 'I would like to move my appointment to Friday.',
    );
    expect(transcripts).toHaveLength(1);
    expect(transcripts[0]).toMatchObject({ direction: 'inbound', role: 'user' });
    const received = (await t.store.readStream(`chat-${chatId}`)).filter((e) => e.type === 'MessageReceived');
    expect(received.map((e) => e.data)).toEqual([
      expect.objectContaining({ source: 'voice', providerMessageId: 'TR1', memberId: patient.memberId }),
    ]);
  });
});
