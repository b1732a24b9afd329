import { Decider } from '../../../core/cqrs/decider';
import { ConflictError, NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { CallCommand, CallsState, decideCall, evolveCalls, initialCalls } from './calls';
import type {
  CallOutcome,
  ChatChanges,
  ChatCreated,
  ChatEvent,
  ChatUpdated,
  DeliveryStatus,
  FailureReason,
  MessageSent,
} from './chat.events';

export const CHAT_TITLE_MAX = 200;
export const MESSAGE_MAX = 10_000;

/**
 * A message over MESSAGE_MAX characters (Unicode code points, as OpenAPI's maxLength
 * counts them). The rule lives here, in the decider, so every sender meets it: the HTTP
 * route, the MCP tool and the assistant's reply alike. The detail names the field as the
 * route's body does (`message`).
 */
export class MessageTooLongError extends ValidationError {
  constructor(readonly characters: number) {
    super(`message: must be shorter than or equal to ${MESSAGE_MAX} characters`);
  }
}

/** The message's length in code points once it is over MESSAGE_MAX, else null (cheap for short text). */
export function overMessageMax(content: string): number | null {
  if (content.length <= MESSAGE_MAX) return null;
  let n = 0;
  for (const _ of content) n++;
  return n > MESSAGE_MAX ? n : null;
}

interface DeliveryState {
  status: DeliveryStatus;
  providerMessageId: string | null;
}

export interface ChatState {
  chat: ChatCreated['data'] | null;
  paused: boolean;
  /** Deliveries by `<messageId>:<memberId>`. */
  deliveries: Record<string, DeliveryState>;
  /** Provider ids of inbound messages already recorded: a provider's retry records nothing twice. */
  received: Record<string, true>;
  /** Voice calls and their recordings (phone-voice chats). */
  voice: CallsState;
  /** When each member's latest message into the chat arrived (quiet hours let replies to it through). */
  inboundAt: Record<number, string>;
}

export const deliveryKey = (messageId: number, memberId: number): string => `${messageId}:${memberId}`;

type NewChat = Omit<ChatCreated['data'], 'createdAt'>;

export type ChatCommand =
  | (CallCommand & { workspaceId: string })
  | { type: 'CreateChat'; chat: NewChat; now: string }
  | {
      type: 'UpdateChat';
      chatId: number;
      workspaceId: string;
      changes: Omit<ChatChanges, 'workflowId'>;
      /** With assignmentId: the assignment as its stream shows it (the handler reads it). */
      assignment?: { workspaceId: string; workflowId: number; memberId: number } | null;
      now: string;
    }
  | {
      type: 'ReceiveMessage';
      workspaceId: string;
      message: Omit<
        Extract<ChatEvent, { type: 'MessageReceived' }>['data'],
        'receivedAt' | 'chatId' | 'workspaceId'
      >;
      now: string;
    }
  | {
      type: 'SendMessage';
      workspaceId: string;
      message: Omit<
        MessageSent['data'],
        'sentAt' | 'chatId' | 'workspaceId' | 'channel' | 'recipientMemberIds'
      >;
      /** Only these participants (a keyword reply goes to its texter); default: all but the sender. */
      onlyTo?: number[];
      now: string;
    }
  | {
      type: 'RecordDispatch';
      messageId: number;
      recipientMemberId: number;
      providerMessageId: string;
      now: string;
      /**
       * The delivery's outcome, when the provider's status callback came while the dispatch
       * was being recorded: decided on the dispatched state, in the same append.
       */
      then?: RecordOutcomeCommand;
    }
  | RecordOutcomeCommand;

export interface RecordOutcomeCommand {
  type: 'RecordOutcome';
  messageId: number;
  recipientMemberId: number;
  outcome: 'delivered' | 'failed';
  reason?: FailureReason;
  providerMessageId?: string | null;
  now: string;
}

function existing(state: ChatState, workspaceId: string): ChatCreated['data'] {
  if (!state.chat || state.chat.workspaceId !== workspaceId) throw new NotFoundError('Chat not found');
  return state.chat;
}

/** The chat's creation rules that need no lookup (the handler checks ids against the workspace). */
export function checkNewChat(chat: NewChat): void {
  if ((chat.channel === 'phone-sms' || chat.channel === 'phone-voice') && chat.phoneNumberId === null)
    throw new ValidationError(`phoneNumberId: required for the ${chat.channel} channel`);
  if (chat.assistantKind === 'human' && chat.assistantMemberId === null)
    throw new ValidationError('assistantMemberId: required when assistantKind is human');
  if (chat.assistantKind === 'ai' && chat.assistantMemberId !== null)
    throw new ValidationError('assistantMemberId: only a human assistant (assistantKind human) has one');
  // The operator's messages go to every participant but the operator: the member answering
  // itself would send to nobody, and its own words would come in as both sides.
  if (chat.assistantMemberId !== null && chat.assistantMemberId === chat.memberId)
    throw new ValidationError("assistantMemberId: the chat's member cannot be its own human operator");
  const seen = new Set<number>();
  for (const [i, p] of chat.participants.entries()) {
    if (seen.has(p.memberId))
      throw new ValidationError(
        i === 0
          ? 'memberId: listed twice'
          : `participants.${i - 1}.memberId: member ${p.memberId} already takes part in the chat`,
      );
    seen.add(p.memberId);
  }
}

/** Recipients of an outbound message: every participant but the one sending it. */
export function recipientsOf(chat: ChatCreated['data'], senderMemberId: number | null): number[] {
  return chat.participants.map((p) => p.memberId).filter((id) => id !== senderMemberId);
}

function decideOutcome(command: RecordOutcomeCommand, state: ChatState): ChatEvent[] {
  const chat = state.chat;
  const delivery = state.deliveries[deliveryKey(command.messageId, command.recipientMemberId)];
  if (!chat || !delivery) throw new NotFoundError('Delivery not found');
  // Forward only (DESIGN.md): sent → delivered | failed; a late or repeated answer changes nothing.
  if (delivery.status !== 'sent') return [];
  // A callback finds its delivery by its address; one about another provider message (an
  // earlier send of it whose id was never recorded, another message) says nothing of this one.
  if (
    command.providerMessageId &&
    delivery.providerMessageId !== null &&
    command.providerMessageId !== delivery.providerMessageId
  )
    return [];
  const base = {
    chatId: chat.chatId,
    workspaceId: chat.workspaceId,
    messageId: command.messageId,
    recipientMemberId: command.recipientMemberId,
    providerMessageId: command.providerMessageId ?? delivery.providerMessageId,
  };
  return command.outcome === 'delivered'
    ? [{ type: 'MessageDelivered', data: { ...base, deliveredAt: command.now } }]
    : [
        {
          type: 'MessageFailed',
          data: { ...base, reason: command.reason ?? 'provider_error', failedAt: command.now },
        },
      ];
}

/**
 * Messages of a phone-voice chat are spoken in its call: when a call ends, every delivery
 * still pending moves on with it, `delivered` when the call completed, else `failed` with
 * `call_<outcome>` (busy, no-answer, failed, canceled). One sent while no call runs waits
 * for the next call's end.
 */
function spokenOutcomes(state: ChatState, outcome: CallOutcome, now: string): ChatEvent[] {
  const chat = state.chat!;
  const out: ChatEvent[] = [];
  for (const [key, delivery] of Object.entries(state.deliveries)) {
    if (delivery.status !== 'sent') continue;
    const [messageId, recipientMemberId] = key.split(':').map(Number);
    const base = {
      chatId: chat.chatId,
      workspaceId: chat.workspaceId,
      messageId,
      recipientMemberId,
      providerMessageId: delivery.providerMessageId,
    };
    out.push(
      outcome === 'completed'
        ? { type: 'MessageDelivered', data: { ...base, deliveredAt: now } }
        : { type: 'MessageFailed', data: { ...base, reason: `call_${outcome}`, failedAt: now } },
    );
  }
  return out;
}

/** The largest chat (deliveries plus inbound messages) a process keeps in its aggregate cache. */
export const CHAT_CACHE_MAX_ENTRIES = 200;

export const chatDecider: Decider<ChatState, ChatCommand, ChatEvent> = {
  initialState: () => ({
    chat: null,
    paused: false,
    deliveries: {},
    received: {},
    voice: initialCalls(),
    inboundAt: {},
  }),

  // A chat's state grows with its messages: a process keeps (EventSourcedRepository's
  // aggregate cache) only chats of at most CHAT_CACHE_MAX_ENTRIES deliveries and inbound
  // messages; a longer one is read from its stream each time, as before the cache.
  cacheable(state) {
    let entries = 0;
    for (const _key in state.deliveries) if (++entries > CHAT_CACHE_MAX_ENTRIES) return false;
    for (const _key in state.received) if (++entries > CHAT_CACHE_MAX_ENTRIES) return false;
    return true;
  },

  evolve(state, event) {
    switch (event.type) {
      case 'CallPlaced':
      case 'CallStarted':
      case 'CallCompleted':
      case 'CallRecordingReceived':
      case 'CallRecordingStored':
        return { ...state, voice: evolveCalls(state.voice, event) };
      case 'ChatCreated':
        return { ...state, chat: event.data };
      case 'ChatUpdated': {
        const { title, paused, assignmentId, workflowId } = event.data.changes;
        const chat = state.chat && {
          ...state.chat,
          ...(title !== undefined ? { title } : {}),
          ...(assignmentId !== undefined ? { assignmentId } : {}),
          ...(workflowId !== undefined ? { workflowId } : {}),
        };
        return { ...state, chat, paused: paused ?? state.paused };
      }
      case 'MessageReceived': {
        const id = event.data.providerMessageId;
        const inboundAt = { ...state.inboundAt, [event.data.memberId]: event.data.receivedAt };
        return id
          ? { ...state, inboundAt, received: { ...state.received, [id]: true } }
          : { ...state, inboundAt };
      }
      case 'MessageSent': {
        const deliveries = { ...state.deliveries };
        for (const id of event.data.recipientMemberIds)
          deliveries[deliveryKey(event.data.messageId, id)] = { status: 'sent', providerMessageId: null };
        return { ...state, deliveries };
      }
      case 'MessageDispatched':
      case 'MessageDelivered':
      case 'MessageFailed': {
        const key = deliveryKey(event.data.messageId, event.data.recipientMemberId);
        const before = state.deliveries[key] ?? { status: 'sent', providerMessageId: null };
        const status: DeliveryStatus =
          event.type === 'MessageDelivered'
            ? 'delivered'
            : event.type === 'MessageFailed'
              ? 'failed'
              : before.status;
        return {
          ...state,
          deliveries: {
            ...state.deliveries,
            [key]: { status, providerMessageId: event.data.providerMessageId ?? before.providerMessageId },
          },
        };
      }
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'RecordCallPlaced':
      case 'RecordCallRecording':
      case 'StoreCallRecording':
        return decideCall(command, existing(state, command.workspaceId), state.voice);
      case 'RecordCallStatus': {
        const events: ChatEvent[] = decideCall(command, existing(state, command.workspaceId), state.voice);
        const completed = events.find((e) => e.type === 'CallCompleted');
        return completed
          ? [...events, ...spokenOutcomes(state, completed.data.outcome, command.now)]
          : events;
      }
      case 'CreateChat':
        if (state.chat) throw new ConflictError(`Chat ${command.chat.chatId} already exists`);
        checkNewChat(command.chat);
        return [{ type: 'ChatCreated', data: { ...command.chat, createdAt: command.now } }];
      case 'UpdateChat': {
        const chat = existing(state, command.workspaceId);
        const changes: ChatUpdated['data']['changes'] = {};
        const { title, paused, assignmentId } = command.changes;
        if (title !== undefined && title !== chat.title) changes.title = title;
        if (paused !== undefined && paused !== state.paused) changes.paused = paused;
        if (assignmentId !== undefined && assignmentId !== chat.assignmentId) {
          const found = command.assignment;
          if (!found || found.workspaceId !== chat.workspaceId)
            throw new ValidationError(`assignmentId: no assignment ${assignmentId} in this workspace`);
          if (found.memberId !== chat.memberId)
            throw new ValidationError(
              `assignmentId: assignment ${assignmentId} runs for member ${found.memberId}, not the chat's member ${chat.memberId}`,
            );
          changes.assignmentId = assignmentId;
          if (found.workflowId !== (chat.workflowId ?? null)) changes.workflowId = found.workflowId;
        }
        if (!Object.keys(changes).length) return [];
        return [
          {
            type: 'ChatUpdated',
            data: { chatId: chat.chatId, workspaceId: chat.workspaceId, changes, updatedAt: command.now },
          },
        ];
      }
      case 'ReceiveMessage': {
        const chat = existing(state, command.workspaceId);
        const providerId = command.message.providerMessageId;
        if (providerId && Object.hasOwn(state.received, providerId)) return [];
        return [
          {
            type: 'MessageReceived',
            data: {
              ...command.message,
              chatId: chat.chatId,
              workspaceId: chat.workspaceId,
              receivedAt: command.now,
            },
          },
        ];
      }
      case 'SendMessage': {
        const chat = existing(state, command.workspaceId);
        const tooLong = overMessageMax(command.message.content);
        if (tooLong !== null) throw new MessageTooLongError(tooLong);
        return [
          {
            type: 'MessageSent',
            data: {
              ...command.message,
              chatId: chat.chatId,
              workspaceId: chat.workspaceId,
              channel: chat.channel,
              recipientMemberIds: command.onlyTo
                ? recipientsOf(chat, null).filter((id) => command.onlyTo!.includes(id))
                : recipientsOf(chat, command.message.senderMemberId),
              sentAt: command.now,
            },
          },
        ];
      }
      case 'RecordDispatch': {
        const chat = state.chat;
        const delivery = state.deliveries[deliveryKey(command.messageId, command.recipientMemberId)];
        if (!chat || !delivery) throw new NotFoundError('Delivery not found');
        if (delivery.providerMessageId !== null || delivery.status !== 'sent') return [];
        const dispatched: ChatEvent = {
          type: 'MessageDispatched',
          data: {
            chatId: chat.chatId,
            workspaceId: chat.workspaceId,
            messageId: command.messageId,
            recipientMemberId: command.recipientMemberId,
            providerMessageId: command.providerMessageId,
            dispatchedAt: command.now,
          },
        };
        if (!command.then) return [dispatched];
        return [dispatched, ...decideOutcome(command.then, chatDecider.evolve(state, dispatched))];
      }
      case 'RecordOutcome':
        return decideOutcome(command, state);
    }
  },
};

/** The delivery as the chat's stream tells it (workers decide on this, never on a read model). */
export function deliveryOf(state: ChatState, messageId: number, memberId: number): DeliveryState | undefined {
  return state.deliveries[deliveryKey(messageId, memberId)];
}
