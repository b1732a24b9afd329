import { Inject, Injectable } from '@nestjs/common';
import { Claims, CLAIMS, ClaimTakenError } from '../../../core/claims/claims';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { simpleParser } from 'mailparser';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { ValidationError } from '../../../core/http/domain-errors';
import { nextId } from '../../../core/database/ids';
import { queryPrepared } from '../../../core/database/prepared';
import { storableText } from '../../../core/text/storable-text';
import { ContactMember, FindOrCreateContactMemberCommand, RecordSmsConsentCommand } from '../../identity';
import { GetWorkspaceNamesQuery } from '../../workspaces';
import { chatDecider, ChatCommand, ChatState, RecordOutcomeCommand } from '../domain/chat';
import { Channel, chatStream, MessageReceived } from '../domain/chat.events';
import { inboundChatClaim } from '../domain/inbound-chat-claim';
import { keywordReply, smsKeyword } from '../domain/sms-keywords';
import { smsSegments } from '../domain/sms-segments';
import { outcomeOfStatus } from '../providers/sms-provider.port';
import { InboxEntity } from '../projections/messaging.entities';
import { PhoneNumberFacts } from './phone-number-facts.service';
import { normaliseNumber } from './phone-number.commands';

type ReceivedMessage = Omit<MessageReceived['data'], 'receivedAt' | 'chatId' | 'workspaceId'>;

export interface InboundSms {
  from: string;
  to: string;
  body: string;
  providerMessageId: string;
}

export interface SmsStatusCallback {
  chatId: number;
  messageId: number;
  memberId: number;
  providerMessageId: string;
  status: string;
  errorCode?: string;
}

/** What a status callback records: an outcome (delivered, failed); undefined for anything else (queued, sent). */
export function smsOutcomeCommand(callback: SmsStatusCallback): RecordOutcomeCommand | undefined {
  const outcome = outcomeOfStatus(callback.status);
  if (!outcome) return undefined;
  return {
    type: 'RecordOutcome',
    messageId: callback.messageId,
    recipientMemberId: callback.memberId,
    outcome,
    reason: outcome === 'failed' ? `provider_error:${callback.errorCode || callback.status}` : undefined,
    providerMessageId: callback.providerMessageId,
    now: new Date().toISOString(),
  };
}

/**
 * Mail text as PostgreSQL can store it: raw MIME is a Buffer, which the input guard does
 * not read, and a NUL character or half a surrogate pair in a decoded part made the append
 * fail (a 500 the gateway retried forever, the mail never recorded). They carry no text.
 */
function storable(s: string): string {
  return storableText(s, { replacement: '' });
}

/**
 * What providers tell the service: inbound texts (with the SMS keywords), inbound mail,
 * and delivery status callbacks. Each is recorded through the chat's decider, so a
 * provider's retry of the same webhook records nothing twice.
 */
