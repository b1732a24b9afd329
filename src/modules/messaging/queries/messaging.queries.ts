import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import { Brackets, DataSource } from 'typeorm';
import { queryPrepared } from '../../../core/database/prepared';
import { NotFoundError } from '../../../core/http/domain-errors';
import { applyListFilters, PageRequest, Paginated, paginated } from '../../../core/http/pagination';
import { withVersion } from '../../../core/http/preconditions';
import { GetMemberContactsQuery, MemberContact } from '../../identity';
import type { Channel, MessageSent } from '../domain/chat.events';
import {
  assertMaySeeChat,
  Caller,
  chatVisibility,
  inboxSelf,
  mayUseInbox,
} from '../domain/messaging-access.policy';
import type {
  ChatListResponse,
  ChatResponse,
  InboxResponse,
  MessageResponse,
  PhoneNumberResponse,
} from '../http/chat.responses';
import {
  ChatEntity,
  ChatMessageEntity,
  InboxEntity,
  MessageDeliveryEntity,
  PhoneNumberEntity,
} from '../projections/messaging.entities';

export interface ChatFilters {
  channel?: Channel;
  memberId?: number;
  workflowId?: number;
  paused?: boolean;
  needsResponse?: boolean;
}

export class ListChatsQuery {
  constructor(
    readonly workspaceId: string,
    readonly filters: ChatFilters,
    readonly caller: Caller,
    readonly page: PageRequest,
  ) {}
}

export class GetChatQuery {
  constructor(
    readonly workspaceId: string,
    readonly chatId: number,
    readonly caller: Caller,
  ) {}
}

export class ListMessagesQuery {
  constructor(
    readonly workspaceId: string,
    readonly chatId: number,
    readonly caller: Caller,
    readonly page: PageRequest,
  ) {}
}

export class GetMessageQuery {
  constructor(
    readonly workspaceId: string,
    readonly chatId: number,
    readonly messageId: number,
    readonly caller: Caller,
  ) {}
}

export class ListPhoneNumbersQuery {
  constructor(
    readonly workspaceId: string,
    readonly page: PageRequest,
  ) {}
}

export class GetPhoneNumberQuery {
  constructor(
    readonly workspaceId: string,
    readonly phoneNumberId: number,
  ) {}
}

export class ListInboxesQuery {
  constructor(
    readonly workspaceId: string,
    readonly caller: Caller,
    readonly page: PageRequest,
  ) {}
}

