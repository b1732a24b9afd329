import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { CachedLoader, EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { nextId } from '../../../core/database/ids';
import { ValidationError } from '../../../core/http/domain-errors';
import { ChatState, chatDecider, recipientsOf } from '../domain/chat';
import { quietHoursEnd, REPLY_WINDOW_MS } from '../domain/quiet-hours';
import { chatStream, MessageSent } from '../domain/chat.events';
import { assertMayPostAsMember, assertMaySendAsAssistant, Caller } from '../domain/messaging-access.policy';
import { smsSegments } from '../domain/sms-segments';
import type { MessageResponse } from '../http/chat.responses';
import { sentMessageResponse } from '../queries/messaging.queries';
import { ChatLookup } from './chat-lookup.service';
import { WorkspaceSendSettings } from './workspace-settings.service';

export class PostUserMessageCommand {
  constructor(
    readonly workspaceId: string,
    readonly chatId: number,
    readonly content: string,
    readonly caller: Caller,
  ) {}
}

export class SendAssistantMessageCommand {
  constructor(
    readonly workspaceId: string,
    readonly chatId: number,
    readonly message: string,
    readonly caller: Caller,
    /**
     * The chat's stream as the caller just read it (the assistant's reply job, which
     * checked on it that the chat is still `ai`, not paused and unanswered): the send
     * decides on it without reading the stream again, and appends only if the stream is
     * still at that revision. Otherwise it writes nothing and throws
     * WrongExpectedRevisionError, for the caller to read and check again. Without it the
     * send reads the stream itself and re-decides lost races.
     */
    readonly asRead?: readonly StoredEvent[],
    /**
     * Filled with the message as the send wrote it (GetMessageQuery's shape), for a caller
     * that answers with it instead of reading it back: the send route, whose response still
     * waits until the projections have passed the append (read-your-writes). The caller
     * passed the chat's visibility rule to send at all (assertMaySendAsAssistant).
     */
    readonly written?: { response?: MessageResponse },
    /**
     * The message's id, taken by the caller beforehand with reserveChatMessageId (the
     * reply job takes it while the model answers, so the send makes no round trip for
     * it). An id a send does not use is burned, as any id of a failed append is.
     */
    readonly messageId?: Promise<number>,
  ) {}
}

/** A message id for a later SendAssistantMessageCommand (its `messageId`). */
export function reserveChatMessageId(db: DataSource): Promise<number> {
  return nextId(db, 'chat_message_id_seq');
}

/**
 * A user message into the chat: the member's own, or an operator's on their behalf.
 * Recorded as received from the chat's member; on an `ai` chat it awaits a response.
 */
@CommandHandler(PostUserMessageCommand)
export class PostUserMessageHandler implements ICommandHandler<PostUserMessageCommand, number> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly lookup: ChatLookup,
    private readonly db: DataSource,
  ) {}

  async execute(cmd: PostUserMessageCommand): Promise<number> {
    if (!cmd.content.trim()) throw new ValidationError('content: must not be blank');
    return this.lookup.cachedFirst((loader) => this.run(cmd, loader));
  }

  private async run(cmd: PostUserMessageCommand, loader: CachedLoader): Promise<number> {
    const loaded = await this.lookup.chat(cmd.workspaceId, cmd.chatId, loader);
    const chat = loaded.state.chat!;
    assertMayPostAsMember(cmd.caller, chat);
    const messageId = await nextId(this.db, 'chat_message_id_seq');
    await this.repo.handle({
      streamName: chatStream(cmd.chatId),
      workspaceId: cmd.workspaceId,
      decider: chatDecider,
      loaded,
      command: {
        type: 'ReceiveMessage',
        workspaceId: cmd.workspaceId,
        message: {
          messageId,
          memberId: chat.memberId,
          content: cmd.content,
          source: 'api',
          providerMessageId: null,
        },
        now: new Date().toISOString(),
      },
    });
    return messageId;
  }
}

/**
 * The assistant's message (or the human operator's, on a `human` chat) to every
 * participant through the chat's channel: one MessageSent, then one delivery job per
 * recipient (EnqueueDeliveriesReactor). An SMS shows its encoding and segments, and one
 * over SMS_SEGMENT_LIMIT segments is refused before anything is written.
 */
