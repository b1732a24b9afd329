import { grants } from '../../../core/auth/scopes';
import { ForbiddenError, NotFoundError } from '../../../core/http/domain-errors';

/** Who asks: effective scopes in the workspace and own member id (none for a key without membership). */
export interface Caller {
  scopes: readonly string[];
  memberId: number | undefined;
  /**
   * The credential's own scopes, before the role intersection, for a scoped credential
   * (API key, OAuth token); undefined for a member token, which is the member itself. The
   * "own chats" rule needs no role scope, but a scoped credential must still name chats:
   * an app granted `workspace:read` does not read the person's chats.
   */
  credentialScopes?: readonly string[];
  /** The caller's role in the workspace (work's role gate reads it when a chat starts a workflow). */
  roleId?: number | null;
}

/** Whether the own-chats rule reaches this far for the credential. */
const selfAllowed = (caller: Caller, level: 'read' | 'write'): boolean =>
  caller.credentialScopes === undefined || grants(caller.credentialScopes, `chats:${level}`);

interface ChatPeople {
  memberId: number;
  assistantMemberId: number | null;
  participants: readonly { memberId: number }[];
}

/** The caller is the chat's member, one of its participants, or its human assistant. */
export function takesPart(caller: Caller, chat: ChatPeople, level: 'read' | 'write' = 'read'): boolean {
  const me = caller.memberId;
  if (me === undefined || !selfAllowed(caller, level)) return false;
  return (
    chat.memberId === me || chat.assistantMemberId === me || chat.participants.some((p) => p.memberId === me)
  );
}

/**
 * Chats (SPEC, Scopes: chats:read / chats:write, self-access "own chats"): without
 * chats:read a caller sees only the chats it owns or takes part in; any other chat is
 * a 404, as if it did not exist.
 */
export function assertMaySeeChat(caller: Caller, chat: ChatPeople): void {
  if (grants(caller.scopes, 'chats:read') || takesPart(caller, chat)) return;
  throw new NotFoundError('Chat not found');
}

/** Which chats a list shows: all with chats:read, else those the caller takes part in. */
export function chatVisibility(caller: Caller): { all: true } | { memberId: number | undefined } {
  if (grants(caller.scopes, 'chats:read')) return { all: true };
  return { memberId: selfAllowed(caller, 'read') ? caller.memberId : undefined };
}

/** Changing a chat or writing into it: chats:write, or taking part in it (after it was found visible). */
export function assertMayWriteChat(caller: Caller, chat: ChatPeople): void {
  assertMaySeeChat(caller, chat);
  if (grants(caller.scopes, 'chats:write') || takesPart(caller, chat, 'write')) return;
  throw new ForbiddenError('This credential lacks the scope chats:write');
}

/**
 * A user message (POST .../messages) is recorded as the chat member's own: it is "from the
 * member, or from an operator on their behalf" (issue 11). So the chat's member, its human
 * operator (assistantMemberId, named by a holder of chats:write), or chats:write. A
 * supervisor or contributor takes part in the chat (reads it, receives what it sends) but
 * would otherwise put words in the member's mouth.
 */
export function assertMayPostAsMember(caller: Caller, chat: ChatPeople): void {
  assertMaySeeChat(caller, chat);
  if (grants(caller.scopes, 'chats:write')) return;
  const me = caller.memberId;
  if (
    me !== undefined &&
    selfAllowed(caller, 'write') &&
    (chat.memberId === me || chat.assistantMemberId === me)
  )
    return;
  throw new ForbiddenError(
    "This credential lacks the scope chats:write (a user message is the chat member's own, or an operator's on their behalf)",
  );
}

/**
 * Creating a chat: chats:write, or a chat of one's own (memberId is the caller) between the
 * caller and the AI assistant only. Whoever takes part receives the chat's outbound
 * messages, and a human operator sends them (SPEC: chats:write, or being that operator):
 * adding people is sending to them, and naming an operator hands out a right to send
 * through the workspace's channels that the caller does not hold itself.
 */
export function assertMayCreateChat(
  caller: Caller,
  memberId: number,
  others: { participants?: number; assistantMemberId?: number | null } = {},
): void {
  if (grants(caller.scopes, 'chats:write')) return;
  if (caller.memberId === memberId && selfAllowed(caller, 'write')) {
    if (others.participants)
      throw new ForbiddenError(
        'participants: adding other members to a chat needs the scope chats:write (a chat of your own needs none)',
      );
    if (others.assistantMemberId !== undefined && others.assistantMemberId !== null)
      throw new ForbiddenError(
        'assistantMemberId: naming a human operator needs the scope chats:write (a chat of your own with the AI assistant needs none)',
      );
    return;
  }
  throw new ForbiddenError(
    'This credential lacks the scope chats:write (only a chat of your own needs none)',
  );
}

/**
 * The assistant's message goes out to the chat's people: chats:write, or the human
 * operator of a `human` chat.
 */
export function assertMaySendAsAssistant(caller: Caller, chat: ChatPeople): void {
  assertMaySeeChat(caller, chat);
  if (grants(caller.scopes, 'chats:write')) return;
  if (
    chat.assistantMemberId !== null &&
    caller.memberId === chat.assistantMemberId &&
    selfAllowed(caller, 'write')
  )
    return;
  throw new ForbiddenError('This credential lacks the scope chats:write');
}

interface InboxPeople {
  ownerMemberId: number | null;
  grantedMemberIds: readonly number[];
}

/**
 * The member whose own and granted inboxes the caller reaches without inboxes:read: its own,
 * unless an API key's or OAuth token's own scopes lack inboxes:read (an app granted
 * `workspace:read` does not read the person's inboxes).
 */
export function inboxSelf(caller: Caller): number | undefined {
  if (caller.credentialScopes !== undefined && !grants(caller.credentialScopes, 'inboxes:read'))
    return undefined;
  return caller.memberId;
}

/** Inboxes (SPEC, Scopes): inboxes:read, or ownership or an explicit grant of that one inbox. */
export function mayUseInbox(caller: Caller, inbox: InboxPeople): boolean {
  if (grants(caller.scopes, 'inboxes:read')) return true;
  const me = inboxSelf(caller);
  return me !== undefined && (inbox.ownerMemberId === me || inbox.grantedMemberIds.includes(me));
}
