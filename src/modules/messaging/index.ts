/**
 * The messaging feature's public surface;
 * its public events (chat:created, chat.message.created, message:received,
 * email.received) reach event rules through the catalogue, with their payload types here.
 */
export type {
  CallPayload,
  ChatCreatedPayload,
  ChatMessageCreatedPayload,
  EmailReceivedPayload,
  MessageReceivedPayload,
} from './domain/messaging.public-events';
export type { ChatCreated, MessageReceived, MessageSent } from './domain/chat.events';

/**
 * Reading a chat and its messages from elsewhere (summaries): the queries, the caller they
 * take (callerOf turns a route's principal into one, so the chat's read rules apply) and
 * the responses they answer.
 */
export { GetChatQuery, ListMessagesQuery } from './queries/messaging.queries';
export type { Caller } from './domain/messaging-access.policy';
export { callerOf, pathId } from './http/ids';
export type { ChatResponse, MessageResponse } from './http/chat.responses';
export type { CallCompleted, ChatUpdated, Channel, Participant } from './domain/chat.events';
export type { ChatEvent, AssistantKind } from './domain/chat.events';
export { chatStream, CHAT_EVENT_TYPES } from './domain/chat.events';
export { smsKeyword } from './domain/sms-keywords';
export { reserveChatMessageId, SendAssistantMessageCommand } from './commands/message.commands';
/** What SendAssistantMessageCommand throws for a message over MESSAGE_MAX characters (a 400). */
export { MESSAGE_MAX, MessageTooLongError } from './domain/chat';
export type { Caller as MessagingCaller } from './domain/messaging-access.policy';
/** For the MCP endpoint's tools (chats.*): what the chat routes run. */
export { GetMessageQuery, ListChatsQuery } from './queries/messaging.queries';
export { ChatListQueryDto, SendAssistantMessageDto } from './http/messaging.dto';
export { callerOf as chatCallerOf, pathId as chatPathId } from './http/ids';
