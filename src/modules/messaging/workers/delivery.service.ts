import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { fold } from '../../../core/cqrs/decider';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { EVENT_STORE, EventStore, StoredEvent } from '../../../core/event-store/event-store.port';
import { memberStream } from '../../identity';
import type { MemberContact, MemberEvent } from '../../identity';
import { ChatLookup } from '../commands/chat-lookup.service';
import { PhoneNumberFacts } from '../commands/phone-number-facts.service';
import {
  ChatCommand,
  chatDecider,
  ChatState,
  deliveryKey,
  deliveryOf,
  RecordOutcomeCommand,
} from '../domain/chat';
import { ChatEvent, chatStream, FailureReason, MessageSent } from '../domain/chat.events';
import { EMAIL_SENDER, EmailSender } from '../providers/email-sender';
import { PermanentSendError, SMS_PROVIDER, SmsProvider } from '../providers/sms-provider.port';
import { WebChatStreams } from '../http/web-chat-streams';
import { InboxEntity } from '../projections/messaging.entities';
import { DeliveryJob, SMS_QUEUE } from './delivery-job';

/** An SMS send under way in this process, from the provider call to the record of its id. */
interface Dispatching {
  chatId: number;
  /** Resolved once the provider's id is recorded, or the send ended without. */
  recorded: Promise<void>;
  /** A status callback's outcome that came before the record, to append with it. */
  outcome?: RecordOutcomeCommand;
  /** The record is being decided: no outcome joins it any more. */
  sealed: boolean;
  /** The record's append carried `outcome`. */
  included: boolean;
}

export type DeliveryOutcome =
  'already-done' | 'already-dispatched' | 'failed' | 'dispatched' | 'delivered' | 'queued';

/** Test-only crash point (NODE_ENV=test): exit right after the provider id is recorded. */
const EXIT_AFTER_DISPATCH = 'MESSAGING_TEST_EXIT_AFTER_DISPATCH';

/**
 * Sends one delivery through the provider and records what happened on the chat's
 * stream: the provider's id (MessageDispatched) as soon as it answers, then
 * MessageDelivered or MessageFailed. Decided on the chat's own events, so a retried
 * job finds a recorded provider id and never sends again, and an answer that came
 * already (a status callback) is never moved back.
 */
@Injectable()
export class DeliveryService {
  private readonly logger = new Logger('MessageDelivery');
  /** This process's SMS sends between the provider call and the record of its id, by delivery. */
  private readonly dispatching = new Map<string, Dispatching>();
  /** The chat as deliver() read it, for the job's first decide(); dropped once used. */
  private readonly loaded = new WeakMap<DeliveryJob, { state: ChatState; revision: bigint | undefined }>();

  constructor(
    private readonly repo: EventSourcedRepository,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly lookup: ChatLookup,
    private readonly db: DataSource,
    @Inject(SMS_PROVIDER) private readonly sms: SmsProvider,
    @Inject(EMAIL_SENDER) private readonly email: EmailSender,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly webChat: WebChatStreams,
    private readonly numbers: PhoneNumberFacts,
  ) {}

  /**
   * `queue`: the job's queue. An SMS delivery reads its recipient's stream (consent, address)
   * with the chat's, in one statement where the store can (`readStreams`).
   */
  async deliver(job: DeliveryJob, queue?: string): Promise<DeliveryOutcome> {
    const [stored, member] = await this.readChat(job, queue === SMS_QUEUE);
    const events = stored.map((e) => ({ type: e.type, data: e.data }) as ChatEvent);
    const state = fold(chatDecider, events);
    // The first decision (dispatch, or a refusal) is taken on this read, not a second one.
    this.loaded.set(job, { state, revision: stored.length ? stored[stored.length - 1].revision : undefined });
    const delivery = deliveryOf(state, job.messageId, job.recipientMemberId);
    const sent = events.find(
      (e): e is MessageSent => e.type === 'MessageSent' && e.data.messageId === job.messageId,
    );
    if (!state.chat || !delivery || !sent)
      throw new Error(`Delivery ${job.messageId}/${job.recipientMemberId} not found`);
    if (delivery.status !== 'sent') return 'already-done';
    if (delivery.providerMessageId !== null) return 'already-dispatched';

    switch (sent.data.channel) {
      case 'phone-sms':
        return this.deliverSms(job, sent.data, state.chat.phoneNumberId, member);
      case 'email': {
        const [contact] = await this.lookup.contacts(job.workspaceId, [job.recipientMemberId]);
        return this.deliverEmail(job, sent.data, contact, state.chat.title);
      }
      case 'web-chat':
        // Delivered once written to a stream the member holds open (http/web-chat-streams.ts).
        await this.webChat.publish({ ...job, causationId: job.causationId });
        return 'queued';
      case 'phone-voice':
        return 'queued';
    }
  }

