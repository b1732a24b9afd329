import type { Channel } from '../domain/chat.events';

export const SMS_QUEUE = 'sms';
export const EMAIL_QUEUE = 'email';
export const WEB_CHAT_QUEUE = 'web-chat';
/** Voice work: fetching call recordings from the provider. */
export const VOICE_QUEUE = 'voice';

/** The queue of each channel's deliveries (voice calls come with the voice round). */
export const QUEUE_OF_CHANNEL: Record<Channel, string | undefined> = {
  'phone-sms': SMS_QUEUE,
  email: EMAIL_QUEUE,
  'web-chat': WEB_CHAT_QUEUE,
  'phone-voice': undefined,
};

/**
 * One delivery: a message of a chat to one recipient. Ids only: the content stays in the
 * event store (it may be health information), the worker reads it from the chat's stream.
 */
export interface DeliveryJob {
  workspaceId: string;
  chatId: number;
  messageId: number;
  recipientMemberId: number;
  /** Of the MessageSent event: the outcome's events carry both. */
  correlationId: string;
  causationId: string;
}
