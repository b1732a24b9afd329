import { useReadModelDatabase } from '../../../../test/support/database';
import { ENTITIES } from '../../../app.entities';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { meta } from '../../../core/event-store/testing/event-store.test-helpers';
import { ChatsProjection } from './chats.projection';

const ws = '6f0c1f9e-3c1a-4b8e-9d57-2f1f2b0b7a11';
let seq = 0;

/**
 * The events of two chats, with ids shifted by `o` (chats o+1 and o+2, messages o+10..):
 * `before` sets them up, `batch` is the run under test. The batch mixes what a batch of a
 * busy service holds: dispatches, outcomes and status callbacks of messages sent before it
 * and in it, an outcome after another (which changes nothing), a dispatch after an outcome,
 * an outcome for a recipient the message has not, a message without recipients, a
 * keyword reply (role system) and a message received in between.
 */
function scenario(o: number): { before: StoredEvent[]; batch: StoredEvent[] } {
  const revisions = new Map<number, number>();
  const at = (minute: number) => `2026-11-23T10:${String(minute).padStart(2, '0')}:00.000Z`;
  const ev = (type: string, chat: number, data: Record<string, unknown>): StoredEvent => {
    const revision = revisions.get(chat) ?? 0;
    revisions.set(chat, revision + 1);
    return {
      id: `0190a6c4-0000-7000-8000-${String(++seq).padStart(12, '0')}`,
      type,
      data: { chatId: o + chat, workspaceId: ws, ...data },
      metadata: meta(),
      streamName: `chat-${o + chat}`,
      revision: BigInt(revision),
      position: { commit: 1n, prepare: BigInt(seq) },
    };
  };
  const created = (chat: number) =>
    ev('ChatCreated', chat, {
      uuid: `0190a6c4-0000-7000-9000-${String(o + chat).padStart(12, '0')}`,
      channel: 'phone-sms',
      memberId: 1,
      phoneNumberId: 7,
      assistantKind: 'ai',
      assistantMemberId: null,
      participants: [{ memberId: 1, role: 'user' }],
      title: null,
      createdAt: at(0),
    });
  const sent = (
    chat: number,
    message: number,
    recipients: number[],
    minute: number,
    extra: Record<string, unknown> = {},
  ) =>
    ev('MessageSent', chat, {
      messageId: o + message,
      channel: 'phone-sms',
      role: 'assistant',
      content: `Message ${message}`,
      senderMemberId: null,
      recipientMemberIds: recipients,
      encoding: 'GSM-7',
      segments: 1,
      keywordReply: false,
      sentAt: at(minute),
      ...extra,
    });
  const dispatched = (chat: number, message: number, member: number, sid: string, minute: number) =>
    ev('MessageDispatched', chat, {
      messageId: o + message,
      recipientMemberId: member,
      providerMessageId: sid,
      dispatchedAt: at(minute),
    });
  const delivered = (chat: number, message: number, member: number, sid: string | null, minute: number) =>
    ev('MessageDelivered', chat, {
      messageId: o + message,
      recipientMemberId: member,
      providerMessageId: sid,
      deliveredAt: at(minute),
    });
  const failed = (
    chat: number,
    message: number,
    member: number,
    sid: string | null,
    reason: string,
    minute: number,
  ) =>
    ev('MessageFailed', chat, {
      messageId: o + message,
      recipientMemberId: member,
      providerMessageId: sid,
      reason,
      failedAt: at(minute),
    });
  const received = (chat: number, message: number, minute: number) =>
    ev('MessageReceived', chat, {
      messageId: o + message,
      memberId: 1,
      content: 'Hello',
      source: 'sms',
      providerMessageId: `SMin${message}`,
      receivedAt: at(minute),
    });

  const before = [
    created(1),
    created(2),
    sent(1, 10, [1], 1),
    delivered(1, 10, 1, 'SM10', 2),
    sent(1, 11, [1, 2], 3),
    received(2, 12, 3),
  ];
  const batch = [
    dispatched(1, 11, 1, 'SM11a', 4),
    sent(1, 13, [2, 1], 5, { scheduledFor: { '2': at(30) } }),
    dispatched(1, 13, 2, 'SM13b', 6),
    delivered(1, 11, 1, null, 7),
    failed(1, 13, 1, null, 'no_consent', 8),
    delivered(1, 13, 1, 'SM13x', 9),
    dispatched(1, 13, 1, 'SM13a', 10),
    delivered(1, 10, 1, 'SM10late', 11),
    dispatched(1, 11, 2, 'SM11b', 12),
    failed(1, 11, 2, 'SM11b2', 'provider_error:30003', 13),
    sent(2, 14, [1], 14, { role: 'system', keywordReply: true }),
    received(2, 15, 15),
    sent(2, 16, [1], 16),
    delivered(2, 16, 1, 'SM16', 17),
    delivered(2, 16, 9, 'SM16x', 18),
    sent(2, 17, [], 19),
    failed(2, 17, 1, null, 'no_address', 20),
    delivered(1, 13, 2, 'SM13b', 21),
  ];
  return { before, batch };
}

