import { useReadModelDatabase } from '../../../../test/support/database';
import { ENTITIES } from '../../../app.entities';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { meta } from '../../../core/event-store/testing/event-store.test-helpers';
import { SummarySourcesProjection } from './summary-sources.projection';

const ws = '6f0c1f9e-3c1a-4b8e-9d57-2f1f2b0b7a11';
let seq = 0;
const stored = (type: string, data: unknown, stream: string): StoredEvent => ({
  id: `0190a6c4-0000-7000-8000-${String(++seq).padStart(12, '0')}`,
  type,
  data,
  metadata: meta(),
  streamName: stream,
  revision: 0n,
  position: { commit: 1n, prepare: BigInt(seq) },
});
const at = (minute: number) => `2026-11-23T10:${String(minute).padStart(2, '0')}:00.000Z`;

const chatCreated = (chatId: number, workflowId: number | null) =>
  stored(
    'ChatCreated',
    {
      chatId,
      uuid: `00000000-0000-4000-8000-${String(chatId).padStart(12, '0')}`,
      workspaceId: ws,
      channel: 'phone-sms',
      memberId: 7,
      phoneNumberId: 1,
      assistantKind: 'ai',
      assistantMemberId: null,
      participants: [{ memberId: 7, role: 'user' }],
      title: null,
      workflowId,
      assignmentId: null,
      createdAt: at(0),
    },
    `chat-${chatId}`,
  );
const received = (chatId: number, messageId: number, minute: number) =>
  stored(
    'MessageReceived',
    { chatId, workspaceId: ws, messageId, memberId: 7, content: 'hi', source: 'sms', receivedAt: at(minute) },
    `chat-${chatId}`,
  );
const sent = (chatId: number, messageId: number, minute: number) =>
  stored(
    'MessageSent',
    { chatId, workspaceId: ws, messageId, channel: 'phone-sms', role: 'assistant', sentAt: at(minute) },
    `chat-${chatId}`,
  );
const assigned = (chatId: number, assignmentId: number, workflowId: number) =>
  stored(
    'ChatUpdated',
    { chatId, workspaceId: ws, changes: { assignmentId, workflowId }, updatedAt: at(30) },
    `chat-${chatId}`,
  );

/**
 * Two new chats and their messages, interleaved as a busy store delivers them (each chat's
 * own events in its order; message ids and times not increasing across chats), with an
 * assignment and a chat created before the batch (`earlier`).
 */
function traffic(a: number, b: number, earlier: number, offset: number): StoredEvent[] {
  return [
    chatCreated(a, null),
    received(a, offset + 5, 3),
    chatCreated(b, 40),
    received(earlier, offset + 1, 9),
    received(b, offset + 4, 2),
    sent(a, offset + 6, 4),
    assigned(a, 91, 41),
    sent(b, offset + 2, 1),
    received(a, offset + 9, 8),
    sent(earlier, offset + 3, 7),
    received(b, offset + 7, 6),
  ];
}

describe('SummarySourcesProjection: a batch', () => {
  const scratch = useReadModelDatabase(ENTITIES);
  const projection = new SummarySourcesProjection();

  const rows = async (ids: number[]) =>
    (
      (await scratch.ds.query(
        `SELECT workflow_id, assignment_id, inbound_count, outbound_count, first_message_at, last_message_at,
                last_message_id FROM summary_chats WHERE chat_id = ANY($1::int[]) ORDER BY chat_id`,
        [ids],
      )) as Record<string, unknown>[]
    ).map((r) => ({
      ...r,
      last_message_id: r.last_message_id === null ? null : Number(r.last_message_id) % 100,
    }));

  it('ends each chat as the events one by one do, in three statements besides the assignment', async () => {
    await scratch.ds.transaction(async (em) => {
      await projection.handle(chatCreated(1, null), em);
      await projection.handle(received(1, 100, 10), em);
      await projection.handle(chatCreated(11, null), em);
      await projection.handle(received(11, 200, 10), em);
    });
    await scratch.ds.transaction(async (em) => {
      for (const e of traffic(2, 3, 1, 100)) await projection.handle(e, em);
    });
    const statements: string[] = [];
    await scratch.ds.transaction(async (em) => {
      const query = em.query.bind(em);
      em.query = ((sql: string, params?: unknown[]) => {
        statements.push(sql.trim().split(/\s+/).slice(0, 2).join(' '));
        return query(sql, params);
      }) as typeof em.query;
      await projection.handleBatch(traffic(12, 13, 11, 200), em);
    });

    const oneByOne = await rows([1, 2, 3]);
    expect(await rows([11, 12, 13])).toEqual(oneByOne);
    expect(oneByOne).toEqual([
      {
        workflow_id: null,
        assignment_id: null,
        inbound_count: 2,
        outbound_count: 1,
        first_message_at: new Date(at(7)),
        last_message_at: new Date(at(10)),
        last_message_id: 3,
      },
      {
        workflow_id: 41,
        assignment_id: 91,
        inbound_count: 2,
        outbound_count: 1,
        first_message_at: new Date(at(3)),
        last_message_at: new Date(at(8)),
        last_message_id: 9,
      },
      {
        workflow_id: 40,
        assignment_id: null,
        inbound_count: 2,
        outbound_count: 1,
        first_message_at: new Date(at(1)),
        last_message_at: new Date(at(6)),
        last_message_id: 7,
      },
    ]);
    expect(statements).toEqual(['INSERT INTO', 'UPDATE summary_chats', 'UPDATE summary_chats']);
  });

  it('keeps the newest message event, and the last message the newest summary covered', async () => {
    const row = async () =>
      (
        (await scratch.ds.query(
          `SELECT last_message_id, covered_message_id, last_event FROM summary_chats WHERE chat_id = 21`,
        )) as Record<string, unknown>[]
      )[0];
    const eventOf = (e: StoredEvent) => ({
      id: e.id,
      type: e.type,
      correlationId: e.metadata.correlationId,
      commit: e.position.commit.toString(),
      prepare: e.position.prepare.toString(),
    });
    const summarized = (type: string, lastMessageId: number | null) =>
      stored(type, { chatId: 21, workspaceId: ws, lastMessageId }, 'summary-chat-21');
    const first = [chatCreated(21, null), received(21, 301, 1), sent(21, 303, 3), received(21, 302, 2)];
    await scratch.ds.transaction((em) => projection.handleBatch(first, em));
    // The highest message id, and the event last in the store's order.
    expect(await row()).toEqual({
      last_message_id: 303,
      covered_message_id: null,
      last_event: eventOf(first[3]),
    });

    const second = [summarized('ChatSummarized', 303), received(21, 304, 4)];
    await scratch.ds.transaction((em) => projection.handleBatch(second, em));
    expect(await row()).toEqual({
      last_message_id: 304,
      covered_message_id: 303,
      last_event: eventOf(second[1]),
    });

    // One by one alike; a summary without a last message leaves the one before.
    await scratch.ds.transaction(async (em) => {
      await projection.handle(summarized('CallSummarized', 304), em);
      await projection.handle(summarized('ChatSummarized', null), em);
    });
    expect(await row()).toMatchObject({ last_message_id: 304, covered_message_id: 304 });
  });
});
