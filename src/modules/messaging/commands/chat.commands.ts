import { CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { nextId } from '../../../core/database/ids';
import { ValidationError } from '../../../core/http/domain-errors';
import { StartAssignmentCommand } from '../../work';
import { chatDecider, checkNewChat } from '../domain/chat';
import { AssistantKind, Channel, chatStream, Participant } from '../domain/chat.events';
import { assertMayCreateChat, assertMayWriteChat, Caller } from '../domain/messaging-access.policy';
import { ChatLookup } from './chat-lookup.service';

export interface CreateChatInput {
  channel: Channel;
  workflowId?: number;
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
    readonly changes: { title?: string | null; paused?: boolean; assignmentId?: number },
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
  if (input.assistantEnabled === true && input.assistantKind === 'human')
    throw new ValidationError(
      'assistantEnabled: true means the AI assistant; it contradicts assistantKind human',
    );
  return input.assistantKind ?? 'ai';
}

/**
 * POST /w/{wid}/chats: a chat with its member, assistant and participants. With
 * `workflowId`, the assignment that runs the workflow for the chat's member is started
 * through work's own command (its access rules and Member Role Gate apply: 403 with the
 * gate's message), after every check of the chat passed, so a refused chat starts nothing;
 * a phone chat without `phoneNumberId` takes the workflow's default number.
 */
@CommandHandler(CreateChatCommand)
export class CreateChatHandler implements ICommandHandler<CreateChatCommand, number> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly lookup: ChatLookup,
    private readonly db: DataSource,
    private readonly commands: CommandBus,
  ) {}

  async execute({ workspaceId, input, caller }: CreateChatCommand): Promise<number> {
    const memberId = input.memberId ?? caller.memberId;
    if (memberId === undefined)
      throw new ValidationError('memberId: required for a credential without a member');
    assertMayCreateChat(caller, memberId, {
      participants: input.participants?.length ?? 0,
      assistantMemberId: input.assistantMemberId,
    });
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
      workflowId: input.workflowId ?? null,
      assignmentId: null as number | null,
      placeCall:
        input.assistantEnabled === true && input.channel === 'phone-voice' && input.workflowId !== undefined,
    };
    if (input.workflowId !== undefined) {
      const workflow = await this.lookup.workflow(workspaceId, input.workflowId);
      if (!workflow)
        throw new ValidationError(`workflowId: no workflow ${input.workflowId} in this workspace`);
      if (chat.phoneNumberId === null && (chat.channel === 'phone-sms' || chat.channel === 'phone-voice'))
        chat.phoneNumberId = workflow.defaultPhoneNumberId;
    }
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
    // Everything the chat's append needs is ready before the assignment starts: after it,
    // only the append itself (a new stream, nothing left to refuse) can fail. Not atomic
    // across the two streams: a process dying in between leaves the assignment without
    // its chat, which PUT .../chats/{id} `assignmentId` can attach (README, Messaging).
    chat.chatId = await nextId(this.db, 'chat_id_seq');
    if (input.workflowId !== undefined)
      chat.assignmentId = await this.commands.execute<StartAssignmentCommand, number>(
        new StartAssignmentCommand(workspaceId, input.workflowId, memberId, {
          scopes: caller.scopes,
          memberId: caller.memberId,
          roleId: caller.roleId,
          credentialScopes: caller.credentialScopes,
        }),
      );
    const { state, append } = await this.repo.handle({
      streamName: chatStream(chat.chatId),
      workspaceId,
      decider: chatDecider,
      command: { type: 'CreateChat', chat, now: new Date().toISOString() },
    });
    if (append) this.lookup.remember(chat.chatId, state, append.nextExpectedRevision);
    return chat.chatId;
  }
}

/** PUT /w/{wid}/chats/{chatId}: title, paused, and the assignment (of the chat's member) it runs. */
@CommandHandler(UpdateChatCommand)
export class UpdateChatHandler implements ICommandHandler<UpdateChatCommand, void> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly lookup: ChatLookup,
  ) {}

  async execute(cmd: UpdateChatCommand): Promise<void> {
    const loaded = await this.lookup.chat(cmd.workspaceId, cmd.chatId);
    assertMayWriteChat(cmd.caller, loaded.state.chat!);
    const assignment =
      cmd.changes.assignmentId === undefined
        ? undefined
        : await this.lookup.assignment(cmd.changes.assignmentId);
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
        assignment,
        now: new Date().toISOString(),
      },
    });
  }
}
