import { NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { deciderSpec } from '../../../core/testing/decider-spec';
import { CHAT_CACHE_MAX_ENTRIES, chatDecider, MESSAGE_MAX, MessageTooLongError } from './chat';
import type {
  ChatCreated,
  MessageDelivered,
  MessageDispatched,
  MessageFailed,
  MessageSent,
} from './chat.events';

const now = '2026-11-23T10:00:00.000Z';
const ws = '0b8f7c1e-3f4a-4c55-9e2a-7d1c2b3a4f5e';
const spec = deciderSpec(chatDecider);

const chat: ChatCreated['data'] = {
  chatId: 7,
  uuid: '8a9b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d',
  workspaceId: ws,
  channel: 'phone-sms',
  memberId: 5,
  phoneNumberId: 3,
  assistantKind: 'ai',
  assistantMemberId: null,
  participants: [
    { memberId: 5, role: 'user' },
    { memberId: 6, role: 'supervisor' },
  ],
  title: null,
  createdAt: now,
};
const created: ChatCreated = { type: 'ChatCreated', data: chat };
const sent: MessageSent = {
  type: 'MessageSent',
  data: {
    chatId: 7,
    workspaceId: ws,
    messageId: 40,
    channel: 'phone-sms',
    role: 'assistant',
    content: 'Hi',
    senderMemberId: null,
    recipientMemberIds: [5, 6],
    encoding: 'GSM-7',
    segments: 1,
    keywordReply: false,
    sentAt: now,
  },
};
const base = { chatId: 7, workspaceId: ws, messageId: 40, recipientMemberId: 5 };
const dispatched: MessageDispatched = {
  type: 'MessageDispatched',
  data: { ...base, providerMessageId: 'SM1', dispatchedAt: now },
};
const delivered: MessageDelivered = {
  type: 'MessageDelivered',
  data: { ...base, providerMessageId: 'SM1', deliveredAt: now },
};
const failed: MessageFailed = {
  type: 'MessageFailed',
  data: { ...base, providerMessageId: 'SM1', reason: 'provider_error:30003', failedAt: now },
};
const outcome = (o: 'delivered' | 'failed', reason?: string) =>
  ({
    type: 'RecordOutcome',
    messageId: 40,
    recipientMemberId: 5,
    outcome: o,
    reason,
    providerMessageId: 'SM1',
    now,
  }) as const;

describe('chat decider', () => {
  it('creates a chat once; SMS and voice chats need a number, human chats an operator', () => {
    const { createdAt: _, ...newChat } = chat;
    spec.given([]).when({ type: 'CreateChat', chat: newChat, now }).then([created]);
    spec
      .given([])
      .when({ type: 'CreateChat', chat: { ...newChat, phoneNumberId: null }, now })
      .thenThrows(ValidationError, /^phoneNumberId: required/);
    spec
      .given([])
      .when({ type: 'CreateChat', chat: { ...newChat, channel: 'web-chat', assistantKind: 'human' }, now })
      .thenThrows(ValidationError, /^assistantMemberId: required/);
  });

  it('sends to every participant but the sender, or only to those named (keyword replies)', () => {
    const message = { ...sent.data };
    const {
      chatId: _c,
      workspaceId: _w,
      channel: _ch,
      recipientMemberIds: _r,
      sentAt: _s,
      ...input
    } = message;
    spec.given([created]).when({ type: 'SendMessage', workspaceId: ws, message: input, now }).then([sent]);
    spec
      .given([created])
      .when({ type: 'SendMessage', workspaceId: ws, message: input, onlyTo: [5], now })
      .then([{ ...sent, data: { ...sent.data, recipientMemberIds: [5] } }]);
    spec
      .given([created])
      .when({ type: 'SendMessage', workspaceId: '11111111-2222-4333-8444-555555555555', message: input, now })
      .thenThrows(NotFoundError);
  });

  it('refuses a message over MESSAGE_MAX characters (code points) whoever sends it, naming the field', () => {
    const {
      chatId: _c,
      workspaceId: _w,
      channel: _ch,
      recipientMemberIds: _r,
      sentAt: _s,
      ...input
    } = sent.data;
    const send = (content: string) => ({
      type: 'SendMessage' as const,
      workspaceId: ws,
      message: { ...input, content },
      now,
    });
    spec
      .given([created])
      .when(send('x'.repeat(MESSAGE_MAX + 1)))
      .thenThrows(MessageTooLongError, /^message: must be shorter than or equal to 10000 characters$/);
    spec
      .given([created])
      .when(send('x'.repeat(MESSAGE_MAX)))
      .then([{ ...sent, data: { ...sent.data, content: 'x'.repeat(MESSAGE_MAX) } }]);
    // 10,000 emoji are 20,000 UTF-16 units but 10,000 characters, as OpenAPI's maxLength counts.
    spec
      .given([created])
      .when(send('😀'.repeat(MESSAGE_MAX)))
      .then([{ ...sent, data: { ...sent.data, content: '😀'.repeat(MESSAGE_MAX) } }]);
    spec
      .given([created])
      .when(send('😀'.repeat(MESSAGE_MAX) + 'x'))
      .thenThrows(MessageTooLongError);
  });

  it('records a provider id once: a retried job never dispatches again', () => {
    const record = {
      type: 'RecordDispatch',
      messageId: 40,
      recipientMemberId: 5,
      providerMessageId: 'SM1',
      now,
    } as const;
    spec.given([created, sent]).when(record).then([dispatched]);
    spec
      .given([created, sent, dispatched])
      .when({ ...record, providerMessageId: 'SM2' })
      .then([]);
    spec
      .given([created, sent])
      .when({ ...record, recipientMemberId: 99 })
      .thenThrows(NotFoundError);
  });

  it('records a provider id with an outcome that came meanwhile in one decision, and nothing on a recorded one', () => {
    const record = {
      type: 'RecordDispatch',
      messageId: 40,
      recipientMemberId: 5,
      providerMessageId: 'SM1',
      now,
      then: outcome('delivered'),
    } as const;
    spec.given([created, sent]).when(record).then([dispatched, delivered]);
    spec.given([created, sent, dispatched]).when(record).then([]);
  });

  it('moves a delivery forward only: sent → delivered | failed, never back or across', () => {
    spec.given([created, sent, dispatched]).when(outcome('delivered')).then([delivered]);
    spec.given([created, sent, dispatched]).when(outcome('failed', 'provider_error:30003')).then([failed]);
    spec.given([created, sent, dispatched, delivered]).when(outcome('failed', 'x')).then([]);
    spec.given([created, sent, dispatched, failed]).when(outcome('delivered')).then([]);
    spec.given([created, sent, dispatched, delivered]).when(outcome('delivered')).then([]);
  });

  it("lets only the recorded provider message's callback decide a delivery", () => {
    const other = { ...outcome('failed', 'provider_error:30005'), providerMessageId: 'SM2' };
    spec.given([created, sent, dispatched]).when(other).then([]);
    spec
      .given([created, sent, dispatched])
      .when({ ...outcome('delivered'), providerMessageId: 'SM2' })
      .then([]);
    // Before any id is recorded the callback's own id is taken (a callback ahead of the record).
    spec
      .given([created, sent])
      .when(other)
      .then([
        { ...failed, data: { ...failed.data, providerMessageId: 'SM2', reason: 'provider_error:30005' } },
      ]);
  });

  it('records an inbound message from a provider once', () => {
    const receive = {
      type: 'ReceiveMessage',
      workspaceId: ws,
      message: { messageId: 41, memberId: 5, content: 'STOP', source: 'sms', providerMessageId: 'SMin' },
      now,
    } as const;
    const received = {
      type: 'MessageReceived' as const,
      data: { ...receive.message, chatId: 7, workspaceId: ws, receivedAt: now },
    };
    spec.given([created]).when(receive).then([received]);
    spec
      .given([created, received])
      .when({ ...receive, message: { ...receive.message, messageId: 42 } })
      .then([]);
  });

  it('changes title and paused only when they differ', () => {
    const update = {
      type: 'UpdateChat',
      chatId: 7,
      workspaceId: ws,
      changes: { paused: true, title: null },
      now,
    } as const;
    spec
      .given([created])
      .when(update)
      .then([
        {
          type: 'ChatUpdated',
          data: { chatId: 7, workspaceId: ws, changes: { paused: true }, updatedAt: now },
        },
      ]);
    spec
      .given([
        created,
        {
          type: 'ChatUpdated',
          data: { chatId: 7, workspaceId: ws, changes: { paused: true }, updatedAt: now },
        },
      ])
      .when(update)
      .then([]);
  });
});

describe('chat decider: the assignment a chat runs', () => {
  const update = (assignment: { workspaceId: string; workflowId: number; memberId: number } | null) => ({
    type: 'UpdateChat' as const,
    chatId: 7,
    workspaceId: ws,
    changes: { assignmentId: 30 },
    assignment,
    now,
  });

  it("attaches an assignment of the chat's member, bringing its workflow", () => {
    spec
      .given([created])
      .when(update({ workspaceId: ws, workflowId: 4, memberId: 5 }))
      .then([
        {
          type: 'ChatUpdated',
          data: { chatId: 7, workspaceId: ws, changes: { assignmentId: 30, workflowId: 4 }, updatedAt: now },
        },
      ]);
  });

  it('changes nothing when the chat already runs that assignment', () => {
    spec
      .given([
        created,
        {
          type: 'ChatUpdated',
          data: { chatId: 7, workspaceId: ws, changes: { assignmentId: 30, workflowId: 4 }, updatedAt: now },
        },
      ])
      .when(update({ workspaceId: ws, workflowId: 4, memberId: 5 }))
      .then([]);
  });

  it("refuses an unknown, foreign or another member's assignment, naming assignmentId", () => {
    spec.given([created]).when(update(null)).thenThrows(ValidationError);
    spec
      .given([created])
      .when(update({ workspaceId: 'other', workflowId: 4, memberId: 5 }))
      .thenThrows(ValidationError);
    spec
      .given([created])
      .when(update({ workspaceId: ws, workflowId: 4, memberId: 6 }))
      .thenThrows(ValidationError);
  });
});

describe('chat decider: voice calls', () => {
  const voice: ChatCreated = { type: 'ChatCreated', data: { ...chat, channel: 'phone-voice' } };
  const status = (s: string, durationSeconds = 0) => ({
    type: 'RecordCallStatus' as const,
    workspaceId: ws,
    callSid: 'CA1',
    status: s,
    durationSeconds,
    now,
  });
  const startedEvent = {
    type: 'CallStarted' as const,
    data: { chatId: 7, workspaceId: ws, callSid: 'CA1', startedAt: now },
  };
  const completedEvent = {
    type: 'CallCompleted' as const,
    data: {
      chatId: 7,
      workspaceId: ws,
      callSid: 'CA1',
      durationSeconds: 30,
      outcome: 'completed' as const,
      completedAt: now,
    },
  };

  it('starts a call on in-progress once, ignores ringing', () => {
    spec.given([voice]).when(status('in-progress')).then([startedEvent]);
    spec.given([voice, startedEvent]).when(status('in-progress')).then([]);
    spec.given([voice]).when(status('ringing')).then([]);
    // Object.prototype's names are statuses like any unknown one: no end without an outcome.
    for (const name of ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__', 'isPrototypeOf'])
      spec.given([voice, startedEvent]).when(status(name)).then([]);
  });

  it('completes it once on a final status; a late start or second end changes nothing', () => {
    spec.given([voice, startedEvent]).when(status('completed', 30)).then([completedEvent]);
    spec.given([voice, startedEvent, completedEvent]).when(status('in-progress')).then([]);
    spec.given([voice, startedEvent, completedEvent]).when(status('busy')).then([]);
  });

  it("moves the chat's pending spoken messages with the call's end: delivered, or failed with its outcome", () => {
    const spoken: MessageSent = {
      type: 'MessageSent',
      data: { ...sent.data, channel: 'phone-voice', encoding: null, segments: null },
    };
    const base = { chatId: 7, workspaceId: ws, messageId: 40, providerMessageId: null };
    spec
      .given([voice, spoken, startedEvent])
      .when(status('completed', 30))
      .then([
        completedEvent,
        { type: 'MessageDelivered', data: { ...base, recipientMemberId: 5, deliveredAt: now } },
        { type: 'MessageDelivered', data: { ...base, recipientMemberId: 6, deliveredAt: now } },
      ]);
    const done = {
      type: 'MessageDelivered' as const,
      data: { ...base, recipientMemberId: 5, deliveredAt: now },
    };
    spec
      .given([voice, spoken, done])
      .when(status('no-answer'))
      .then([
        { ...completedEvent, data: { ...completedEvent.data, durationSeconds: 0, outcome: 'no-answer' } },
        {
          type: 'MessageFailed',
          data: { ...base, recipientMemberId: 6, reason: 'call_no-answer', failedAt: now },
        },
      ]);
  });

  it('refuses calls on a chat of another channel', () => {
    spec.given([created]).when(status('in-progress')).thenThrows(ValidationError);
  });

  it('stores an announced recording once', () => {
    const received = {
      type: 'CallRecordingReceived' as const,
      data: {
        chatId: 7,
        workspaceId: ws,
        callSid: 'CA1',
        recordingSid: 'RE1',
        recordingUrl: 'https://x/RE1',
        receivedAt: now,
      },
    };
    const store = {
      type: 'StoreCallRecording' as const,
      workspaceId: ws,
      recordingSid: 'RE1',
      key: 'k',
      bytes: 10,
      now,
    };
    const stored = {
      type: 'CallRecordingStored' as const,
      data: { chatId: 7, workspaceId: ws, recordingSid: 'RE1', key: 'k', bytes: 10, storedAt: now },
    };
    spec.given([voice]).when(store).then([]);
    spec.given([voice, received]).when(store).then([stored]);
    spec.given([voice, received, stored]).when(store).then([]);
    // A recording never announced, whatever its sid: Object.prototype's names announce nothing.
    for (const sid of ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__', 'isPrototypeOf'])
      spec
        .given([voice])
        .when({ ...store, recordingSid: sid })
        .then([]);
  });
});

describe('chat decider: the outbound call', () => {
  const voice: ChatCreated = {
    type: 'ChatCreated',
    data: { ...chat, channel: 'phone-voice', placeCall: true },
  };
  const place = {
    type: 'RecordCallPlaced' as const,
    workspaceId: ws,
    callSid: 'CA9',
    to: '+14155550777',
    now,
  };
  const placed = {
    type: 'CallPlaced' as const,
    data: { chatId: 7, workspaceId: ws, callSid: 'CA9', to: '+14155550777', placedAt: now },
  };
  it('records the placed call once', () => {
    spec.given([voice]).when(place).then([placed]);
    spec
      .given([voice, placed])
      .when({ ...place, callSid: 'CA10' })
      .then([]);
  });
});

describe('chat decider: what a process may cache', () => {
  const withMessages = (count: number) => {
    let state = chatDecider.evolve(chatDecider.initialState(), created);
    for (let i = 0; i < count; i++)
      state = chatDecider.evolve(state, { ...sent, data: { ...sent.data, messageId: 1000 + i } });
    return state;
  };

  it(`keeps a chat of at most ${CHAT_CACHE_MAX_ENTRIES} deliveries, not a longer one`, () => {
    // Two recipients per message: two deliveries each.
    expect(chatDecider.cacheable!(withMessages(CHAT_CACHE_MAX_ENTRIES / 2))).toBe(true);
    expect(chatDecider.cacheable!(withMessages(CHAT_CACHE_MAX_ENTRIES / 2 + 1))).toBe(false);
  });
});
