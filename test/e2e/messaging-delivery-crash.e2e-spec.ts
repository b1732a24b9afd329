import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { jobIdFor } from '../../src/core/reactors/reactor';
import { startTestApp, TestApp } from '../support/app';
import { signup } from '../support/identity-fixtures';
import { eventually, killAll, ServiceProcess, spawnService, TEST_WORKER } from '../support/processes';
import { TEST_REDIS_URL } from '../support/redis';
import { startTwilioPeer, TwilioPeer, twilioServiceEnv } from '../support/twilio-peer';

const PUBLIC_BASE_URL = 'https://messaging.example.test/api/v2';

/**
 * A delivery worker dies mid-delivery, right after the provider accepted the SMS and its
 * id was recorded (MESSAGING_TEST_EXIT_AFTER_DISPATCH, honoured with NODE_ENV=test only).
 * BullMQ gives the stalled job to another worker, which finds the provider id on the
 * chat's stream and sends nothing again: the provider receives the message once.
 */
describe('Messaging: a delivery worker killed mid-delivery (e2e)', () => {
  let peer: TwilioPeer;
  let api: TestApp;
  let env: Record<string, string>;

  beforeAll(async () => {
    peer = await startTwilioPeer();
    const twilio = {
      ...twilioServiceEnv(peer),
      PUBLIC_BASE_URL,
      QUEUE_LOCK_DURATION_MS: '1000',
      QUEUE_STALLED_INTERVAL_MS: '500',
    };
    // The API process (in this test) runs no projections, reactors or workers: the spawned workers do.
    api = await startTestApp({ env: { ...twilio, ROLE: 'api' } });
    env = {
      ...twilio,
      DATABASE_URL: api.database.url,
      REDIS_URL: TEST_REDIS_URL,
      REDIS_PREFIX: api.config.redisPrefix,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      ROLE: 'worker',
    };
  }, 60_000);
  afterAll(async () => {
    await killAll();
    await api?.close();
    await peer?.close();
  });

  async function worker(name: string, extra: Record<string, string> = {}): Promise<ServiceProcess> {
    const p = spawnService(name, TEST_WORKER, { ...env, ...extra });
    await p.waitForLine(/"msg":"worker started"/, 90_000);
    return p;
  }

  it('retries the job on another worker, which never sends the SMS again', async () => {
    const first = await worker('crashing-worker', { MESSAGING_TEST_EXIT_AFTER_DISPATCH: '1' });
    const { workspaceId: wid, apiKey: key } = await api.bootstrap('Crash clinic');
    const phone = await api.request('POST', `/w/${wid}/phone-numbers`, {
      token: key,
      body: { number: '+14155550400' },
    });
    const member = await signup(api, wid, key, { phone: '+14155553001' });
    await api.request('PUT', `/w/${wid}/members/${member.member.id}`, {
      token: key,
      body: { notifySms: true },
    });
    const chat = await api.request('POST', `/w/${wid}/chats`, {
      token: key,
      body: { channel: 'phone-sms', memberId: member.member.id, phoneNumberId: phone.body.id },
    });
    expect(chat.status).toBe(201);
    const sent = await api.request('POST', `/w/${wid}/chats/${chat.body.id}/send-assistant-message`, {
      token: key,
      body: { message: 'Exactly once, please' },
    });
    expect(sent.status).toBe(201);

    // The first worker sends, records the provider's id, and dies before finishing the job.
    expect(await first.exited).toBe(1);
    expect(first.output()).toMatch(/"msg":"delivery dispatched"/);
    expect(peer.messages.map((m) => m.body)).toEqual(['Exactly once, please']);
    const stream = await api.store.readStream(`chat-${chat.body.id}`);
    expect(stream.map((e) => e.type)).toEqual(['ChatCreated', 'MessageSent', 'MessageDispatched']);

    // Another worker picks the stalled job up and finds the delivery already dispatched.
    await worker('second-worker');
    const queue = api.app.get<Queue>(getQueueToken('sms'), { strict: false });
    const messageSent = stream[1];
    const job = await eventually(
      async () => queue.getJob(jobIdFor(messageSent, `recipient-${member.member.id}`)),
      'the delivery job',
    );
    await eventually(
      async () => (await job.getState()) === 'completed',
      'the retried job to complete',
      30_000,
    );
    const done = await queue.getJob(job.id!);
    expect(done!.returnvalue).toBe('already-dispatched');
    expect(peer.messages).toHaveLength(1);

    // Its status callback still lands on the delivery.
    const callback = await peer.status(peer.messages[0], api.baseUrl, PUBLIC_BASE_URL, 'delivered');
    expect(callback.status).toBe(204);
    const message = await api.request('GET', `/w/${wid}/chats/${chat.body.id}/messages/${sent.body.id}`, {
      token: key,
    });
    expect(message.body).toMatchObject({
      status: 'delivered',
      deliveries: [
        { memberId: member.member.id, status: 'delivered', providerMessageId: peer.messages[0].sid },
      ],
    });
    expect(peer.messages).toHaveLength(1);
  }, 120_000);
});
