import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { nextId } from '../../../core/database/ids';
import { ValidationError } from '../../../core/http/domain-errors';
import { chatDecider, checkNewChat } from '../domain/chat';
import { AssistantKind, Channel, chatStream, Participant } from '../domain/chat.events';
import { assertMayCreateChat, assertMayWriteChat, Caller } from '../domain/messaging-access.policy';
import { ChatLookup } from './chat-lookup.service';

export interface CreateChatInput {
  channel: Channel;
  memberId?: number;
  phoneNumberId?: number;
  assistantKind?: AssistantKind;
  assistantMemberId?: number;
  /** Deprecated: false means assistantKind human. */
  assistantEnabled?: boolean;
  participants?: { memberId: number; role: 'supervisor' | 'contributor' }[];
  title?: string;
}

export class CreateChatCommand {
  constructor(
    readonly workspaceId: string,
    readonly input: CreateChatInput,
    readonly caller: Caller,
  ) {}
}

export class UpdateChatCommand {
  constructor(
    readonly workspaceId: string,
    readonly chatId: number,
    readonly changes: { title?: string | null; paused?: boolean },
    readonly caller: Caller,
    readonly expectedRevision?: bigint,
  ) {}
}

/** assistantKind from the current field and the deprecated one; both given, they must agree. */
export function assistantKindOf(
  input: Pick<CreateChatInput, 'assistantKind' | 'assistantEnabled'>,
): AssistantKind {
  if (input.assistantEnabled === false) {
    if (input.assistantKind === 'ai')
      throw new ValidationError(
        'assistantEnabled: false means assistantKind human; it contradicts assistantKind ai',
      );
    return 'human';
  }
  return input.assistantKind ?? 'ai';
}

/** POST /w/{wid}/chats: a simple chat (no workflow yet) with its member, assistant and participants. */
@CommandHandler(CreateChatCommand)
export class CreateChatHandler implements ICommandHandler<CreateChatCommand, number> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly lookup: ChatLookup,
    private readonly db: DataSource,
  ) {}

  async execute({ workspaceId, input, caller }: CreateChatCommand): Promise<number> {
    const memberId = input.memberId ?? caller.memberId;
    if (memberId === undefined)
      throw new ValidationError('memberId: required for a credential without a member');
    assertMayCreateChat(caller, memberId);
    const assistantKind = assistantKindOf(input);
    const extras: Participant[] = (input.participants ?? []).map((p) => ({
      memberId: p.memberId,
      role: p.role,
    }));
    const chat = {
      chatId: 0,
      uuid: randomUUID(),
      workspaceId,
      channel: input.channel,
      memberId,
      phoneNumberId: input.phoneNumberId ?? null,
      assistantKind,
      assistantMemberId: input.assistantMemberId ?? null,
      participants: [{ memberId, role: 'user' as const }, ...extras],
      title: input.title?.trim() || null,
    };
    // The decider's own rules first (required fields, duplicates), then the lookups.
    checkNewChat(chat);
    if (chat.phoneNumberId !== null && !(await this.lookup.phoneNumber(workspaceId, chat.phoneNumberId)))
      throw new ValidationError(`phoneNumberId: no phone number ${chat.phoneNumberId} in this workspace`);
    await this.lookup.assertActiveMembers(workspaceId, [
      { field: 'memberId', memberId },
      ...(chat.assistantMemberId !== null
        ? [{ field: 'assistantMemberId', memberId: chat.assistantMemberId }]
        : []),
      ...extras.map((p, i) => ({ field: `participants.${i}.memberId`, memberId: p.memberId })),
    ]);
    chat.chatId = await nextId(this.db, 'chat_id_seq');
    await this.repo.handle({
      streamName: chatStream(chat.chatId),
      workspaceId,
      decider: chatDecider,
      command: { type: 'CreateChat', chat, now: new Date().toISOString() },
    });
    return chat.chatId;
  }
}

/** PUT /w/{wid}/chats/{chatId}: title and paused (assignmentId waits for workflows). */
@CommandHandler(UpdateChatCommand)
export class UpdateChatHandler implements ICommandHandler<UpdateChatCommand, void> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly lookup: ChatLookup,
  ) {}

  async execute(cmd: UpdateChatCommand): Promise<void> {
    const loaded = await this.lookup.chat(cmd.workspaceId, cmd.chatId);
    assertMayWriteChat(cmd.caller, loaded.state.chat!);
    await this.repo.handle({
      streamName: chatStream(cmd.chatId),
      workspaceId: cmd.workspaceId,
      decider: chatDecider,
      loaded,
      expectedRevision: cmd.expectedRevision,
      command: {
        type: 'UpdateChat',
        chatId: cmd.chatId,
        workspaceId: cmd.workspaceId,
        changes: {
          ...cmd.changes,
          title: cmd.changes.title === undefined ? undefined : cmd.changes.title?.trim() || null,
        },
        now: new Date().toISOString(),
      },
    });
  }
}
