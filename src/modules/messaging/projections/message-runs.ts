import type { StoredEvent } from '../../../core/event-store/event-store.port';
import type { MessageDelivered, MessageDispatched, MessageFailed, MessageSent } from '../domain/chat.events';

/** The events a run folds: a message sent and its deliveries' progress. */
export const RUN_EVENT_TYPES: ReadonlySet<string> = new Set([
  'MessageSent',
  'MessageDispatched',
  'MessageDelivered',
  'MessageFailed',
]);

type RunEvent = MessageSent | MessageDispatched | MessageDelivered | MessageFailed;

/** A message_deliveries row as the run leaves it. */
interface DeliveryRow {
  message_id: number;
  member_id: number;
  chat_id: number;
  workspace_id: string;
  status: string;
  failure_reason: string | null;
  provider_message_id: string | null;
  updated_at: string;
  delivered_at: string | null;
  scheduled_for: string | null;
}

/** A chat_messages row of a message sent in the run, as the run leaves it. */
interface MessageRow {
  id: number;
  chat_id: number;
  workspace_id: string;
  role: string;
  content: string;
  sender_member_id: number | null;
  encoding: string | null;
  segments: number | null;
  status: string;
  failure_reason: string | null;
  provider_message_id: string | null;
  created_at: string;
  delivered_at: string | null;
  scheduled_for: string | null;
}

/**
 * The run's events for a delivery of a message sent before the run, folded into what they
 * do to the stored row in each case the row may be in: still `sent` (`s_*`: every event
 * applies; null means the column is left as stored), or already decided (`n_*`: only a
 * dispatch's provider id and time apply, an outcome changes nothing).
 */
interface EarlierDelivery {
  message_id: number;
  member_id: number;
  s_status: string;
  s_decided: boolean;
  s_reason: string | null;
  s_provider_message_id: string | null;
  s_updated_at: string | null;
  s_delivered_at: string | null;
  n_provider_message_id: string | null;
  n_updated_at: string | null;
}

interface ChatChange {
  id: number;
  sent: number;
  /** needs_response survives only system messages (keyword replies). */
  keep: boolean;
  updated_at: string | null;
  revision: string;
}

/** A message's status from its deliveries, as ChatsProjection's summary statement computes it. */
function summaryOf(
  deliveries: Iterable<DeliveryRow>,
): Pick<MessageRow, 'status' | 'failure_reason' | 'provider_message_id' | 'delivered_at'> {
  const rows = [...deliveries].sort((a, b) => a.member_id - b.member_id);
  const status = rows.some((d) => d.status === 'sent')
    ? 'sent'
    : rows.some((d) => d.status === 'delivered')
      ? 'delivered'
      : 'failed';
  const failed = rows.find((d) => d.status === 'failed');
  const deliveredAt = rows
    .map((d) => d.delivered_at)
    .filter((at): at is string => at !== null)
    .sort((a, b) => Date.parse(a) - Date.parse(b))
    .pop();
  return {
    status,
    failure_reason: status === 'failed' ? (failed?.failure_reason ?? null) : null,
    provider_message_id: rows.find((d) => d.provider_message_id !== null)?.provider_message_id ?? null,
    delivered_at: status === 'delivered' ? (deliveredAt ?? null) : null,
  };
}

/**
 * A run of MessageSent, MessageDispatched, MessageDelivered and MessageFailed events of one
 * projection batch, folded into the rows they leave, so that ChatsProjection writes the run
 * in two statements at most instead of one or two per event. It must leave exactly what the
 * events applied one by one leave (ChatsProjection.handle):
 *
 * - a message sent in the run is inserted as its later events leave it (its deliveries are
 *   all known here; its status is summed up as of its last outcome event, as `handle` does
 *   after each one);
 * - a delivery of a message sent earlier is updated in one statement, in whichever state
 *   the stored row is (see EarlierDelivery); its message is summed up after, by a second
 *   statement. A dispatch of such a message after an outcome of it in the run would change
 *   what that summary sees: `accepts` refuses it, and the run ends before it;
 * - each chat's row once: the messages sent (version, updated_at, needs_response) and the
 *   revision of its last event.
 */
export class MessageRun {
  readonly events: StoredEvent[] = [];
  private readonly sent = new Map<number, { row: MessageRow; deliveries: Map<number, DeliveryRow> }>();
  private readonly earlier = new Map<string, EarlierDelivery>();
  /** Messages sent before the run that an outcome event of the run must sum up again. */
  private readonly summarise = new Set<number>();
  private readonly chats = new Map<number, ChatChange>();

  /** Whether `stored` can join the run (false: the run must be written first). */
  accepts(stored: StoredEvent): boolean {
    if (!RUN_EVENT_TYPES.has(stored.type)) return false;
    const event = stored as unknown as RunEvent;
    return !(event.type === 'MessageDispatched' && this.summarise.has(event.data.messageId));
  }

