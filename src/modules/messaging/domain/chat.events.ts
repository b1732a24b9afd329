/**
 * A chat and its messages: one stream per chat (`chat-<id>`), so a message's deliveries
 * are decided on the chat's own state (a status moves forward only, a recorded provider
 * id is never sent again).
 */
export const CHANNELS = ['phone-sms', 'phone-voice', 'web-chat', 'email'] as const;
export type Channel = (typeof CHANNELS)[number];
export const ASSISTANT_KINDS = ['ai', 'human'] as const;
export type AssistantKind = (typeof ASSISTANT_KINDS)[number];
export const EXTRA_PARTICIPANT_ROLES = ['supervisor', 'contributor'] as const;
export type ParticipantRole = 'user' | (typeof EXTRA_PARTICIPANT_ROLES)[number];
export type MessageRole = 'user' | 'assistant' | 'operator' | 'system';
export type DeliveryStatus = 'sent' | 'delivered' | 'failed';
/** Why a delivery failed before or at the provider. */
export type FailureReason = 'no_consent' | 'opted_out' | 'no_address' | 'provider_error' | string;

export interface Participant {
  memberId: number;
  role: ParticipantRole;
}

export interface ChatCreated {
  type: 'ChatCreated';
  data: {
    chatId: number;
    uuid: string;
    workspaceId: string;
    channel: Channel;
    memberId: number;
    phoneNumberId: number | null;
    assistantKind: AssistantKind;
    assistantMemberId: number | null;
    /** The chat's member (role user) first, then the extra participants. */
    participants: Participant[];
    title: string | null;
    /** The workflow the chat runs and the assignment running it (absent on chats created before workflows). */
    workflowId?: number | null;
    assignmentId?: number | null;
    /** `assistantEnabled: true` on a phone-voice workflow chat: a worker places the outbound call. */
    placeCall?: boolean;
    createdAt: string;
  };
}

/** What PUT changes; a new assignment brings its workflow along. */
export interface ChatChanges {
  title?: string | null;
  paused?: boolean;
  assignmentId?: number;
  workflowId?: number;
}

export interface ChatUpdated {
  type: 'ChatUpdated';
  data: {
    chatId: number;
    workspaceId: string;
    changes: ChatChanges;
    updatedAt: string;
  };
}

/** A message into the chat from its member: posted through the API, texted, mailed or typed in web chat. */
export interface MessageReceived {
  type: 'MessageReceived';
  data: {
    chatId: number;
    workspaceId: string;
    messageId: number;
    memberId: number;
    content: string;
    /** `voice`: the transcript of a call, as the provider sent it. */
    source: 'api' | 'sms' | 'email' | 'web-chat' | 'voice';
    /** The provider's id of an inbound text or mail (its Message-ID). */
    providerMessageId: string | null;
    subject?: string | null;
    receivedAt: string;
  };
}

/** An outbound message to each recipient through the chat's channel; one delivery per recipient. */
export interface MessageSent {
  type: 'MessageSent';
  data: {
    chatId: number;
    workspaceId: string;
    messageId: number;
    channel: Channel;
    role: Exclude<MessageRole, 'user'>;
    content: string;
    senderMemberId: number | null;
    recipientMemberIds: number[];
    /** SMS only: computed before sending. */
    encoding: 'GSM-7' | 'UCS-2' | null;
    segments: number | null;
    /**
     * The service's own answer to an SMS keyword (STOP's confirmation, HELP): carriers
     * require it even to a member who just opted out, so consent is not asked for it.
     */
    keywordReply: boolean;
    /**
     * SMS held back by the workspace's quiet hours: per recipient member id, when its
     * delivery goes out (the window's end, ISO). Absent: everyone at once.
     */
    scheduledFor?: Record<string, string>;
    sentAt: string;
  };
}

/** The provider accepted a delivery and gave it this id: it is never sent again. */
export interface MessageDispatched {
  type: 'MessageDispatched';
  data: {
    chatId: number;
    workspaceId: string;
    messageId: number;
    recipientMemberId: number;
    providerMessageId: string;
    dispatchedAt: string;
  };
}

export interface MessageDelivered {
  type: 'MessageDelivered';
  data: {
    chatId: number;
    workspaceId: string;
    messageId: number;
    recipientMemberId: number;
    providerMessageId: string | null;
    deliveredAt: string;
  };
}

export interface MessageFailed {
  type: 'MessageFailed';
  data: {
    chatId: number;
    workspaceId: string;
    messageId: number;
    recipientMemberId: number;
    providerMessageId: string | null;
    reason: FailureReason;
    failedAt: string;
  };
}

/** The outcome of a voice call, from the provider's final status. */
export type CallOutcome = 'completed' | 'busy' | 'no-answer' | 'failed' | 'canceled';

/** The provider accepted the chat's outbound call: it is never placed again. */
export interface CallPlaced {
  type: 'CallPlaced';
  data: { chatId: number; workspaceId: string; callSid: string; to: string; placedAt: string };
}

/** A voice call of the chat was answered (the provider's `in-progress` status callback). */
export interface CallStarted {
  type: 'CallStarted';
  data: { chatId: number; workspaceId: string; callSid: string; startedAt: string };
}

/** A voice call of the chat ended, with its duration in seconds and outcome. */
export interface CallCompleted {
  type: 'CallCompleted';
  data: {
    chatId: number;
    workspaceId: string;
    callSid: string;
    durationSeconds: number;
    outcome: CallOutcome;
    completedAt: string;
  };
}

/** The provider has a recording of a call; a worker fetches it (`voice` queue). */
export interface CallRecordingReceived {
  type: 'CallRecordingReceived';
  data: {
    chatId: number;
    workspaceId: string;
    callSid: string;
    recordingSid: string;
    recordingUrl: string;
    receivedAt: string;
  };
}

/** The recording's bytes are kept through the files storage port under `key`. */
export interface CallRecordingStored {
  type: 'CallRecordingStored';
  data: {
    chatId: number;
    workspaceId: string;
    recordingSid: string;
    key: string;
    bytes: number;
    storedAt: string;
  };
}

export type CallEvent =
  CallPlaced | CallStarted | CallCompleted | CallRecordingReceived | CallRecordingStored;

export const CALL_EVENT_TYPES: readonly CallEvent['type'][] = [
  'CallPlaced',
  'CallStarted',
  'CallCompleted',
  'CallRecordingReceived',
  'CallRecordingStored',
];

export type ChatEvent =
  | CallEvent
  | ChatCreated
  | ChatUpdated
  | MessageReceived
  | MessageSent
  | MessageDispatched
  | MessageDelivered
  | MessageFailed;

export const CHAT_EVENT_TYPES: readonly ChatEvent['type'][] = [
  'ChatCreated',
  'ChatUpdated',
  'MessageReceived',
  'MessageSent',
  'MessageDispatched',
  'MessageDelivered',
  'MessageFailed',
];

export const chatStream = (id: number): string => `chat-${id}`;
