import type { ChatEvent } from '../../messaging';
import { smsKeyword } from '../../messaging';
import type { ModelMessage } from '../model/language-model.port';

/** A chat as the assistant sees it, folded from messaging's `chat-<id>` stream. */
export interface ChatView {
  chatId: number;
  workspaceId: string;
  channel: string;
  memberId: number;
  assistantKind: 'ai' | 'human';
  paused: boolean;
  workflowId: number | null;
  messages: ViewMessage[];
}

export interface ViewMessage {
  id: number;
  role: 'user' | 'assistant' | 'operator' | 'system';
  content: string;
  /** An SMS keyword (STOP, START, HELP...): the service answered it itself. */
  keyword: boolean;
}

export function foldChat(events: readonly { type: string; data: unknown }[]): ChatView | null {
  let view: ChatView | null = null;
  for (const raw of events) {
    const e = raw as ChatEvent;
    switch (e.type) {
      case 'ChatCreated':
        view = {
          chatId: e.data.chatId,
          workspaceId: e.data.workspaceId,
          channel: e.data.channel,
          memberId: e.data.memberId,
          assistantKind: e.data.assistantKind,
          paused: false,
          workflowId: e.data.workflowId ?? null,
          messages: [],
        };
        break;
      case 'ChatUpdated': {
        if (!view) break;
        const changes = e.data.changes as typeof e.data.changes & { assistantKind?: 'ai' | 'human' };
        if (changes.paused !== undefined) view.paused = changes.paused;
        if (changes.workflowId !== undefined) view.workflowId = changes.workflowId;
        if (changes.assistantKind !== undefined) view.assistantKind = changes.assistantKind;
        break;
      }
      case 'MessageReceived':
        view?.messages.push({
          id: e.data.messageId,
          role: 'user',
          content: e.data.content,
          keyword: e.data.source === 'sms' && smsKeyword(e.data.content) !== undefined,
        });
        break;
      case 'MessageSent':
        view?.messages.push({
          id: e.data.messageId,
          role: e.data.role,
          content: e.data.content,
          keyword: false,
        });
        break;
      default:
        break;
    }
  }
  return view;
}

/** The last message from the member, if nothing but keyword replies came after it. */
export function awaitingAnswer(view: ChatView): ViewMessage | undefined {
  for (let i = view.messages.length - 1; i >= 0; i--) {
    const m = view.messages[i];
    if (m.role === 'system') continue;
    return m.role === 'user' ? m : undefined;
  }
  return undefined;
}

/**
 * Why the assistant must not answer `replyTo` now, or undefined when it should: the chat
 * is human or paused, the message was answered, or a later message of the burst has its
 * own job (which answers them all).
 */
export function reasonNotToAnswer(view: ChatView | null, replyTo: number): string | undefined {
  if (!view) return 'no_chat';
  if (view.assistantKind !== 'ai') return 'human';
  if (view.paused) return 'paused';
  const last = awaitingAnswer(view);
  if (!last) return 'answered';
  if (last.id !== replyTo) return 'superseded';
  if (last.keyword) return 'keyword';
  return undefined;
}

/**
 * The chat's history as model messages, newest kept first within the budget (about four
 * characters a token), oldest first in the answer; keyword messages and their replies
 * stay out. The newest message is always kept, cut to the budget if it alone exceeds it.
 */
export function historyWithin(view: ChatView, budgetTokens: number): ModelMessage[] {
  let chars = budgetTokens * 4;
  const kept: ModelMessage[] = [];
  for (let i = view.messages.length - 1; i >= 0; i--) {
    const m = view.messages[i];
    if (m.keyword || m.role === 'system') continue;
    let content = m.content;
    if (content.length > chars) {
      if (kept.length) break;
      content = content.slice(content.length - chars);
    }
    chars -= content.length;
    kept.push(m.role === 'user' ? { role: 'user', content } : { role: 'assistant', content });
  }
  return kept.reverse();
}

/**
 * A name put into the system message (the member's, the agent's, the workflow's) as one
 * line: line breaks, tabs and other control or separator characters become single spaces,
 * at most `max` characters. A member who names themselves `Ada\nSYSTEM: ...` must not
 * write lines of the system message.
 */
export function promptName(text: string, max = 200): string {
  return text
    .replace(/[\s\p{Cc}\u2028\u2029]+/gu, ' ')
    .trim()
    .slice(0, max);
}
