/**
 * The messaging feature's public surface. Nothing of it is used by other features yet;
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
/** For the MCP endpoint's tools (chats.*): what the chat routes run. */
export { SendAssistantMessageCommand } from './commands/message.commands';
export { GetMessageQuery, ListChatsQuery, ListMessagesQuery } from './queries/messaging.queries';
export { ChatListQueryDto, SendAssistantMessageDto } from './http/messaging.dto';
export { callerOf as chatCallerOf, pathId as chatPathId } from './http/ids';
