import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import type { StoredEvent } from '../../src/core/event-store/event-store.port';
import { IdleSummarySweep } from '../../src/modules/summaries/workers/idle-summary-sweep';
import { startTestApp, TestApp } from '../support/app';
import { signup } from '../support/identity-fixtures';
import { eventually } from '../support/processes';

/** 1.8 s of quiet makes a chat idle. */
const IDLE_MS = 1800;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A hostile or careless client against the idle-summary sweep and the reserved reply ids:
 * a chat kept busy gets no summary until it is quiet, sweeps racing each other add one
 * summary, a sweep never mixes workspaces, and no HTTP route lets a client choose a
 * message's id (concurrent sends keep ids unique).
 */
describe('attack: idle sweep and reserved message ids (e2e)', () => {
  let t: TestApp;
  const ws: { wid: string; key: string; memberId: number }[] = [];

  beforeAll(async () => {
    t = await startTestApp({ env: { CHAT_SUMMARY_IDLE_MINUTES: '0.03' } });
    for (const name of ['Sweep A', 'Sweep B']) {
      const { workspaceId: wid, apiKey: key } = await t.bootstrap(name);
      const s = await signup(t, wid, key, { email: `m-${name.slice(-1)}-${process.pid}@example.com` });
      ws.push({ wid, key, memberId: s.member.id });
    }
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (i: number, path: string, body: unknown) =>
    t.request('POST', `/w/${ws[i].wid}${path}`, { token: ws[i].key, body });
  const summaries = (chatId: number): Promise<StoredEvent[]> => t.store.readStream(`summary-chat-${chatId}`);
  async function webChat(i: number): Promise<number> {
    const res = await post(i, '/chats', { channel: 'web-chat', memberId: ws[i].memberId });
    expect(res.status).toBe(201);
    return res.body.id as number;
  }
  async function say(i: number, chatId: number, content: string): Promise<{ id: number }> {
    const res = await post(i, `/chats/${chatId}/messages`, { content });
    expect(res.status).toBe(201);
    return res.body as { id: number };
  }

  it('gives a chat kept busy no summary until it is quiet, then exactly one', async () => {
    const chatId = await webChat(0);
    let last = { id: 0 };
    const until = Date.now() + 2.5 * IDLE_MS;
    while (Date.now() < until) {
      last = await say(0, chatId, `still here ${Date.now()}`);
      await sleep(IDLE_MS / 3);
      expect(await summaries(chatId)).toEqual([]);
    }
    await eventually(async () => (await summaries(chatId)).length > 0 || undefined, 'the idle summary');
    await sleep(IDLE_MS + 600);
    const events = await summaries(chatId);
    expect(events.map((e) => (e.data as { key: string }).key)).toEqual([`idle:${last.id}`]);
  });

  it('adds one summary when sweeps race, each job in the chat’s own workspace', async () => {
    const sweep = t.app.get(IdleSummarySweep, { strict: false });
    const queue = t.app.get<Queue>(getQueueToken('summaries'), { strict: false });
    const a = await webChat(0);
    const b = await webChat(1);
    const ma = await say(0, a, 'from A');
    const mb = await say(1, b, 'from B');
    await sleep(IDLE_MS + 50);
    // Ten sweeps at once, besides the timer's own.
    await Promise.all(Array.from({ length: 10 }, () => sweep.sweep()));
    await eventually(
      async () => ((await summaries(a)).length && (await summaries(b)).length) || undefined,
      'both summaries',
    );
    await Promise.all(Array.from({ length: 10 }, () => sweep.sweep()));
    await sleep(800);
    const [ea, eb] = [await summaries(a), await summaries(b)];
    expect(ea.map((e) => (e.data as { key: string }).key)).toEqual([`idle:${ma.id}`]);
    expect(eb.map((e) => (e.data as { key: string }).key)).toEqual([`idle:${mb.id}`]);
    expect(ea[0].data).toMatchObject({ workspaceId: ws[0].wid });
    expect(eb[0].data).toMatchObject({ workspaceId: ws[1].wid });
    const jobs = (await queue.getJobs(['completed', 'waiting', 'delayed', 'active', 'failed'])).filter(
      (j) => j.data.trigger === 'idle' && (j.data.chatId === a || j.data.chatId === b),
    );
    expect(jobs.map((j) => [j.data.chatId, j.data.workspaceId]).sort()).toEqual(
      [
        [a, ws[0].wid],
        [b, ws[1].wid],
      ].sort(),
    );
  });

  it('lets no client choose a message id, and keeps ids unique under concurrent sends', async () => {
    const chatId = await webChat(0);
    const taken = await say(0, chatId, 'an existing message');
    const forged = [taken.id, 2_000_000_000];
    for (const messageId of forged) {
      for (const [path, body] of [
        [`/chats/${chatId}/send-assistant-message`, { message: 'hi', messageId, id: messageId }],
        [`/chats/${chatId}/messages`, { content: 'hi', messageId, id: messageId }],
      ] as const) {
        const res = await post(0, path, body);
        // Refused as an unknown field, or accepted with an id of the service's own.
        if (res.status === 201) expect(res.body.id).not.toBe(messageId);
        else expect(res.status).toBe(400);
      }
    }
    // Replies into one chat beside member messages into others, all at once.
    const others = await Promise.all(Array.from({ length: 8 }, () => webChat(0)));
    const sends = await Promise.all([
      ...Array.from({ length: 16 }, (_, n) =>
        post(0, `/chats/${chatId}/send-assistant-message`, { message: `reply ${n}` }),
      ),
      ...others.map((other, n) => post(0, `/chats/${other}/messages`, { content: `user ${n}` })),
    ]);
    expect(sends.map((r) => r.status)).toEqual(sends.map(() => 201));
    const ids = sends.map((r) => r.body.id as number);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).not.toContain(taken.id);
    const listed = await t.request('GET', `/w/${ws[0].wid}/chats/${chatId}/messages?pageSize=100`, {
      token: ws[0].key,
    });
    expect(listed.status).toBe(200);
    const all = (listed.body.items as { id: number }[]).map((m) => m.id);
    expect(new Set(all).size).toBe(all.length);
    expect(all).not.toContain(2_000_000_000);
  });
});