@CommandHandler(SendAssistantMessageCommand)
export class SendAssistantMessageHandler implements ICommandHandler<SendAssistantMessageCommand, number> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly lookup: ChatLookup,
    private readonly db: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly settings: WorkspaceSendSettings,
  ) {}

  async execute(cmd: SendAssistantMessageCommand): Promise<number> {
    if (!cmd.message.trim()) throw new ValidationError('message: must not be blank');
    // The reply job's own read of the stream (asRead) is decided on as it is: a stale one
    // fails the append, and the job reads and checks again.
    if (cmd.asRead) return this.run(cmd);
    // On the chat as this process last wrote it when it holds it (its creation, its last
    // message), confirmed by the append's revision check; else, or should the check fail,
    // on the stream as stored, every check below taken again.
    return this.lookup.cachedFirst((loader) => this.run(cmd, loader));
  }

  private async run(cmd: SendAssistantMessageCommand, loader?: CachedLoader): Promise<number> {
    const loaded = cmd.asRead
      ? this.lookup.chatAsRead(cmd.workspaceId, cmd.asRead)
      : await this.lookup.chat(cmd.workspaceId, cmd.chatId, loader);
    const chat = loaded.state.chat!;
    if (chat.chatId !== cmd.chatId) throw new ValidationError('asRead: the stream of another chat');
    assertMaySendAsAssistant(cmd.caller, chat);
    const sms = chat.channel === 'phone-sms' ? smsSegments(cmd.message) : null;
    if (sms && sms.segments > this.config.smsSegmentLimit)
      throw new ValidationError(
        `message: ${sms.segments} SMS segments (${sms.encoding}) exceed the limit of ${this.config.smsSegmentLimit}`,
      );
    const human = chat.assistantKind === 'human';
    const senderMemberId = human ? (cmd.caller.memberId ?? null) : null;
    const now = new Date();
    const scheduledFor = sms
      ? await this.quietHours(cmd.workspaceId, loaded.state, recipientsOf(chat, senderMemberId), now)
      : undefined;
    const messageId = await (cmd.messageId ?? reserveChatMessageId(this.db));
    const { events } = await this.repo.handle({
      streamName: chatStream(cmd.chatId),
      workspaceId: cmd.workspaceId,
      decider: chatDecider,
      loaded,
      command: {
        type: 'SendMessage',
        workspaceId: cmd.workspaceId,
        message: {
          messageId,
          role: human ? 'operator' : 'assistant',
          content: cmd.message,
          senderMemberId,
          encoding: sms?.encoding ?? null,
          segments: sms?.segments ?? null,
          keywordReply: false,
          ...(scheduledFor ? { scheduledFor } : {}),
        },
        now: now.toISOString(),
      },
      // Decided on what the caller checked, or not at all: a lost race is the caller's to re-check.
      ...(cmd.asRead ? { maxRetries: 0 } : {}),
    });
    if (cmd.written) {
      const sent = events.find(
        (e): e is MessageSent => e.type === 'MessageSent' && e.data.messageId === messageId,
      );
      cmd.written.response = sent ? sentMessageResponse(sent.data) : undefined;
    }
    return messageId;
  }

  /**
   * The workspace's quiet hours (issue 11, item 14): per recipient whose local time is
   * inside the window (read in the member's time zone, else the workspace's), the
   * window's end; undefined when nobody waits. A recipient who
   * wrote into the chat in the last ten minutes gets the reply now.
   */
  private async quietHours(
    workspaceId: string,
    state: ChatState,
    recipients: number[],
    now: Date,
  ): Promise<Record<string, string> | undefined> {
    // Who just wrote is answered now whatever the window: an assistant's reply to a text
    // reads no settings at all.
    const waiting = recipients.filter((id) => {
      const lastInbound = state.inboundAt[id];
      return lastInbound === undefined || now.getTime() - Date.parse(lastInbound) > REPLY_WINDOW_MS;
    });
    if (!waiting.length) return undefined;
    const settings = await this.settings.get(workspaceId);
    const window = settings?.smsQuietHours;
    if (!window) return undefined;
    // Each recipient's own time zone, else the workspace's.
    const zones = new Map(
      (await this.lookup.contacts(workspaceId, waiting)).map((c) => [c.id, c.timezone] as const),
    );
    const scheduled: Record<string, string> = {};
    for (const id of waiting) {
      const zone = zones.get(id) || settings.timezone || 'UTC';
      const end = quietHoursEnd(window, zone, now.getTime());
      if (end) scheduled[id] = end.toISOString();
    }
    return Object.keys(scheduled).length ? scheduled : undefined;
  }
}
