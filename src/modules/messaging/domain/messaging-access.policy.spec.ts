import { ForbiddenError, NotFoundError } from '../../../core/http/domain-errors';
import {
  assertMayCreateChat,
  assertMayPostAsMember,
  assertMaySeeChat,
  assertMaySendAsAssistant,
  assertMayWriteChat,
  chatVisibility,
  inboxSelf,
  mayUseInbox,
} from './messaging-access.policy';

const chat = { memberId: 5, assistantMemberId: 9, participants: [{ memberId: 5 }, { memberId: 7 }] };

describe('messaging access policy', () => {
  it('lets chats:read see any chat, others only chats they take part in (404 otherwise)', () => {
    expect(() => assertMaySeeChat({ scopes: ['chats:read'], memberId: 1 }, chat)).not.toThrow();
    for (const me of [5, 7, 9])
      expect(() => assertMaySeeChat({ scopes: [], memberId: me }, chat)).not.toThrow();
    expect(() => assertMaySeeChat({ scopes: [], memberId: 1 }, chat)).toThrow(NotFoundError);
    expect(chatVisibility({ scopes: ['chats:admin'], memberId: 1 })).toEqual({ all: true });
    expect(chatVisibility({ scopes: ['members:read'], memberId: 1 })).toEqual({ memberId: 1 });
  });

  it('lets participants write into their chat; chats:read alone may not write into others', () => {
    expect(() => assertMayWriteChat({ scopes: [], memberId: 7 }, chat)).not.toThrow();
    expect(() => assertMayWriteChat({ scopes: ['chats:read'], memberId: 1 }, chat)).toThrow(ForbiddenError);
    expect(() => assertMayWriteChat({ scopes: ['chats:write'], memberId: 1 }, chat)).not.toThrow();
  });

  it("posts a user message as the chat's member only for the member, its operator or chats:write", () => {
    // 5 is the chat's member, 9 its human operator, 7 a supervisor or contributor.
    for (const me of [5, 9])
      expect(() => assertMayPostAsMember({ scopes: [], memberId: me }, chat)).not.toThrow();
    expect(() => assertMayPostAsMember({ scopes: [], memberId: 7 }, chat)).toThrow(/chats:write/);
    expect(() => assertMayPostAsMember({ scopes: ['chats:read'], memberId: 7 }, chat)).toThrow(
      ForbiddenError,
    );
    expect(() => assertMayPostAsMember({ scopes: ['chats:write'], memberId: 7 }, chat)).not.toThrow();
    expect(() => assertMayPostAsMember({ scopes: [], memberId: 1 }, chat)).toThrow(NotFoundError);
    // A key of the member's without chats:write in its own scopes does not reach the self rule.
    expect(() =>
      assertMayPostAsMember({ scopes: [], memberId: 5, credentialScopes: ['chats:read'] }, chat),
    ).toThrow(ForbiddenError);
  });

  it('creates chats for others only with chats:write', () => {
    expect(() => assertMayCreateChat({ scopes: [], memberId: 3 }, 3)).not.toThrow();
    expect(() => assertMayCreateChat({ scopes: ['chats:read'], memberId: 3 }, 4)).toThrow(ForbiddenError);
    expect(() => assertMayCreateChat({ scopes: ['chats:write'], memberId: 3 }, 4)).not.toThrow();
  });

  it('lets only chats:write add participants or name a human operator: one receives, the other sends', () => {
    const self = { scopes: [], memberId: 3 };
    expect(() => assertMayCreateChat(self, 3, { participants: 1 })).toThrow(/^participants: /);
    expect(() =>
      assertMayCreateChat({ scopes: ['chats:read'], memberId: 3 }, 3, { participants: 2 }),
    ).toThrow(ForbiddenError);
    expect(() => assertMayCreateChat(self, 3, { assistantMemberId: 3 })).toThrow(/^assistantMemberId: /);
    expect(() => assertMayCreateChat(self, 3, { assistantMemberId: 4 })).toThrow(/^assistantMemberId: /);
    const writer = { scopes: ['chats:write'], memberId: 3 };
    expect(() => assertMayCreateChat(writer, 3, { participants: 2, assistantMemberId: 3 })).not.toThrow();
    expect(() => assertMayCreateChat(self, 3, { participants: 0, assistantMemberId: null })).not.toThrow();
  });

  it('sends as the assistant with chats:write or as the human operator only', () => {
    expect(() => assertMaySendAsAssistant({ scopes: [], memberId: 9 }, chat)).not.toThrow();
    expect(() => assertMaySendAsAssistant({ scopes: [], memberId: 5 }, chat)).toThrow(ForbiddenError);
  });

  it('opens an inbox to inboxes:read, its owner and its grantees', () => {
    const inbox = { ownerMemberId: 2, grantedMemberIds: [4] };
    expect(mayUseInbox({ scopes: ['inboxes:read'], memberId: 1 }, inbox)).toBe(true);
    expect(mayUseInbox({ scopes: [], memberId: 2 }, inbox)).toBe(true);
    expect(mayUseInbox({ scopes: [], memberId: 4 }, inbox)).toBe(true);
    expect(mayUseInbox({ scopes: [], memberId: 3 }, inbox)).toBe(false);
  });

  it('opens owned and granted inboxes to an API key or OAuth token only when it names inboxes:read', () => {
    const inbox = { ownerMemberId: 2, grantedMemberIds: [4] };
    expect(mayUseInbox({ scopes: [], memberId: 2, credentialScopes: ['workspace:read'] }, inbox)).toBe(false);
    expect(mayUseInbox({ scopes: [], memberId: 4, credentialScopes: ['chats:admin'] }, inbox)).toBe(false);
    expect(inboxSelf({ scopes: [], memberId: 2, credentialScopes: ['workspace:read'] })).toBeUndefined();
    expect(mayUseInbox({ scopes: [], memberId: 2, credentialScopes: ['inboxes:read'] }, inbox)).toBe(true);
    expect(inboxSelf({ scopes: [], memberId: 2 })).toBe(2);
  });
});

describe('the own-chats rule under a scoped credential', () => {
  it('needs the credential to name chats at the level asked for; a member token needs nothing', () => {
    const narrow = { scopes: ['workspace:read'], memberId: 5, credentialScopes: ['workspace:read'] };
    const reader = { scopes: [], memberId: 5, credentialScopes: ['chats:read'] };
    const token = { scopes: [], memberId: 5 };
    expect(() => assertMaySeeChat(narrow, chat)).toThrow(NotFoundError);
    expect(chatVisibility(narrow)).toEqual({ memberId: undefined });
    expect(() => assertMayCreateChat(narrow, 5)).toThrow(ForbiddenError);
    expect(() => assertMaySeeChat(reader, chat)).not.toThrow();
    expect(() => assertMayWriteChat(reader, chat)).toThrow(ForbiddenError);
    expect(() => assertMayWriteChat(token, chat)).not.toThrow();
    expect(() => assertMaySendAsAssistant({ ...reader, memberId: 9 }, chat)).toThrow(ForbiddenError);
  });
});
