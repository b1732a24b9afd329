import type { CallFacts, SummaryParticipant } from './summary.events';

/** One message of the conversation as the summary reads it. */
export interface ConversationMessage {
  id: number;
  direction: 'inbound' | 'outbound';
  role: string;
  content: string;
  createdAt: string;
}

/** What a summary is written from: the chat's people, its counts and the tail of its messages. */
export interface Conversation {
  channel: string;
  memberId: number;
  participants: SummaryParticipant[];
  assistantKind: string;
  messageCount: number;
  inboundCount: number;
  outboundCount: number;
  firstMessageAt: string | null;
  lastMessageAt: string | null;
  /** The newest messages, oldest first (the whole chat when it is short). */
  messages: ConversationMessage[];
  call?: CallFacts;
}

/** The most of the conversation a prompt carries (about 3,000 tokens), and of one message in it. */
export const PROMPT_BUDGET_CHARS = 12_000;
export const PROMPT_MESSAGE_CHARS = 2_000;
/** The digest quotes this much of the last message. */
export const DIGEST_LAST_MESSAGE_CHARS = 500;

const CHANNEL_NAMES: Record<string, string> = {
  'phone-sms': 'SMS',
  'phone-voice': 'phone',
  'web-chat': 'web chat',
  email: 'email',
};

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function personOf(p: SummaryParticipant): string {
  return p.name ? `${p.name} (member ${p.memberId})` : `member ${p.memberId}`;
}

/** Who took part: the chat's member first, then the others with their role. */
export function who(c: Pick<Conversation, 'participants' | 'memberId'>): string {
  const member = c.participants.find((p) => p.memberId === c.memberId);
  const others = c.participants.filter((p) => p.memberId !== c.memberId);
  const parts = [
    member ? personOf(member) : `member ${c.memberId}`,
    ...others.map((p) => `${personOf(p)}, ${p.role}`),
  ];
  return parts.join('; ');
}

function speaker(m: ConversationMessage): string {
  return m.direction === 'inbound' ? 'the member' : `the ${m.role}`;
}

/**
 * The plain digest (ASSISTANT_PROVIDER=none, or the model failed): who, how many
 * messages each way, the first and last message time, and the last message.
 */
export function digest(c: Conversation): string {
  const channel = CHANNEL_NAMES[c.channel] ?? c.channel;
  const lines: string[] = [];
  if (c.call)
    lines.push(`Phone call with ${who(c)}: ${c.call.outcome}, ${plural(c.call.durationSeconds, 'second')}.`);
  else lines.push(`${channel[0].toUpperCase()}${channel.slice(1)} conversation with ${who(c)}.`);
  if (c.messageCount === 0) {
    lines.push('No messages.');
    return lines.join('\n');
  }
  lines.push(
    `${plural(c.messageCount, 'message')}: ${c.inboundCount} from the member, ${c.outboundCount} to the member.`,
  );
  if (c.firstMessageAt) lines.push(`First message ${c.firstMessageAt}, last message ${c.lastMessageAt}.`);
  const last = c.messages[c.messages.length - 1];
  if (last)
    lines.push(`Last message, from ${speaker(last)}: "${clip(last.content, DIGEST_LAST_MESSAGE_CHARS)}"`);
  return lines.join('\n');
}

/**
 * The conversation as the model reads it: the newest messages that fit the budget
 * (each clipped), oldest first, with a note of how many earlier ones were left out.
 */
export function transcript(
  c: Conversation,
  budget = PROMPT_BUDGET_CHARS,
): { text: string; included: number; omitted: number } {
  const lines: string[] = [];
  let used = 0;
  for (let i = c.messages.length - 1; i >= 0; i--) {
    const m = c.messages[i];
    const line = `[${m.createdAt}] ${m.direction === 'inbound' ? 'member' : m.role}: ${clip(m.content, PROMPT_MESSAGE_CHARS)}`;
    if (used + line.length + 1 > budget && lines.length) break;
    lines.unshift(line);
    used += line.length + 1;
  }
  const omitted = c.messageCount - lines.length;
  const text = [omitted > 0 ? `(${plural(omitted, 'earlier message')} not shown)` : '', ...lines]
    .filter(Boolean)
    .join('\n');
  return { text, included: lines.length, omitted };
}

/** A short instruction and the bounded conversation, for the model. */
export function summaryPrompt(
  c: Conversation,
  budget = PROMPT_BUDGET_CHARS,
): { role: 'system' | 'user'; content: string }[] {
  const channel = CHANNEL_NAMES[c.channel] ?? c.channel;
  const subject = c.call
    ? `a phone call (${c.call.outcome}, ${plural(c.call.durationSeconds, 'second')})`
    : `${/^(SMS|email)/.test(channel) ? 'an' : 'a'} ${channel} conversation`;
  return [
    {
      role: 'system',
      content:
        `You summarise ${subject} between a member and a care team for the team's records. ` +
        'Write 2 to 5 plain sentences: what the member wanted, what was answered or agreed, and any open follow-up. ' +
        'Use only what the transcript says; do not invent facts.',
    },
    {
      role: 'user',
      content: `People: ${who(c)}.\n${plural(c.messageCount, 'message')} (${c.inboundCount} from the member, ${c.outboundCount} to the member).\n\nTranscript:\n${transcript(c, budget).text || '(no messages)'}`,
    },
  ];
}
