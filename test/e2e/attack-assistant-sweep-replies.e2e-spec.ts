import { getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import type { StoredEvent } from '../../src/core/event-store/event-store.port';
import { ASSISTANT_QUEUE } from '../../src/modules/assistant/workers/reply-job';
import { startTestApp, TestApp } from '../support/app';
import { signup } from '../support/identity-fixtures';
import { lastUserText, OpenAiPeer, PeerAnswer, startOpenAiPeer } from '../support/openai-peer';
import { eventually } from '../support/processes';

const DEBOUNCE_MS = 200;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A careless queue against the reply job now that its AssistantReplied is appended after
 * its slot and its message id is taken while the model answers: the same job run again
 * (after completion, or twice at once for one burst) sends one reply, recorded once with
 * the id of the message sent; a chat a person answered mid-job gets no second answer.
 */
describe('attack: reply jobs run again, AssistantReplied after the slot (e2e)', () => {
  let model: OpenAiPeer;
  let t: TestApp;
  let wid: string;
  let key: string;
  let queue: Queue;
  const held = new Map<string, Promise<void>>();

  beforeAll(async () => {
    model = await startOpenAiPeer();
    model.script = async (request): Promise<PeerAnswer> => {
      const text = lastUserText(request);
      await held.get(text);
      return { content: `echo: ${text}` };
    };
    t = await startTestApp({
      env: {
        ASSISTANT_PROVIDER: 'openai',
        OPENAI_BASE_URL: model.url,
        OPENAI_API_KEY: 'sk-test-key',
        ASSISTANT_MODEL: 'test-model',
        ASSISTANT_DEBOUNCE_MS: String(DEBOUNCE_MS),
        ASSISTANT_ATTEMPTS: '2',
        ASSISTANT_BACKOFF_MS: '100',
      },
    });
    ({ workspaceId: wid, apiKey: key } = await t.bootstrap('Replay Clinic'));
    queue = t.app.get<Queue>(getQueueToken(ASSISTANT_QUEUE), { strict: false });
  });
  afterAll(async () => {
    await t.close();
    await model.close();
  });

  const post = (path: string, body: unknown) => t.request('POST', `/w/${wid}${path}`, { token: key, body });
  let n = 0;
  async function chat(): Promise<{ chatId: number; memberId: number }> {
    const m = await signup(t, wid, key, {
      name: 'Ada Lovelace',
      email: `ada-${++n}-${process.pid}@example.com`,
    });
    const c = await post('/chats', { channel: 'web-chat', memberId: m.member.id });
    expect(c.status).toBe(201);
    return { chatId: c.body.id, memberId: m.member.id };
  }
  const assistantEvents = (chatId: number): Promise<StoredEvent[]> =>
    t.store.readStream(`assistant-chat-${chatId}`);
  const sentByAssistant = async (chatId: number) =>
    (await t.store.readStream(`chat-${chatId}`)).filter(
      (e) => e.type === 'MessageSent' && (e.data as { role: string }).role === 'assistant',
    );
  const replyJob = (chatId: number, replyTo: number, label: string) => ({
    workspaceId: wid,
    chatId,
    replyTo,
    correlationId: `test-${label}`,
    causationId: `test-${label}`,
  });

  it('sends one reply when the same job runs again after completion, recorded once with its id', async () => {
    const { chatId } = await chat();
    const said = await post(`/chats/${chatId}/messages`, { content: 'Once only please' });
    expect(said.status).toBe(201);
    const replied = await eventually(
      async () => (await assistantEvents(chatId)).find((e) => e.type === 'AssistantReplied'),
      'AssistantReplied',
    );
    const [sent] = await sentByAssistant(chatId);
    expect((replied.data as { messageId: number }).messageId).toBe(
      (sent.data as { messageId: number }).messageId,
    );
    // The same job again, three times at once, as a retry or a replayed trigger would add it.
    await Promise.all(
      [1, 2, 3].map((k) =>
        queue.add('reply', replyJob(chatId, said.body.id, 'again'), { jobId: `again-${chatId}-${k}` }),
      ),
    );
    await eventually(async () => {
      const jobs = await Promise.all([1, 2, 3].map((k) => queue.getJob(`again-${chatId}-${k}`)));
      return (await Promise.all(jobs.map((j) => j?.isCompleted()))).every(Boolean) || undefined;
    }, 'the re-runs');
    await sleep(300);
    expect(await sentByAssistant(chatId)).toHaveLength(1);
    expect((await assistantEvents(chatId)).filter((e) => e.type === 'AssistantReplied')).toHaveLength(1);
    expect(model.requests.filter((r) => lastUserText(r) === 'Once only please')).toHaveLength(1);
    const listed = await t.request('GET', `/w/${wid}/chats/${chatId}/messages`, { token: key });
    expect(listed.body.items.filter((m: { role: string }) => m.role === 'assistant')).toHaveLength(1);
  });

  it('sends one reply when two jobs of one burst answer at once', async () => {
    const { chatId } = await chat();
    let release!: () => void;
    held.set('Both at once', new Promise<void>((r) => (release = r)));
    const said = await post(`/chats/${chatId}/messages`, { content: 'Both at once' });
    expect(said.status).toBe(201);
    await Promise.all(
      [1, 2].map((k) =>
        queue.add('reply', replyJob(chatId, said.body.id, 'twin'), { jobId: `twin-${chatId}-${k}` }),
      ),
    );
    await eventually(
      async () => model.requests.filter((r) => lastUserText(r) === 'Both at once').length >= 2 || undefined,
      'two model calls in flight',
    );
    release();
    await eventually(
      async () => (await assistantEvents(chatId)).find((e) => e.type === 'AssistantReplied'),
      'AssistantReplied',
    );
    await sleep(DEBOUNCE_MS + 1000);
    const sent = await sentByAssistant(chatId);
    expect(sent).toHaveLength(1);
    const replied = (await assistantEvents(chatId)).filter((e) => e.type === 'AssistantReplied');
    expect(replied.map((e) => (e.data as { messageId: number }).messageId)).toEqual([
      (sent[0].data as { messageId: number }).messageId,
    ]);
  });

  it('sends nothing when a person answers while the model is still thinking', async () => {
    const { chatId } = await chat();
    let release!: () => void;
    held.set('Anyone there?', new Promise<void>((r) => (release = r)));
    await post(`/chats/${chatId}/messages`, { content: 'Anyone there?' });
    await eventually(
      async () => model.requests.some((r) => lastUserText(r) === 'Anyone there?') || undefined,
      'the model call',
    );
    const answered = await post(`/chats/${chatId}/send-assistant-message`, { message: 'Yes, a nurse here.' });
    release();
    expect(answered.status).toBe(201);
    await sleep(DEBOUNCE_MS + 1200);
    const sent = await sentByAssistant(chatId);
    expect(sent.map((e) => (e.data as { content: string }).content)).toEqual(['Yes, a nurse here.']);
    expect((await assistantEvents(chatId)).filter((e) => e.type === 'AssistantReplied')).toEqual([]);
  });
});
