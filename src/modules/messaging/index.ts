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
export type { ChatEvent, ChatUpdated, Channel, AssistantKind } from './domain/chat.events';
export { chatStream, CHAT_EVENT_TYPES } from './domain/chat.events';
export { smsKeyword } from './domain/sms-keywords';
export { SendAssistantMessageCommand } from './commands/message.commands';
export type { Caller as MessagingCaller } from './domain/messaging-access.policy';