/**
 * The batch path folds runs of message events (MessageRun) into two statements at most:
 * the tables must end exactly as when each event is applied on its own, in order.
 */
describe('ChatsProjection: message events in one batch', () => {
  const scratch = useReadModelDatabase(ENTITIES);
  const projection = new ChatsProjection();

  /** The rows of chats o+1, o+2 and their messages, with the offset taken out of the ids. */
  const tables = async (o: number) => ({
    chats: (await scratch.ds.query(
      `SELECT id - $1 AS id, needs_response, updated_at, version, stream_revision::text AS rev
         FROM chats WHERE id IN ($1 + 1, $1 + 2) ORDER BY id`,
      [o],
    )) as unknown[],
    messages: (await scratch.ds.query(
      `SELECT id - $1 AS id, chat_id - $1 AS chat_id, direction, role, content, sender_member_id, encoding, segments,
              status, failure_reason, provider_message_id, created_at, delivered_at, scheduled_for
         FROM chat_messages WHERE chat_id IN ($1 + 1, $1 + 2) ORDER BY id`,
      [o],
    )) as unknown[],
    deliveries: (await scratch.ds.query(
      `SELECT message_id - $1 AS message_id, member_id, chat_id - $1 AS chat_id, status, failure_reason,
              provider_message_id, updated_at, delivered_at, scheduled_for
         FROM message_deliveries WHERE chat_id IN ($1 + 1, $1 + 2) ORDER BY message_id, member_id`,
      [o],
    )) as unknown[],
  });

  it('ends every chat, message and delivery as the events one by one do, in a few statements', async () => {
    const one = scenario(0);
    const batched = scenario(100);
    await scratch.ds.transaction(async (em) => {
      for (const e of [...one.before, ...one.batch, ...batched.before]) await projection.handle(e, em);
    });
    const statements: string[] = [];
    await scratch.ds.transaction(async (em) => {
      const query = em.query.bind(em);
      em.query = ((sql: string, params?: unknown[]) => {
        statements.push(sql);
        return query(sql, params);
      }) as typeof em.query;
      await projection.handleBatch(batched.batch, em);
    });

    const expected = await tables(0);
    expect(await tables(100)).toEqual(expected);
    // What the events one by one leave, so the comparison is not between two empty tables.
    expect(expected.chats).toMatchObject([
      { id: 1, version: 4, rev: '14' },
      { id: 2, needs_response: false, version: 6, rev: '8' },
    ]);
    expect(expected.messages).toMatchObject([
      { id: 10, status: 'delivered', provider_message_id: 'SM10' },
      { id: 11, status: 'delivered', provider_message_id: 'SM11a' },
      { id: 12, direction: 'inbound' },
      { id: 13, status: 'delivered', failure_reason: null, provider_message_id: 'SM13a' },
      { id: 14, role: 'system', status: 'sent' },
      { id: 15, direction: 'inbound' },
      { id: 16, status: 'delivered', provider_message_id: 'SM16' },
      { id: 17, status: 'failed', failure_reason: null },
    ]);
    expect(expected.deliveries).toMatchObject([
      { message_id: 10, status: 'delivered', provider_message_id: 'SM10' },
      { message_id: 11, member_id: 1, status: 'delivered', provider_message_id: 'SM11a' },
      { message_id: 11, member_id: 2, status: 'failed', provider_message_id: 'SM11b2' },
      {
        message_id: 13,
        member_id: 1,
        status: 'failed',
        failure_reason: 'no_consent',
        provider_message_id: 'SM13a',
      },
      { message_id: 13, member_id: 2, status: 'delivered', provider_message_id: 'SM13b' },
      { message_id: 14, member_id: 1, status: 'sent' },
      { message_id: 16, member_id: 1, status: 'delivered' },
    ]);
    // 18 events, one by one 27 statements: three runs of two (the first ends before the
    // dispatch after its message's outcome, the second at the message received, which
    // takes its own one).
    expect(statements).toHaveLength(7);
  });
});

