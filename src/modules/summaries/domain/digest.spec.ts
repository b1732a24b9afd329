import { Conversation, digest, summaryPrompt, transcript, who } from './digest';

const base: Conversation = {
  channel: 'phone-sms',
  memberId: 12,
  participants: [
    { memberId: 12, role: 'user', name: 'Ann' },
    { memberId: 30, role: 'supervisor', name: null },
  ],
  assistantKind: 'ai',
  messageCount: 3,
  inboundCount: 2,
  outboundCount: 1,
  firstMessageAt: '2026-11-23T10:00:00.000Z',
  lastMessageAt: '2026-11-23T10:05:00.000Z',
  messages: [
    { id: 1, direction: 'inbound', role: 'user', content: 'Hi', createdAt: '2026-11-23T10:00:00.000Z' },
    {
      id: 2,
      direction: 'outbound',
      role: 'assistant',
      content: 'Hello',
      createdAt: '2026-11-23T10:01:00.000Z',
    },
    {
      id: 3,
      direction: 'outbound',
      role: 'operator',
      content: 'See you\n at 3',
      createdAt: '2026-11-23T10:05:00.000Z',
    },
  ],
};

describe('the digest', () => {
  it('says who, how many messages each way, the first and last time, and the last message', () => {
    expect(digest(base)).toBe(
      [
        'SMS conversation with Ann (member 12); member 30, supervisor.',
        '3 messages: 2 from the member, 1 to the member.',
        'First message 2026-11-23T10:00:00.000Z, last message 2026-11-23T10:05:00.000Z.',
        'Last message, from the operator: "See you at 3"',
      ].join('\n'),
    );
  });

  it('clips a long last message, and says when there are none', () => {
    const long = { ...base.messages[0], content: 'y'.repeat(900) };
    expect(digest({ ...base, messages: [long] })).toContain(`"${'y'.repeat(499)}…"`);
    expect(digest({ ...base, messageCount: 0, inboundCount: 0, outboundCount: 0, messages: [] })).toBe(
      'SMS conversation with Ann (member 12); member 30, supervisor.\nNo messages.',
    );
  });

  it('tells a call by its outcome and duration', () => {
    const call = {
      callSid: 'CA1',
      durationSeconds: 1,
      outcome: 'completed',
      completedAt: '2026-11-23T10:06:00Z',
    };
    expect(digest({ ...base, call }).split('\n')[0]).toBe(
      'Phone call with Ann (member 12); member 30, supervisor: completed, 1 second.',
    );
  });

  it('names the member by id when it has no name or is not listed', () => {
    expect(who({ memberId: 5, participants: [] })).toBe('member 5');
  });
});

describe('the prompt', () => {
  it('keeps the newest messages within the budget and says how many were left out', () => {
    const messages = Array.from({ length: 50 }, (_, i) => ({
      id: i + 1,
      direction: 'inbound' as const,
      role: 'user',
      content: `message ${i} ${'z'.repeat(3000)}`,
      createdAt: '2026-11-23T10:00:00.000Z',
    }));
    const t = transcript({ ...base, messageCount: 80, messages }, 10_000);
    expect(t.text.length).toBeLessThanOrEqual(10_100);
    // Each message is clipped to 2,000 characters: four fit.
    expect(t.included).toBe(4);
    expect(t.omitted).toBe(76);
    expect(t.text.startsWith('(76 earlier messages not shown)')).toBe(true);
    expect(t.text).toContain('message 49 ');
    expect(t.text).not.toContain('message 45 ');
  });

  it('always carries the newest message, however long', () => {
    const t = transcript({ ...base, messages: [base.messages[2]] }, 10);
    expect(t.included).toBe(1);
  });

  it('is a short instruction and the conversation', () => {
    const [system, user] = summaryPrompt(base);
    expect(system.role).toBe('system');
    expect(system.content).toMatch(/^You summarise an SMS conversation/);
    expect(user.content).toContain('People: Ann (member 12); member 30, supervisor.');
    expect(user.content).toContain('[2026-11-23T10:05:00.000Z] operator: See you at 3');
  });
});