export class GetInboxQuery {
  constructor(
    readonly workspaceId: string,
    readonly inboxId: number,
    readonly caller: Caller,
  ) {}
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

async function names(
  queries: QueryBus,
  workspaceId: string,
  ids: number[],
): Promise<Map<number, string | null>> {
  const contacts = await queries.execute<GetMemberContactsQuery, MemberContact[]>(
    new GetMemberContactsQuery(workspaceId, ids),
  );
  return new Map(contacts.map((c) => [c.id, c.name]));
}

function chatResponse(row: ChatEntity, nameOf: Map<number, string | null>): ChatResponse {
  return {
    id: row.id,
    uuid: row.uuid,
    channel: row.channel,
    workflowId: row.workflowId,
    assignmentId: row.assignmentId,
    memberId: row.memberId,
    phoneNumberId: row.phoneNumberId,
    assistantKind: row.assistantKind,
    assistantMemberId: row.assistantMemberId,
    title: row.title,
    paused: row.paused,
    needsResponse: row.needsResponse,
    participants: row.participants.map((p) => ({ ...p, name: nameOf.get(p.memberId) ?? null })),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** Chats of a workspace, newest first; without chats:read only those the caller takes part in. */
@QueryHandler(ListChatsQuery)
export class ListChatsHandler implements IQueryHandler<ListChatsQuery, ChatListResponse> {
  constructor(
    private readonly db: DataSource,
    private readonly queries: QueryBus,
  ) {}

  async execute(q: ListChatsQuery): Promise<Paginated<ChatResponse>> {
    const qb = this.db
      .getRepository(ChatEntity)
      .createQueryBuilder('c')
      .where('c.workspace_id = :ws', { ws: q.workspaceId });
    const visibility = chatVisibility(q.caller);
    if (!('all' in visibility)) {
      const me = visibility.memberId ?? -1;
      qb.andWhere(
        new Brackets((w) =>
          w.where(':me = ANY(c.participant_ids)', { me }).orWhere('c.assistant_member_id = :me', { me }),
        ),
      );
    }
    const f = q.filters;
    if (f.channel) qb.andWhere('c.channel = :channel', { channel: f.channel });
    if (f.memberId !== undefined) qb.andWhere('c.member_id = :memberId', { memberId: f.memberId });
    if (f.workflowId !== undefined) qb.andWhere('c.workflow_id = :wf', { wf: f.workflowId });
    if (f.paused !== undefined) qb.andWhere('c.paused = :paused', { paused: f.paused });
    if (f.needsResponse !== undefined) qb.andWhere('c.needs_response = :nr', { nr: f.needsResponse });
    const [rows, total] = await applyListFilters(qb, q.page, { search: ['c.title'], time: 'c.created_at' })
      .orderBy('c.id', 'DESC')
      .skip(q.page.offset)
      .take(q.page.pageSize)
      .getManyAndCount();
    const nameOf = await names(
      this.queries,
      q.workspaceId,
      rows.flatMap((r) => r.participantIds),
    );
    return paginated(
      rows.map((r) => chatResponse(r, nameOf)),
      total,
      q.page,
    );
  }
}

@QueryHandler(GetChatQuery)
export class GetChatHandler implements IQueryHandler<GetChatQuery, ChatResponse> {
  constructor(
    private readonly db: DataSource,
    private readonly queries: QueryBus,
  ) {}

  async execute(q: GetChatQuery): Promise<ChatResponse> {
    const row = await this.db
      .getRepository(ChatEntity)
      .findOneBy({ id: q.chatId, workspaceId: q.workspaceId });
    if (!row) throw new NotFoundError('Chat not found');
    assertMaySeeChat(q.caller, row);
    return withVersion(
      chatResponse(row, await names(this.queries, q.workspaceId, row.participantIds)),
      row.version,
    );
  }
}

const dateOf = (v: unknown): Date | null => (typeof v === 'string' ? new Date(v) : null);

/** A chat_messages row as to_jsonb writes it (snake_case keys, times as text). */
function messageOf(j: Record<string, unknown>): ChatMessageEntity {
  return {
    id: j.id as number,
    chatId: j.chat_id as number,
    workspaceId: j.workspace_id as string,
    direction: j.direction as ChatMessageEntity['direction'],
    role: j.role as ChatMessageEntity['role'],
    content: j.content as string,
    subject: (j.subject as string | null) ?? null,
    senderMemberId: (j.sender_member_id as number | null) ?? null,
    encoding: (j.encoding as string | null) ?? null,
    segments: (j.segments as number | null) ?? null,
    status: j.status as ChatMessageEntity['status'],
    failureReason: (j.failure_reason as string | null) ?? null,
    providerMessageId: (j.provider_message_id as string | null) ?? null,
    createdAt: dateOf(j.created_at)!,
    deliveredAt: dateOf(j.delivered_at),
    scheduledFor: dateOf(j.scheduled_for),
  };
}

/** A message_deliveries row as to_jsonb writes it. */
function deliveryOf(j: Record<string, unknown>): MessageDeliveryEntity {
  return {
    messageId: j.message_id as number,
    memberId: j.member_id as number,
    chatId: j.chat_id as number,
    workspaceId: j.workspace_id as string,
    status: j.status as MessageDeliveryEntity['status'],
    failureReason: (j.failure_reason as string | null) ?? null,
    providerMessageId: (j.provider_message_id as string | null) ?? null,
    updatedAt: dateOf(j.updated_at)!,
    deliveredAt: dateOf(j.delivered_at),
    scheduledFor: dateOf(j.scheduled_for),
  };
}

function messageResponse(m: ChatMessageEntity, deliveries: MessageDeliveryEntity[]): MessageResponse {
  return {
    id: m.id,
    chatId: m.chatId,
    direction: m.direction,
    role: m.role,
    content: m.content,
    subject: m.subject,
    status: m.status,
    failureReason: m.failureReason,
    encoding: m.encoding,
    segments: m.segments,
    deliveries: deliveries
      .filter((d) => d.messageId === m.id)
      .map((d) => ({
        memberId: d.memberId,
        status: d.status,
        failureReason: d.failureReason,
        providerMessageId: d.providerMessageId,
        deliveredAt: iso(d.deliveredAt),
        scheduledFor: iso(d.scheduledFor),
      })),
    createdAt: m.createdAt.toISOString(),
    deliveredAt: iso(m.deliveredAt),
    scheduledFor: iso(m.scheduledFor),
  };
}

/**
 * A message as its MessageSent leaves it in the read model (ChatsProjection: an outbound
 * row, status `sent`, one `sent` delivery per recipient, `scheduledFor` the latest held
 * one), in GetMessageQuery's shape: the answer of the send that wrote it.
 */
export function sentMessageResponse(d: MessageSent['data']): MessageResponse {
  const at = new Date(d.sentAt);
  const held = Object.values(d.scheduledFor ?? {}).sort();
  const deliveries = [...new Set(d.recipientMemberIds)]
    .sort((a, b) => a - b)
    .map((memberId): MessageDeliveryEntity => ({
      messageId: d.messageId,
      memberId,
      chatId: d.chatId,
      workspaceId: d.workspaceId,
      status: 'sent',
      failureReason: null,
      providerMessageId: null,
      updatedAt: at,
      deliveredAt: null,
      scheduledFor: dateOf(d.scheduledFor?.[String(memberId)]),
    }));
  return messageResponse(
    {
      id: d.messageId,
      chatId: d.chatId,
      workspaceId: d.workspaceId,
      direction: 'outbound',
      role: d.role,
      content: d.content,
      subject: null,
      senderMemberId: d.senderMemberId,
      encoding: d.encoding,
      segments: d.segments,
      status: 'sent',
      failureReason: null,
      providerMessageId: null,
      createdAt: at,
      deliveredAt: null,
      scheduledFor: dateOf(held.at(-1)),
    },
    deliveries,
  );
}

async function visibleChat(
  db: DataSource,
  workspaceId: string,
  chatId: number,
  caller: Caller,
): Promise<void> {
  const chat = await db.getRepository(ChatEntity).findOneBy({ id: chatId, workspaceId });
  if (!chat) throw new NotFoundError('Chat not found');
  assertMaySeeChat(caller, chat);
}

async function deliveriesOf(db: DataSource, messageIds: number[]): Promise<MessageDeliveryEntity[]> {
  if (!messageIds.length) return [];
  return db
    .getRepository(MessageDeliveryEntity)
    .createQueryBuilder('d')
    .where('d.message_id = ANY(:ids)', { ids: messageIds })
    .orderBy('d.member_id', 'ASC')
    .getMany();
}

/** A chat's messages, oldest first, each with its per-recipient deliveries. */
@QueryHandler(ListMessagesQuery)
export class ListMessagesHandler implements IQueryHandler<ListMessagesQuery, Paginated<MessageResponse>> {
  constructor(private readonly db: DataSource) {}

  async execute(q: ListMessagesQuery): Promise<Paginated<MessageResponse>> {
    await visibleChat(this.db, q.workspaceId, q.chatId, q.caller);
    const [rows, total] = await applyListFilters(
      this.db
        .getRepository(ChatMessageEntity)
        .createQueryBuilder('m')
        .where('m.chat_id = :chatId AND m.workspace_id = :ws', { chatId: q.chatId, ws: q.workspaceId }),
      q.page,
      { search: ['m.content'], time: 'm.created_at' },
    )
      .orderBy('m.id', 'ASC')
      .skip(q.page.offset)
      .take(q.page.pageSize)
      .getManyAndCount();
    const deliveries = await deliveriesOf(
      this.db,
      rows.map((r) => r.id),
    );
    return paginated(
      rows.map((r) => messageResponse(r, deliveries)),
      total,
      q.page,
    );
  }
}

@QueryHandler(GetMessageQuery)
export class GetMessageHandler implements IQueryHandler<GetMessageQuery, MessageResponse> {
  constructor(private readonly db: DataSource) {}

  async execute(q: GetMessageQuery): Promise<MessageResponse> {
    // One prepared round trip (every send answers with it): the chat's people for the
    // visibility rule, the message, its deliveries.
    const [r] = await queryPrepared<{
      member_id: number;
      assistant_member_id: number | null;
      participants: { memberId: number }[];
      message: Record<string, unknown> | null;
      deliveries: Record<string, unknown>[] | null;
    }>(
      this.db,
      `SELECT c.member_id, c.assistant_member_id, c.participants,
              (SELECT to_jsonb(m) FROM chat_messages m
                WHERE m.id = $3 AND m.chat_id = c.id AND m.workspace_id = c.workspace_id) AS message,
              (SELECT jsonb_agg(to_jsonb(d) ORDER BY d.member_id) FROM message_deliveries d
                WHERE d.message_id = $3 AND d.chat_id = c.id) AS deliveries
       FROM chats c WHERE c.id = $1 AND c.workspace_id = $2`,
      [q.chatId, q.workspaceId, q.messageId],
    );
    if (!r) throw new NotFoundError('Chat not found');
    assertMaySeeChat(q.caller, {
      memberId: r.member_id,
      assistantMemberId: r.assistant_member_id,
      participants: r.participants,
    });
    if (!r.message) throw new NotFoundError('Message not found');
    return messageResponse(
      messageOf(r.message),
      (r.deliveries ?? []).map((d) => deliveryOf(d)),
    );
  }
}

function phoneNumberResponse(r: PhoneNumberEntity): PhoneNumberResponse {
  return {
    id: r.id,
    number: r.number,
    name: r.name,
    signupRoleId: r.signupRoleId,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

@QueryHandler(ListPhoneNumbersQuery)
export class ListPhoneNumbersHandler implements IQueryHandler<ListPhoneNumbersQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: ListPhoneNumbersQuery): Promise<Paginated<PhoneNumberResponse>> {
    const [rows, total] = await applyListFilters(
      this.db
        .getRepository(PhoneNumberEntity)
        .createQueryBuilder('p')
        .where('p.workspace_id = :ws', { ws: q.workspaceId }),
      q.page,
      { search: ['p.number', 'p.name'], time: 'p.created_at' },
    )
      .orderBy('p.id', 'ASC')
      .skip(q.page.offset)
      .take(q.page.pageSize)
      .getManyAndCount();
    return paginated(rows.map(phoneNumberResponse), total, q.page);
  }
}

@QueryHandler(GetPhoneNumberQuery)
export class GetPhoneNumberHandler implements IQueryHandler<GetPhoneNumberQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: GetPhoneNumberQuery): Promise<PhoneNumberResponse> {
    const row = await this.db
      .getRepository(PhoneNumberEntity)
      .findOneBy({ id: q.phoneNumberId, workspaceId: q.workspaceId });
    if (!row) throw new NotFoundError('Phone number not found');
    return withVersion(phoneNumberResponse(row), row.version);
  }
}

function inboxResponse(r: InboxEntity): InboxResponse {
  return {
    id: r.id,
    email: r.email,
    name: r.name,
    ownerMemberId: r.ownerMemberId,
    memberIds: r.grantedMemberIds,
    createdAt: r.createdAt.toISOString(),
  };
}

/** Inboxes: all with inboxes:read, else those the caller owns or was granted. */
@QueryHandler(ListInboxesQuery)
export class ListInboxesHandler implements IQueryHandler<ListInboxesQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: ListInboxesQuery): Promise<Paginated<InboxResponse>> {
    const qb = this.db
      .getRepository(InboxEntity)
      .createQueryBuilder('i')
      .where('i.workspace_id = :ws', { ws: q.workspaceId });
    if (!mayUseInbox(q.caller, { ownerMemberId: null, grantedMemberIds: [] })) {
      const me = inboxSelf(q.caller) ?? -1;
      qb.andWhere('(i.owner_member_id = :me OR :me = ANY(i.granted_member_ids))', { me });
    }
    const [rows, total] = await applyListFilters(qb, q.page, {
      search: ['i.email', 'i.name'],
      time: 'i.created_at',
    })
      .orderBy('i.id', 'ASC')
      .skip(q.page.offset)
      .take(q.page.pageSize)
      .getManyAndCount();
    return paginated(rows.map(inboxResponse), total, q.page);
  }
}

@QueryHandler(GetInboxQuery)
export class GetInboxHandler implements IQueryHandler<GetInboxQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: GetInboxQuery): Promise<InboxResponse> {
    const row = await this.db
      .getRepository(InboxEntity)
      .findOneBy({ id: q.inboxId, workspaceId: q.workspaceId });
    // An inbox the caller may not use reads as absent.
    if (!row || !mayUseInbox(q.caller, row)) throw new NotFoundError('Inbox not found');
    return inboxResponse(row);
  }
}