/**
 * An inbound text or mail from a member without a chat appends ChatCreated and its first
 * MessageReceived together: the batch path writes both rows in one statement, and a
 * message received in an existing chat takes one statement too.
 */
describe('ChatsProjection: a chat created with its first message', () => {
  const scratch = useReadModelDatabase(ENTITIES);
  const projection = new ChatsProjection();

  function events(o: number, burst = false): StoredEvent[] {
    const revisions = new Map<number, number>();
    const ev = (type: string, chat: number, data: Record<string, unknown>): StoredEvent => {
      const revision = revisions.get(chat) ?? 0;
      revisions.set(chat, revision + 1);
      return {
        id: `0190a6c4-0000-7000-8000-${String(++seq).padStart(12, '0')}`,
        type,
        data: { chatId: o + chat, workspaceId: ws, ...data },
        metadata: meta(),
        streamName: `chat-${o + chat}`,
        revision: BigInt(revision),
        position: { commit: 1n, prepare: BigInt(seq) },
      };
    };
    const created = (chat: number, assistantKind: string) =>
      ev('ChatCreated', chat, {
        uuid: `0190a6c4-0000-7000-9000-${String(o + chat).padStart(12, '0')}`,
        channel: chat === 2 ? 'email' : 'phone-sms',
        memberId: 1,
        phoneNumberId: chat === 2 ? null : 7,
        assistantKind,
        assistantMemberId: assistantKind === 'human' ? 1 : null,
        participants: [{ memberId: 1, role: 'user' }],
        title: null,
        createdAt: '2026-11-23T10:00:00.000Z',
      });
    const received = (chat: number, message: number, minute: number) =>
      ev('MessageReceived', chat, {
        messageId: o + message,
        memberId: 1,
        content: `Hello ${message}`,
        source: chat === 2 ? 'email' : 'sms',
        providerMessageId: `SMin${message}`,
        subject: chat === 2 ? 'Hi' : undefined,
        receivedAt: `2026-11-23T10:0${minute}:00.000Z`,
      });
    // A burst of texts from new members: each chat created with its first message, one after the other.
    if (burst)
      return [
        created(1, 'ai'),
        received(1, 10, 1),
        created(2, 'human'),
        received(2, 12, 3),
        created(3, 'ai'),
        received(3, 13, 4),
      ];
    return [
      created(1, 'ai'),
      received(1, 10, 1),
      received(1, 11, 2),
      created(2, 'human'),
      received(2, 12, 3),
      created(3, 'ai'),
    ];
  }

  const tables = async (o: number) => ({
    chats: (await scratch.ds.query(
      `SELECT id - $1 AS id, channel, assistant_kind, needs_response, created_at, updated_at, version,
              stream_revision::text AS rev, member_id, phone_number_id, assistant_member_id, participants,
              participant_ids, title, paused, workflow_id, assignment_id
         FROM chats WHERE id BETWEEN $1 + 1 AND $1 + 3 ORDER BY id`,
      [o],
    )) as unknown[],
    messages: (await scratch.ds.query(
      `SELECT id - $1 AS id, chat_id - $1 AS chat_id, direction, role, content, subject, sender_member_id, status,
              provider_message_id, created_at, delivered_at
         FROM chat_messages WHERE chat_id BETWEEN $1 + 1 AND $1 + 3 ORDER BY id`,
      [o],
    )) as unknown[],
  });

  /** Applies the batch, returning its statements. */
  const batch = async (batched: StoredEvent[]): Promise<string[]> => {
    const statements: string[] = [];
    await scratch.ds.transaction(async (em) => {
      const query = em.query.bind(em);
      em.query = ((sql: string, params?: unknown[]) => {
        statements.push(sql);
        return query(sql, params);
      }) as typeof em.query;
      await projection.handleBatch(batched, em);
    });
    return statements;
  };

  it('ends as the events one by one do, the chat and its first message in one statement', async () => {
    const one = events(200);
    await scratch.ds.transaction(async (em) => {
      for (const e of one) await projection.handle(e, em);
    });
    const statements = await batch(events(300));

    const expected = await tables(200);
    expect(await tables(300)).toEqual(expected);
    expect(expected.chats).toMatchObject([
      { id: 1, needs_response: true, version: 3, rev: '2' },
      { id: 2, channel: 'email', needs_response: false, version: 2, rev: '1' },
      { id: 3, needs_response: false, version: 1, rev: '0' },
    ]);
    expect(expected.messages).toMatchObject([
      { id: 10, chat_id: 1, direction: 'inbound', content: 'Hello 10', status: 'delivered' },
      { id: 11, chat_id: 1 },
      { id: 12, chat_id: 2, subject: 'Hi' },
    ]);
    // One by one 6: chat 1 and its first message, the second message, chat 2 with its
    // message, chat 3 alone.
    expect(statements).toHaveLength(4);
  });

  it('writes chats created one after the other with their first messages in one statement', async () => {
    await scratch.ds.transaction(async (em) => {
      for (const e of events(600, true)) await projection.handle(e, em);
    });
    const statements = await batch(events(700, true));

    const expected = await tables(600);
    expect(await tables(700)).toEqual(expected);
    expect(expected.chats).toMatchObject([
      { id: 1, needs_response: true, version: 2, rev: '1' },
      { id: 2, channel: 'email', needs_response: false, version: 2, rev: '1' },
      { id: 3, needs_response: true, version: 2, rev: '1' },
    ]);
    expect(expected.messages).toMatchObject([
      { id: 10, chat_id: 1, content: 'Hello 10' },
      { id: 12, chat_id: 2, subject: 'Hi' },
      { id: 13, chat_id: 3, content: 'Hello 13', status: 'delivered' },
    ]);
    expect(statements).toHaveLength(1);
    // Replayed over the rows: as one by one.
    await scratch.ds.transaction(async (em) => {
      for (const e of events(600, true)) await projection.handle(e, em);
    });
    await batch(events(700, true));
    expect(await tables(700)).toEqual(await tables(600));
  });

  it('applies a replayed chat and first message over the rows as one by one', async () => {
    const one = events(400);
    const replayed = events(500);
    await scratch.ds.transaction(async (em) => {
      for (const e of [...one, ...one]) await projection.handle(e, em);
      for (const e of replayed) await projection.handle(e, em);
    });
    await batch(replayed);
    expect(await tables(500)).toEqual(await tables(400));
    expect((await tables(400)).chats).toMatchObject([
      { id: 1, version: 5 },
      { id: 2, version: 3 },
      { id: 3 },
    ]);
  });
});
