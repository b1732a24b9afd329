import { definePublicEvent } from '../../../core/events/public-events';
import type {
  CallCompleted,
  CallOutcome,
  CallStarted,
  ChatCreated,
  MessageReceived,
  MessageSent,
  Participant,
} from './chat.events';

export interface ChatCreatedPayload {
  chat: {
    id: number;
    uuid: string;
    channel: string;
    workflowId: number | null;
    memberId: number;
    assistantKind: string;
    participants: Participant[];
    title: string | null;
    createdAt: string;
  };
}

/** chat:created (SPEC "Events": new chat started), from ChatCreated. */
export const CHAT_CREATED = definePublicEvent<'chat:created', ChatCreatedPayload, ChatCreated>({
  name: 'chat:created',
  description: 'new chat started',
  feature: 'messaging',
  sources: ['ChatCreated'],
  payloadFields: ['chat'],
  payload: ({ data: d }) => ({
    chat: {
      id: d.chatId,
      uuid: d.uuid,
      channel: d.channel,
      workflowId: d.workflowId ?? null,
      memberId: d.memberId,
      assistantKind: d.assistantKind,
      participants: d.participants,
      title: d.title,
      createdAt: d.createdAt,
    },
  }),
});

export interface ChatMessageCreatedPayload {
  chat: { id: number };
  message: {
    id: number;
    direction: 'inbound' | 'outbound';
    role: string;
    content: string;
    createdAt: string;
  };
}

/** chat.message.created (quick reference): any message written into a chat, either way. */
export const CHAT_MESSAGE_CREATED = definePublicEvent<
  'chat.message.created',
  ChatMessageCreatedPayload,
  MessageSent | MessageReceived
>({
  name: 'chat.message.created',
  description: 'a message was written into a chat (inbound or outbound)',
  feature: 'messaging',
  sources: ['MessageSent', 'MessageReceived'],
  payloadFields: ['chat', 'message'],
  payload: (event) =>
    event.type === 'MessageSent'
      ? {
          chat: { id: event.data.chatId },
          message: {
            id: event.data.messageId,
            direction: 'outbound',
            role: event.data.role,
            content: event.data.content,
            createdAt: event.data.sentAt,
          },
        }
      : {
          chat: { id: event.data.chatId },
          message: {
            id: event.data.messageId,
            direction: 'inbound',
            role: 'user',
            content: event.data.content,
            createdAt: event.data.receivedAt,
          },
        },
});

/** SPEC "Delivery rules" 7: a receiver of inbound SMS data gets chatId, message (with content) and memberId. */
export interface MessageReceivedPayload {
  chatId: number;
  message: { id: number; content: string };
  memberId: number;
}

/** The inbound-SMS event (its name is not shown in the spec: `message:received`). */
export const SMS_MESSAGE_RECEIVED = definePublicEvent<
  'message:received',
  MessageReceivedPayload,
  MessageReceived
>({
  name: 'message:received',
  description: 'a member texted the workspace (inbound SMS)',
  feature: 'messaging',
  sources: ['MessageReceived'],
  payloadFields: ['chatId', 'message', 'memberId'],
  appliesTo: (event) => event.data.source === 'sms',
  payload: ({ data: d }) => ({
    chatId: d.chatId,
    message: { id: d.messageId, content: d.content },
    memberId: d.memberId,
  }),
});

export interface EmailReceivedPayload {
  chatId: number;
  message: { id: number; subject: string | null; content: string };
  memberId: number;
}

/** email.received (quick reference): mail arrived at one of the workspace's inboxes. */
export const EMAIL_RECEIVED = definePublicEvent<'email.received', EmailReceivedPayload, MessageReceived>({
  name: 'email.received',
  description: "an email arrived at one of the workspace's inboxes",
  feature: 'messaging',
  sources: ['MessageReceived'],
  payloadFields: ['chatId', 'message', 'memberId'],
  appliesTo: (event) => event.data.source === 'email',
  payload: ({ data: d }) => ({
    chatId: d.chatId,
    message: { id: d.messageId, subject: d.subject ?? null, content: d.content },
    memberId: d.memberId,
  }),
});

/** The `call` block of call:started / call:completed; audio and transcript are read from the chat afterwards. */
export interface CallPayload {
  call: {
    chatId: number;
    callSid: string;
    status: 'in-progress' | CallOutcome;
    startedAt: string | null;
    completedAt: string | null;
    durationSeconds: number | null;
    outcome: CallOutcome | null;
  };
}

/** call:started (SPEC "Events": voice call started), from CallStarted. */
export const CALL_STARTED = definePublicEvent<'call:started', CallPayload, CallStarted>({
  name: 'call:started',
  description: 'voice call started',
  feature: 'messaging',
  sources: ['CallStarted'],
  payloadFields: ['call'],
  payload: ({ data: d }) => ({
    call: {
      chatId: d.chatId,
      callSid: d.callSid,
      status: 'in-progress',
      startedAt: d.startedAt,
      completedAt: null,
      durationSeconds: null,
      outcome: null,
    },
  }),
});

/** call:completed (SPEC "Events": voice call ended), from CallCompleted: duration and outcome. */
export const CALL_COMPLETED = definePublicEvent<'call:completed', CallPayload, CallCompleted>({
  name: 'call:completed',
  description: 'voice call ended',
  feature: 'messaging',
  sources: ['CallCompleted'],
  payloadFields: ['call'],
  payload: ({ data: d }) => ({
    call: {
      chatId: d.chatId,
      callSid: d.callSid,
      status: d.outcome,
      startedAt: null,
      completedAt: d.completedAt,
      durationSeconds: d.durationSeconds,
      outcome: d.outcome,
    },
  }),
});

export const MESSAGING_PUBLIC_EVENTS = [
  CHAT_CREATED,
  CHAT_MESSAGE_CREATED,
  SMS_MESSAGE_RECEIVED,
  EMAIL_RECEIVED,
  CALL_STARTED,
  CALL_COMPLETED,
];