  /**
   * The chat's stream, and with `recipient` the recipient member's stream too, read in one
   * statement (one snapshot of both) where the store can.
   */
  private async readChat(
    job: DeliveryJob,
    recipient: boolean,
  ): Promise<[StoredEvent[], StoredEvent[] | undefined]> {
    const chat = chatStream(job.chatId);
    if (!recipient) return [await this.store.readStream(chat), undefined];
    const member = memberStream(job.recipientMemberId);
    const [chatEvents, memberEvents] = this.store.readStreams
      ? await this.store.readStreams([chat, member])
      : await Promise.all([this.store.readStream(chat), this.store.readStream(member)]);
    return [chatEvents, memberEvents];
  }

  private async deliverSms(
    job: DeliveryJob,
    sent: MessageSent['data'],
    phoneNumberId: number | null,
    member: StoredEvent[] | undefined,
  ): Promise<DeliveryOutcome> {
    // Consent is read from the member's own stream, not from a read model: a STOP (or a
    // PUT turning notifySms off) appended before this send may not be projected yet, and
    // the inbound webhook answers without waiting for its projections. The same read gives
    // the address (the stream is where the members read model takes it from); the sender
    // number comes from this room's read model (through the process's cache). The SMS
    // queue's jobs read the member's stream with the chat's (deliver()); a job of another
    // queue that turns out to be an SMS reads it here.
    const [memberEvents, from] = await Promise.all([
      member ?? this.store.readStream(memberStream(job.recipientMemberId)),
      this.numbers.numberOf(job.workspaceId, phoneNumberId),
    ]);
    const recipient = this.smsRecipient(job.workspaceId, memberEvents);
    // SMS rules: consent first; an opt-out (STOP) holds whatever notifySms says since. A
    // keyword's own reply (the STOP confirmation) goes out regardless.
    if (!sent.keywordReply && recipient.consent !== 'consented') return this.fail(job, recipient.consent);
    if (!recipient.phone || !recipient.active) return this.fail(job, 'no_address');
    if (!from) return this.fail(job, 'no_sender');
    const query = new URLSearchParams({
      chatId: String(job.chatId),
      messageId: String(job.messageId),
      memberId: String(job.recipientMemberId),
    });
    const key = deliveryKey(job.messageId, job.recipientMemberId);
    let recorded!: () => void;
    const dispatching: Dispatching = {
      chatId: job.chatId,
      recorded: new Promise<void>((resolve) => (recorded = resolve)),
      sealed: false,
      included: false,
    };
    this.dispatching.set(key, dispatching);
    try {
      let result;
      try {
        result = await this.sms.send({
          to: recipient.phone,
          from,
          body: sent.content,
          statusCallback: `${this.config.publicBaseUrl}/providers/twilio/sms/status?${query.toString()}`,
        });
      } catch (err) {
        if (err instanceof PermanentSendError) return await this.fail(job, `provider_error:${err.code}`);
        throw err;
      }
      return await this.recordDispatch(
        job,
        result.providerMessageId,
        result.status,
        result.errorCode,
        recorded,
        dispatching,
      );
    } finally {
      this.dispatching.delete(key);
      recorded();
    }
  }

