import { fold } from '../../../core/cqrs/decider';
import { CALL_SUMMARY, CHAT_SUMMARY } from './summaries.public-events';
import { summaryDecider } from './summary';
import type { CallSummarized, ChatSummarized, SummaryFacts } from './summary.events';

const facts = (over: Partial<SummaryFacts> = {}): SummaryFacts => ({
  chatId: 7,
  chatUuid: '0190a6c4-0000-7000-8000-000000000007',
  workspaceId: '0190a6c4-0000-7000-8000-000000000001',
  channel: 'phone-sms',
  memberId: 12,
  participants: [{ memberId: 12, role: 'user', name: 'Ann' }],
  workflowId: 3,
  workflowUuid: '0190a6c4-0000-7000-8000-000000000003',
  assignmentId: 5,
  trigger: 'idle',
  key: 'idle:40',
  text: 'SMS conversation with Ann.',
  source: 'digest',
  model: null,
  fallbackReason: null,
  messageCount: 2,
  inboundCount: 1,
  outboundCount: 1,
  firstMessageAt: '2026-11-23T10:00:00.000Z',
  lastMessageAt: '2026-11-23T10:05:00.000Z',
  lastMessageId: 40,
  summarizedAt: '2026-11-23T10:35:00.000Z',
  ...over,
});
const chat = (over: Partial<SummaryFacts> = {}): ChatSummarized => ({
  type: 'ChatSummarized',
  data: facts(over),
});
const decide = (given: (ChatSummarized | CallSummarized)[], summary: ChatSummarized | CallSummarized) =>
  summaryDecider.decide({ type: 'RecordSummary', summary }, fold(summaryDecider, given));

describe('summary decider', () => {
  it('writes a first summary', () => {
    expect(decide([], chat())).toEqual([chat()]);
  });

  it('writes nothing for a key already written (a job run twice, a replayed trigger)', () => {
    expect(decide([chat()], chat({ text: 'again' }))).toEqual([]);
    const pause = chat({ trigger: 'paused', key: 'paused:evt-1' });
    expect(decide([chat(), pause], pause)).toEqual([]);
  });

  it('drops an idle summary whose last message the newest summary already covers', () => {
    const paused = chat({ trigger: 'paused', key: 'paused:evt-1', lastMessageId: 40 });
    expect(decide([paused], chat({ key: 'idle:40', lastMessageId: 40 }))).toEqual([]);
    // A newer message is news.
    expect(decide([paused], chat({ key: 'idle:41', lastMessageId: 41 }))).toHaveLength(1);
    // Other triggers are always written, covered or not.
    const completed = chat({ trigger: 'assignment_completed', key: 'assignment:5', lastMessageId: 40 });
    expect(decide([paused], completed)).toEqual([completed]);
  });
});

describe('chat:summary and call:summary payloads', () => {
  it('carry chat.channel and workflow.uuid, the fields the rule filters compare', () => {
    expect(CHAT_SUMMARY.payload(chat())).toEqual({
      chat: {
        id: 7,
        uuid: '0190a6c4-0000-7000-8000-000000000007',
        channel: 'phone-sms',
        memberId: 12,
        workflowId: 3,
      },
      workflow: { id: 3, uuid: '0190a6c4-0000-7000-8000-000000000003' },
      summary: {
        text: 'SMS conversation with Ann.',
        source: 'digest',
        trigger: 'idle',
        messageCount: 2,
        inboundCount: 1,
        outboundCount: 1,
        participants: [{ memberId: 12, role: 'user', name: 'Ann' }],
        firstMessageAt: '2026-11-23T10:00:00.000Z',
        lastMessageAt: '2026-11-23T10:05:00.000Z',
        summarizedAt: '2026-11-23T10:35:00.000Z',
      },
    });
    expect(CHAT_SUMMARY.payload(chat({ workflowId: null, workflowUuid: null })).workflow).toBeNull();
  });

  it('adds the call, with its duration, to call:summary', () => {
    const call = {
      callSid: 'CA1',
      durationSeconds: 42,
      outcome: 'completed',
      completedAt: '2026-11-23T10:06:00Z',
    };
    const event: CallSummarized = {
      type: 'CallSummarized',
      data: { ...facts({ trigger: 'call_completed' }), call },
    };
    expect(CALL_SUMMARY.payload(event)).toMatchObject({
      chat: { id: 7, channel: 'phone-sms' },
      call: { chatId: 7, ...call },
      summary: { trigger: 'call_completed' },
    });
    expect(CALL_SUMMARY.payloadFields).toEqual(['chat', 'workflow', 'summary', 'call']);
  });
});