  add(stored: StoredEvent): void {
    const event = { type: stored.type, data: stored.data } as RunEvent;
    this.events.push(stored);
    const chat = this.chats.get(event.data.chatId) ?? {
      id: event.data.chatId,
      sent: 0,
      keep: true,
      updated_at: null,
      revision: '',
    };
    chat.revision = stored.revision.toString();
    this.chats.set(chat.id, chat);
    if (event.type === 'MessageSent') {
      const d = event.data;
      chat.sent++;
      chat.keep = chat.keep && d.role === 'system';
      chat.updated_at = d.sentAt;
      const times = Object.values(d.scheduledFor ?? {}).sort();
      const deliveries = new Map<number, DeliveryRow>();
      for (const memberId of d.recipientMemberIds)
        if (!deliveries.has(memberId))
          deliveries.set(memberId, {
            message_id: d.messageId,
            member_id: memberId,
            chat_id: d.chatId,
            workspace_id: d.workspaceId,
            status: 'sent',
            failure_reason: null,
            provider_message_id: null,
            updated_at: d.sentAt,
            delivered_at: null,
            scheduled_for: d.scheduledFor?.[String(memberId)] ?? null,
          });
      if (!this.sent.has(d.messageId))
        this.sent.set(d.messageId, {
          row: {
            id: d.messageId,
            chat_id: d.chatId,
            workspace_id: d.workspaceId,
            role: d.role,
            content: d.content,
            sender_member_id: d.senderMemberId,
            encoding: d.encoding,
            segments: d.segments,
            status: 'sent',
            failure_reason: null,
            provider_message_id: null,
            created_at: d.sentAt,
            delivered_at: null,
            scheduled_for: times.length ? times[times.length - 1] : null,
          },
          deliveries,
        });
      return;
    }
    const d = event.data;
    const own = this.sent.get(d.messageId);
    if (own) {
      const row = own.deliveries.get(d.recipientMemberId);
      if (event.type === 'MessageDispatched') {
        if (row) {
          row.provider_message_id = event.data.providerMessageId;
          row.updated_at = event.data.dispatchedAt;
        }
        return;
      }
      const at = event.type === 'MessageDelivered' ? event.data.deliveredAt : event.data.failedAt;
      if (row && row.status === 'sent') {
        row.status = event.type === 'MessageDelivered' ? 'delivered' : 'failed';
        row.failure_reason = event.type === 'MessageFailed' ? event.data.reason : null;
        row.provider_message_id = d.providerMessageId ?? row.provider_message_id;
        row.updated_at = at;
        row.delivered_at = event.type === 'MessageDelivered' ? at : null;
      }
      Object.assign(own.row, summaryOf(own.deliveries.values()));
      return;
    }
    const key = `${d.messageId}:${d.recipientMemberId}`;
    const fold = this.earlier.get(key) ?? {
      message_id: d.messageId,
      member_id: d.recipientMemberId,
      s_status: 'sent',
      s_decided: false,
      s_reason: null,
      s_provider_message_id: null,
      s_updated_at: null,
      s_delivered_at: null,
      n_provider_message_id: null,
      n_updated_at: null,
    };
    this.earlier.set(key, fold);
    if (event.type === 'MessageDispatched') {
      fold.s_provider_message_id = fold.n_provider_message_id = event.data.providerMessageId;
      fold.s_updated_at = fold.n_updated_at = event.data.dispatchedAt;
      return;
    }
    const at = event.type === 'MessageDelivered' ? event.data.deliveredAt : event.data.failedAt;
    if (!fold.s_decided) {
      fold.s_decided = true;
      fold.s_status = event.type === 'MessageDelivered' ? 'delivered' : 'failed';
      fold.s_reason = event.type === 'MessageFailed' ? event.data.reason : null;
      fold.s_provider_message_id = d.providerMessageId ?? fold.s_provider_message_id;
      fold.s_updated_at = at;
      fold.s_delivered_at = event.type === 'MessageDelivered' ? at : null;
    }
    this.summarise.add(d.messageId);
  }

  /** The run's rows, as the JSON parameters of ChatsProjection's statements. */
  rows(): {
    messages: string;
    deliveries: string;
    earlier: string;
    chats: string;
    earlierMessageIds: number[];
    chatIds: number[];
    summarise: number[];
  } {
    const sent = [...this.sent.values()];
    const earlier = [...this.earlier.values()];
    return {
      messages: JSON.stringify(sent.map((m) => m.row)),
      deliveries: JSON.stringify(sent.flatMap((m) => [...m.deliveries.values()])),
      earlier: JSON.stringify(earlier),
      chats: JSON.stringify([...this.chats.values()]),
      earlierMessageIds: [...new Set(earlier.map((d) => d.message_id))],
      chatIds: [...this.chats.keys()],
      summarise: [...this.summarise],
    };
  }
}
