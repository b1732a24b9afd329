import { Queue } from 'bullmq';
import { useReadModelDatabase } from '../../../../test/support/database';
import { clearRedisPrefix, TEST_REDIS_URL, testRedisPrefix } from '../../../../test/support/redis';
import { ENTITIES } from '../../../app.entities';
import type { AppConfig } from '../../../core/config/config';
import { JsonLogger } from '../../../core/logging/json-logger';
import { bullConnection } from '../../../core/redis/redis';
import { IdleSummarySweep, sweepIntervalMs } from './idle-summary-sweep';
import { SummaryJob } from './summary-job';

const ws = '6f0c1f9e-3c1a-4b8e-9d57-2f1f2b0b7a11';
const MINUTE = 60_000;

describe('IdleSummarySweep', () => {
  const scratch = useReadModelDatabase(ENTITIES);
  const prefix = testRedisPrefix();
  let queue: Queue<SummaryJob>;

  beforeAll(() => {
    queue = new Queue<SummaryJob>('summaries', { connection: bullConnection(TEST_REDIS_URL), prefix });
  });
  afterAll(async () => {
    await queue.close();
    await clearRedisPrefix(prefix);
  });

  /** A chat with its last message `ago` ms before `now`, covered or not. */
  const chat = (chatId: number, now: number, ago: number, covered: boolean) =>
    scratch.ds.query(
      `INSERT INTO summary_chats (chat_id, workspace_id, inbound_count, outbound_count, first_message_at,
         last_message_at, last_message_id, covered_message_id, last_event)
       VALUES ($1, $2, 1, 0, $3, $3, $4, $5, $6)`,
      [
        chatId,
        ws,
        new Date(now - ago),
        chatId * 10,
        covered ? chatId * 10 : null,
        JSON.stringify({
          id: `event-${chatId}`,
          type: 'MessageReceived',
          correlationId: `req-${chatId}`,
          commit: '7',
          prepare: String(chatId),
        }),
      ],
    );

  it('adds one idle job per chat quiet for the period and not yet covered, caused by its last message', async () => {
    const now = Date.now();
    const config = { chatSummaryIdleMinutes: 30, role: 'all' } as AppConfig;
    const sweep = new IdleSummarySweep(scratch.ds, queue, config, new JsonLogger('silent'));
    await chat(1, now, 31 * MINUTE, false); // due
    await chat(2, now, 29 * MINUTE, false); // not quiet long enough
    await chat(3, now, 40 * MINUTE, true); // covered by a summary
    await chat(4, now, 8 * 24 * 60 * MINUTE, false); // older than the sweep looks
    await chat(5, now, 30 * MINUTE, false); // due, just
    expect(await sweep.sweep(now)).toBe(2);
    const jobs = (await queue.getWaiting()).sort((a, b) => a.data.chatId! - b.data.chatId!);
    expect(jobs.map((j) => [j.id, j.name, j.data])).toEqual([
      [
        'idle-chat-1-message-10',
        'idle',
        {
          workspaceId: ws,
          trigger: 'idle',
          chatId: 1,
          messageId: 10,
          triggerEvent: { id: 'event-1', type: 'MessageReceived', commit: '7', prepare: '1' },
          correlationId: 'req-1',
        },
      ],
      ['idle-chat-5-message-50', 'idle', expect.objectContaining({ chatId: 5, messageId: 50 })],
    ]);
    // Found again before its summary is projected: the same job ids, nothing added.
    expect(await sweep.sweep(now + 1000)).toBe(2);
    expect(await queue.getWaitingCount()).toBe(2);
  });

  it('pages through more due chats than one query holds, ties on the time included', async () => {
    await scratch.ds.query(`DELETE FROM summary_chats`);
    await queue.obliterate({ force: true });
    const now = Date.now();
    const config = { chatSummaryIdleMinutes: 30, role: 'all' } as AppConfig;
    const sweep = new IdleSummarySweep(scratch.ds, queue, config, new JsonLogger('silent'));
    // 1,200 chats whose last messages share three times.
    await scratch.ds.query(
      `INSERT INTO summary_chats (chat_id, workspace_id, inbound_count, outbound_count, last_message_at,
         last_message_id, last_event)
       SELECT i, $1, 1, 0, $2::timestamptz - (i % 3) * interval '1 minute', i * 10,
              jsonb_build_object('id', 'e' || i, 'type', 'MessageSent', 'correlationId', 'r', 'commit', '1', 'prepare', '1')
         FROM generate_series(1000, 2199) i`,
      [ws, new Date(now - 31 * MINUTE)],
    );
    expect(await sweep.sweep(now)).toBe(1200);
    const ids = new Set((await queue.getWaiting(0, -1)).map((j) => j.data.chatId));
    expect(ids.size).toBe(1200);
  });

  it('looks a tenth of the quiet period apart, between 0.2 s and 30 s', () => {
    expect(sweepIntervalMs(30 * MINUTE)).toBe(30_000);
    expect(sweepIntervalMs(2 * MINUTE)).toBe(12_000);
    expect(sweepIntervalMs(1800)).toBe(200);
  });
});
