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