@Injectable()
export class InboundMessages {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly db: DataSource,
    @Inject(CLAIMS) private readonly claims: Claims,
    private readonly numbers: PhoneNumberFacts,
  ) {}

  /** An inbound SMS to one of the service's numbers; false when no workspace has that number. */
  async sms(sms: InboundSms): Promise<boolean> {
    let to: string;
    try {
      to = normaliseNumber(sms.to);
    } catch {
      return false;
    }
    const number = await this.numbers.byNumber(to);
    if (!number) return false;
    const workspaceId = number.workspaceId;
    // A stranger becomes a member with the number's signup role (identity falls back to External).
    const { memberId } = await this.contact(workspaceId, 'phone', sms.from, number.signupRoleId);
    const { chatId, recorded } = await this.receive(workspaceId, 'phone-sms', number.id, {
      memberId,
      content: sms.body,
      source: 'sms',
      providerMessageId: sms.providerMessageId,
    });
    // A provider's retry of a text already recorded: its keyword was handled then.
    if (!recorded) return true;
    const keyword = smsKeyword(sms.body);
    if (!keyword) return true;
    if (keyword.keyword !== 'help')
      await this.commands.execute(
        new RecordSmsConsentCommand(
          workspaceId,
          memberId,
          keyword.keyword === 'opt_out' ? 'opted_out' : 'opted_in',
          keyword.word,
        ),
      );
    const names = await this.queries.execute<GetWorkspaceNamesQuery, Map<string, string>>(
      new GetWorkspaceNamesQuery([workspaceId]),
    );
    const reply = keywordReply(keyword.keyword, names.get(workspaceId) ?? 'This service');
    const segments = smsSegments(reply);
    await this.handle(workspaceId, chatId, {
      type: 'SendMessage',
      workspaceId,
      message: {
        messageId: await nextId(this.db, 'chat_message_id_seq'),
        role: 'system',
        content: reply,
        senderMemberId: null,
        encoding: segments.encoding,
        segments: segments.segments,
        keywordReply: true,
      },
      onlyTo: [memberId],
      now: new Date().toISOString(),
    });
    return true;
  }

  /** A status callback: an outcome moves the delivery forward; anything else (queued, sent) changes nothing. */
  async smsStatus(callback: SmsStatusCallback): Promise<void> {
    const command = smsOutcomeCommand(callback);
    if (!command) return;
    // On the chat as this process's worker left it after recording the provider's id (the
    // callback waited for that record), confirmed by the append's revision check; on the
    // stream as stored when this process holds no state of it or the check fails.
    await this.repo.cachedFirst(async (loader) => {
      const loaded = await loader.load(chatStream(callback.chatId), chatDecider);
      if (!loaded.state.chat) return;
      await this.handle(loaded.state.chat.workspaceId, callback.chatId, command, loaded);
    });
  }

  /**
   * Raw MIME from the mail gateway: recorded in the sender's email chat in the workspace
   * of the first recipient address that is an inbox; false when none is.
   */
  async email(raw: Buffer): Promise<boolean> {
    const mail = await simpleParser(raw);
    const recipients = [mail.to, mail.cc]
      .flatMap((a) => (Array.isArray(a) ? a : a ? [a] : []))
      .flatMap((a) => a.value.map((v) => v.address?.toLowerCase()))
      .filter((a): a is string => !!a);
    if (!recipients.length) return false;
    const inboxes = await this.db
      .getRepository(InboxEntity)
      .createQueryBuilder('i')
      .where('i.email = ANY(:emails)', { emails: recipients })
      .orderBy('i.id', 'ASC')
      .getMany();
    const inbox = inboxes[0];
    if (!inbox) return false;
    const workspaceId = inbox.workspaceId;
    // Mail for an inbox without a sender to file it under is refused (the gateway bounces
    // it), not dropped with a 200.
    const from = mail.from?.value[0]?.address;
    if (!from) throw new ValidationError('From: the mail names no sender address');
    const { memberId } = await this.contact(workspaceId, 'email', from);
    await this.receive(workspaceId, 'email', null, {
      memberId,
      content: storable(mail.text ?? '').trim(),
      subject: mail.subject === undefined ? null : storable(mail.subject),
      source: 'email',
      providerMessageId: storable(mail.messageId ?? '') || `<${randomUUID()}@inbound.invalid>`,
    });
    return true;
  }

  /** The member writing from this address; 400 naming the provider's field (From) when it is none. */
  private async contact(
    workspaceId: string,
    field: 'phone' | 'email',
    value: string,
    signupRoleId: number | null = null,
  ): Promise<ContactMember> {
    try {
      return await this.commands.execute<FindOrCreateContactMemberCommand, ContactMember>(
        new FindOrCreateContactMemberCommand(workspaceId, field, value, signupRoleId),
      );
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      throw new ValidationError(
        field === 'phone' ? 'From: not a phone number in international form' : 'From: not an email address',
      );
    }
  }

  /**
   * Records a member's inbound message in the member's latest chat on this channel (and
   * number). Without one, a new simple AI chat is created with the message in the same
   * append (ChatCreated then MessageReceived: one statement, one commit), its claim taken
   * with it; `recorded` is false for a provider's retry of a message already recorded.
   */
  private async receive(
    workspaceId: string,
    channel: Channel,
    phoneNumberId: number | null,
    message: Omit<ReceivedMessage, 'messageId'>,
  ): Promise<{ chatId: number; recorded: boolean }> {
    const { memberId } = message;
    // The member's latest chat on this channel (and number) and the message's id in one
    // round trip, with a new chat's id when there is none.
    // A named prepared statement (two shapes): parsed and planned once per connection.
    const [ids] = await queryPrepared<{
      existing: number | null;
      message_id: number;
      chat_id: number | null;
    }>(
      this.db,
      `SELECT c.id AS existing, nextval('chat_message_id_seq')::int AS message_id,
         CASE WHEN c.id IS NULL THEN nextval('chat_id_seq')::int END AS chat_id
       FROM (SELECT 1) AS one LEFT JOIN LATERAL (
         SELECT id FROM chats WHERE workspace_id = $1 AND member_id = $2 AND channel = $3
           ${phoneNumberId !== null ? 'AND phone_number_id = $4' : ''}
         ORDER BY id DESC LIMIT 1
       ) AS c ON true`,
      phoneNumberId !== null
        ? [workspaceId, memberId, channel, phoneNumberId]
        : [workspaceId, memberId, channel],
    );
    if (ids.existing !== null)
      return {
        chatId: ids.existing,
        recorded: await this.record(workspaceId, ids.existing, ids.message_id, message),
      };
    const chatId = ids.chat_id as number;
    const now = new Date().toISOString();
    const created = chatDecider.decide(
      {
        type: 'CreateChat',
        chat: {
          chatId,
          uuid: randomUUID(),
          workspaceId,
          channel,
          memberId,
          phoneNumberId,
          assistantKind: 'ai',
          assistantMemberId: null,
          participants: [{ memberId, role: 'user' }],
          title: null,
        },
        now,
      },
      chatDecider.initialState(),
    );
    const received = chatDecider.decide(
      { type: 'ReceiveMessage', workspaceId, message: { ...message, messageId: ids.message_id }, now },
      created.reduce((state, e) => chatDecider.evolve(state, e), chatDecider.initialState()),
    );
    // Two texts at once from a new member (or a chat not projected yet): one chat, claimed
    // with its creation; the loser writes into the winner's.
    const claim = inboundChatClaim(workspaceId, channel, memberId, phoneNumberId);
    try {
      await this.repo.appendClaimed(chatStream(chatId), workspaceId, [...created, ...received], 'no_stream', {
        take: [claim],
      });
      return { chatId, recorded: true };
    } catch (err) {
      if (!(err instanceof ClaimTakenError)) throw err;
      const owner = await this.claims.ownerOf(claim.scope, claim.kind, claim.value);
      const id = /^chat-(\d+)$/.exec(owner ?? '')?.[1];
      if (!id) throw err;
      const ownerId = Number(id);
      return { chatId: ownerId, recorded: await this.record(workspaceId, ownerId, ids.message_id, message) };
    }
  }

  /** A message into an existing chat; false for a provider's retry of one already recorded. */
  private async record(
    workspaceId: string,
    chatId: number,
    messageId: number,
    message: Omit<ReceivedMessage, 'messageId'>,
  ): Promise<boolean> {
    return this.handle(workspaceId, chatId, {
      type: 'ReceiveMessage',
      workspaceId,
      message: { ...message, messageId },
      now: new Date().toISOString(),
    });
  }

  /** True when the command appended anything. */
  private async handle(
    workspaceId: string,
    chatId: number,
    command: ChatCommand,
    loaded?: { state: ChatState; revision: bigint | undefined; cached?: boolean },
  ): Promise<boolean> {
    const { events } = await this.repo.handle({
      streamName: chatStream(chatId),
      workspaceId,
      decider: chatDecider,
      command,
      loaded,
      maxRetries: 10,
    });
    return events.length > 0;
  }
}