  /**
   * A status callback for a delivery this process is sending: resolves once the provider's
   * id is recorded (at once when no such send is under way), or after `maxWaitMs`; true
   * when that record carried the callback's outcome too. The provider may call back as soon
   * as it answers, and the callback's append would otherwise race the dispatch's on the
   * chat's stream (the loser reading the stream and appending again). A callback that comes
   * before the worker appends (half of them, when the provider calls back at once) has its
   * outcome appended with the dispatch, in one append; on false the caller records it
   * itself, as it would without a send under way (either order leaves the same state).
   */
  async recordWithDispatch(
    callback: { chatId: number; messageId: number; memberId: number; outcome?: RecordOutcomeCommand },
    maxWaitMs = 5000,
  ): Promise<boolean> {
    const pending = this.dispatching.get(deliveryKey(callback.messageId, callback.memberId));
    if (!pending) return false;
    if (!pending.sealed && !pending.outcome && callback.outcome && pending.chatId === callback.chatId)
      pending.outcome = callback.outcome;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      pending.recorded,
      new Promise<void>((resolve) => (timer = setTimeout(resolve, maxWaitMs))),
    ]);
    clearTimeout(timer);
    return pending.included && pending.outcome === callback.outcome;
  }

  /**
   * The member's SMS consent and address as its stream says them now: the last opt-out or
   * opt-in keyword (STOP holds until START, whatever notifySms says since), then notifySms,
   * the phone and the status as the last snapshot has them. Read at the moment of sending,
   * so whatever was appended before it (before this message's MessageSent in particular)
   * is honoured. A member of another workspace has neither consent nor address here.
   */
  private smsRecipient(
    workspaceId: string,
    stream: StoredEvent[],
  ): { consent: 'consented' | 'opted_out' | 'no_consent'; phone: string | null; active: boolean } {
    const events = stream as unknown as MemberEvent[];
    let optedOut = false;
    let notifySms = false;
    let inWorkspace = false;
    let phone: string | null = null;
    let active = false;
    for (const e of events) {
      switch (e.type) {
        case 'MemberCreated':
          inWorkspace = e.data.workspaceId === workspaceId;
          notifySms = e.data.notifySms;
          phone = e.data.phone;
          active = true;
          break;
        case 'MemberUpdated':
        case 'MemberArchived':
          notifySms = e.data.member.notifySms;
          phone = e.data.member.phone;
          active = e.data.member.status === 'active';
          break;
        case 'MemberOptedOutOfSms':
          optedOut = true;
          break;
        case 'MemberOptedInToSms':
          optedOut = false;
          break;
      }
    }
    if (!inWorkspace) return { consent: 'no_consent', phone: null, active: false };
    return { consent: optedOut ? 'opted_out' : notifySms ? 'consented' : 'no_consent', phone, active };
  }

  private async deliverEmail(
    job: DeliveryJob,
    sent: MessageSent['data'],
    contact: MemberContact | undefined,
    title: string | null,
  ): Promise<DeliveryOutcome> {
    if (!contact?.email || contact.status !== 'active') return this.fail(job, 'no_address');
    const inbox = await this.db
      .getRepository(InboxEntity)
      .findOne({ where: { workspaceId: job.workspaceId }, order: { id: 'ASC' } });
    const { providerMessageId } = await this.email.send({
      to: contact.email,
      from: inbox?.email ?? this.config.smtpFrom,
      subject: title ?? 'New message',
      text: sent.content,
    });
    // The SMTP server took it: for mail that is as far as delivery can be known.
    return this.recordDispatch(job, providerMessageId, 'delivered');
  }

  private async recordDispatch(
    job: DeliveryJob,
    providerMessageId: string,
    status: 'sent' | 'delivered' | 'failed',
    errorCode?: string,
    onRecorded?: () => void,
    dispatching?: Dispatching,
  ): Promise<DeliveryOutcome> {
    const now = new Date().toISOString();
    // A status callback that came meanwhile (recordWithDispatch) is recorded in the same
    // append, when it reports on this send (its provider id) and the provider's answer left
    // the outcome open; none joins once this decision is taken.
    let then: RecordOutcomeCommand | undefined;
    if (dispatching) {
      dispatching.sealed = true;
      const outcome = dispatching.outcome;
      if (status === 'sent' && outcome && outcome.providerMessageId === providerMessageId) then = outcome;
    }
    const events = await this.decide(job, {
      type: 'RecordDispatch',
      messageId: job.messageId,
      recipientMemberId: job.recipientMemberId,
      providerMessageId,
      now,
      ...(then ? { then } : {}),
    });
    if (dispatching && then)
      dispatching.included = events.some(
        (e) =>
          (e.type === 'MessageDelivered' || e.type === 'MessageFailed') &&
          e.data.messageId === job.messageId &&
          e.data.recipientMemberId === job.recipientMemberId,
      );
    onRecorded?.();
    this.logger.log({
      msg: 'delivery dispatched',
      chatId: job.chatId,
      messageId: job.messageId,
      providerMessageId,
    });
    if (this.config.nodeEnv === 'test' && process.env[EXIT_AFTER_DISPATCH] === '1') process.exit(1);
    if (status === 'sent') return 'dispatched';
    await this.decide(job, {
      type: 'RecordOutcome',
      messageId: job.messageId,
      recipientMemberId: job.recipientMemberId,
      outcome: status,
      reason: status === 'failed' ? `provider_error:${errorCode ?? 'unknown'}` : undefined,
      providerMessageId,
      now,
    });
    return status;
  }

  private async fail(job: DeliveryJob, reason: FailureReason): Promise<DeliveryOutcome> {
    await this.decide(job, {
      type: 'RecordOutcome',
      messageId: job.messageId,
      recipientMemberId: job.recipientMemberId,
      outcome: 'failed',
      reason,
      now: new Date().toISOString(),
    });
    return 'failed';
  }

  private async decide(job: DeliveryJob, command: ChatCommand): Promise<ChatEvent[]> {
    const loaded = this.loaded.get(job);
    this.loaded.delete(job);
    const { state, events, append } = await this.repo.handle({
      streamName: chatStream(job.chatId),
      workspaceId: job.workspaceId,
      decider: chatDecider,
      command,
      loaded,
      maxRetries: 10,
    });
    // A following decision of the same job (the outcome after the dispatch) starts from here.
    if (append) this.loaded.set(job, { state, revision: append.nextExpectedRevision });
    return events;
  }
}
