import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../../core/config/config';
import { DEFAULT_MAX_RETRIES, EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import {
  EVENT_STORE,
  EventStore,
  StoredEvent,
  WrongExpectedRevisionError,
} from '../../../core/event-store/event-store.port';
import { AgentPersona, GetAgentPersonaQuery, GetMemberContactsQuery, MemberContact } from '../../identity';
import {
  chatStream,
  MessageTooLongError,
  reserveChatMessageId,
  SendAssistantMessageCommand,
} from '../../messaging';
import { WorkflowEvent, workflowStream } from '../../work';
import { AssistantEvent, assistantChatStream, AssistantToolCalled } from '../domain/assistant.events';
import { LANGUAGE_MODEL, LanguageModel, ModelError, ModelMessage } from '../model/language-model.port';
import { ChatView, foldChat, historyWithin, promptName, reasonNotToAnswer } from './conversation';
import { storable, ToolBox, ToolFailure } from './tool-box';
import { EarlierToolCalls } from './tool-reuse';

/** One reply's job: answer the chat's member message `replyTo` (the last of its burst). */
export interface ReplyJob {
  workspaceId: string;
  chatId: number;
  replyTo: number;
  /** The chat's member (MessageReceived's), so the job reads their contact beside the chat; absent on older jobs. */
  memberId?: number;
  correlationId: string;
  causationId: string;
}

export type ReplyOutcome =
  | { status: 'sent'; messageId: number }
  | { status: 'skipped'; reason: string }
  | { status: 'failed'; reason: string };

/** Why a reply failed, and whether another attempt may succeed. */
export class ReplyError extends Error {
  constructor(
    readonly reason: string,
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'ReplyError';
  }
}

/** A chat's stream as one read found it, and the chat the assistant sees in it. */
interface ChatRead {
  events: readonly StoredEvent[];
  view: ChatView | null;
}

/** The assistant never answers as its own agent member here: sending is the system's, with chats:write. */
const ASSISTANT_CALLER = { scopes: ['chats:write'], memberId: undefined };

/**
 * Answers an `ai` chat: reads the chat from its stream, builds the conversation (the
 * workflow's agent, the member's name, the history within ASSISTANT_HISTORY_TOKENS),
 * runs the model with the tools on offer for at most ASSISTANT_MAX_TOOL_ROUNDS rounds of
 * tool calls, and sends the final text through messaging's SendAssistantMessageCommand
 * (consent, STOP, quiet hours and segments apply there). Checks the chat again right
 * before sending, so a chat paused, switched to human or answered meanwhile gets nothing.
 */
@Injectable()
export class ReplyService implements OnModuleDestroy {
  private readonly log = new Logger('Assistant');
  /** AssistantReplied appends still in flight (afterSlot). */
  private readonly appending = new Set<Promise<void>>();

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(LANGUAGE_MODEL) private readonly model: LanguageModel,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repo: EventSourcedRepository,
    private readonly queries: QueryBus,
    private readonly commands: CommandBus,
    private readonly tools: ToolBox,
    private readonly db: DataSource,
  ) {}

  /** The chat's stream as read now, and the chat the assistant sees in it. */
  private async chat(chatId: number): Promise<ChatRead> {
    const events = await this.store.readStream(chatStream(chatId));
    return { events, view: foldChat(events) };
  }

  /** One attempt. Throws ReplyError when it failed; the caller decides on retries. */
  async reply(job: ReplyJob, attempt: number): Promise<ReplyOutcome> {
    // The member's contact is read beside the chat (used only if the chat names that member).
    const contact = job.memberId === undefined ? undefined : this.contact(job.workspaceId, job.memberId);
    contact?.catch(() => undefined); // awaited below, or not needed: never an unhandled rejection
    // The chat as this job last read it: what the send decides on and expects to find unchanged.
    let read = await this.chat(job.chatId);
    const view = read.view;
    const skip = reasonNotToAnswer(view, job.replyTo);
    if (skip || !view || view.workspaceId !== job.workspaceId)
      return { status: 'skipped', reason: skip ?? 'no_chat' };

    const workflow = view.workflowId ? await this.workflow(view.workflowId, view.workspaceId) : null;
    // The service's own tools act as the workflow's agent member: a chat without one gets none.
    const [{ messages, model }, tools] = await Promise.all([
      this.conversation(
        view,
        workflow,
        contact && job.memberId === view.memberId ? contact : this.contact(view.workspaceId, view.memberId),
      ),
      this.tools.offer(view.workspaceId, workflow?.agentId ?? null),
    ]);
    const definitions = tools.definitions;
    // The reply's message id, taken while the model answers (burned if nothing is sent).
    const messageId = reserveChatMessageId(this.db);
    messageId.catch(() => undefined); // awaited by the send, or not needed
    let rounds = 0;
    let calls = 0;
    let answer: string | null = null;
    let usedModel = model ?? this.model.defaultModel;
    let earlier: EarlierToolCalls | undefined;
    for (;;) {
      const completion = await this.complete({
        model,
        messages,
        tools: definitions.length && rounds < this.config.assistantMaxToolRounds ? definitions : undefined,
      });
      usedModel = completion.model;
      if (!completion.toolCalls.length) {
        answer = completion.content;
        break;
      }
      if (rounds >= this.config.assistantMaxToolRounds)
        throw new ReplyError(
          'tool_rounds_exhausted',
          `the model still called tools after ${rounds} rounds`,
          false,
        );
      // Paused, switched to a human or written to while the model thought: no tool runs.
      read = await this.chat(job.chatId);
      const stop = reasonNotToAnswer(read.view, job.replyTo);
      if (stop) return { status: 'skipped', reason: stop };
      rounds++;
      messages.push({ role: 'assistant', content: completion.content, toolCalls: completion.toolCalls });
      // Calls an earlier attempt of this job already ran answer from their record (tool-reuse.ts).
      earlier ??= new EarlierToolCalls(
        await this.store.readStream(assistantChatStream(job.chatId)),
        job.replyTo,
      );
      for (const call of completion.toolCalls) {
        calls++;
        const started = Date.now();
        if (calls > this.config.assistantMaxToolCalls) {
          // A model (or a member steering it) asking for call after call: the rest run nothing.
          const result = `error: this reply has made the most tool calls one reply may make (${this.config.assistantMaxToolCalls}); answer with what you have`;
          const run = {
            source: null,
            target: null,
            arguments: storable(call.arguments, 1_000),
            outcome: 'refused' as const,
            result,
          };
          await this.recordTool(job, attempt, rounds, call, run, started);
          messages.push({ role: 'tool', toolCallId: call.id, content: result });
          continue;
        }
        // Only while the tool is still on offer: an agent that lost its scope gets no old answer.
        const recorded = tools.offers(call.name) ? earlier.take(call.name, call.arguments) : undefined;
        if (recorded) {
          await this.recordTool(job, attempt, rounds, call, recorded, started, recorded);
          messages.push({ role: 'tool', toolCallId: call.id, content: recorded.result });
          continue;
        }
        try {
          const run = await this.tools.run(tools, call.name, call.arguments);
          await this.recordTool(job, attempt, rounds, call, run, started);
          messages.push({ role: 'tool', toolCallId: call.id, content: run.result });
        } catch (error) {
          if (!(error instanceof ToolFailure)) throw error;
          await this.recordTool(job, attempt, rounds, call, error.run, started);
          throw new ReplyError('tool_failed', `${error.toolName}: ${error.message}`, error.retryable);
        }
      }
    }
    const text = answer === null ? undefined : storable(answer).trim();
    if (!text) throw new ReplyError('empty_answer', 'the model answered no text', true);

    const sent = await this.send(job, text, read, messageId);
    if (sent.status === 'skipped') return sent;
    this.afterSlot(job, [
      {
        type: 'AssistantReplied',
        data: {
          chatId: job.chatId,
          workspaceId: job.workspaceId,
          replyTo: job.replyTo,
          messageId: sent.messageId,
          model: usedModel,
          rounds,
          toolCalls: calls,
          repliedAt: new Date().toISOString(),
        },
      },
    ]);
    this.log.log(
      `chat ${job.chatId}: replied (message ${sent.messageId}, ${rounds} tool rounds, ${calls} calls)`,
    );
    return sent;
  }

  /**
   * Sends `text` unless the chat, as last read, was paused, switched to human, answered or
   * written to meanwhile. The send decides on that same read and appends only if the
   * chat's stream has not moved since (SendAssistantMessageCommand's `asRead`): any change
   * after the read (a pause while the model thought, a new message) makes it read and
   * check again, so nothing is sent on a chat the job did not check as it is.
   */
  private async send(
    job: ReplyJob,
    text: string,
    read: ChatRead,
    messageId: Promise<number>,
  ): Promise<{ status: 'sent'; messageId: number } | { status: 'skipped'; reason: string }> {
    for (let lost = 0; ; lost++) {
      const stop = reasonNotToAnswer(read.view, job.replyTo);
      if (stop) return { status: 'skipped', reason: stop };
      try {
        const sent = await this.commands.execute<SendAssistantMessageCommand, number>(
          new SendAssistantMessageCommand(
            job.workspaceId,
            job.chatId,
            text,
            ASSISTANT_CALLER,
            read.events,
            undefined,
            messageId,
          ),
        );
        return { status: 'sent', messageId: sent };
      } catch (error) {
        if (error instanceof WrongExpectedRevisionError && lost < DEFAULT_MAX_RETRIES) {
          read = await this.chat(job.chatId);
          continue;
        }
        // Never a half answer (issue 15, item 4): an answer over the message limit is not cut, nothing is sent.
        if (error instanceof MessageTooLongError)
          throw new ReplyError(
            'answer_too_long',
            `the model answered ${error.characters} characters; ${error.message}`,
            false,
          );
        const status = (error as { status?: number }).status;
        if (status && status >= 400 && status < 500)
          throw new ReplyError('send_refused', (error as Error).message.slice(0, 500), false);
        throw error;
      }
    }
  }

  /** Records that a reply was given up: nothing sent, needsResponse stays true. */
  async recordFailure(job: ReplyJob, error: ReplyError, attempts: number): Promise<void> {
    this.log.warn(`chat ${job.chatId}: reply failed after ${attempts} attempt(s): ${error.reason}`);
    await this.append(job, [
      {
        type: 'AssistantReplyFailed',
        data: {
          chatId: job.chatId,
          workspaceId: job.workspaceId,
          replyTo: job.replyTo,
          reason: error.reason,
          detail: error.message.slice(0, 500),
          attempts,
          failedAt: new Date().toISOString(),
        },
      },
    ]);
  }

  private async complete(request: Parameters<LanguageModel['complete']>[0]) {
    try {
      return await this.model.complete(request);
    } catch (error) {
      if (error instanceof ModelError) throw new ReplyError('model_error', error.message, error.retryable);
      throw new ReplyError('model_error', 'the model call failed', true);
    }
  }

  /**
   * The system message and history, and the model: the workflow agent's (identity's
   * GetAgentPersonaQuery), else undefined (the port's default, ASSISTANT_MODEL). The
   * agent's instructions go into the system message.
   */
  private async conversation(
    view: ChatView,
    workflow: { name: string; agentId: number } | null,
    contact: Promise<MemberContact | undefined>,
  ): Promise<{ messages: ModelMessage[]; model: string | undefined }> {
    const [member, persona] = await Promise.all([
      contact,
      workflow
        ? this.queries.execute<GetAgentPersonaQuery, AgentPersona | null>(
            new GetAgentPersonaQuery(view.workspaceId, workflow.agentId),
          )
        : null,
    ]);
    const memberName = member?.name ?? null;
    const lines = [
      `You are ${persona?.name ? promptName(persona.name) : 'the assistant'} of this workspace, answering a member over ${view.channel}.`,
      workflow
        ? `This conversation is part of the workflow ${JSON.stringify(promptName(workflow.name))}.`
        : null,
      persona?.instructions ? `Your instructions:\n${persona.instructions}` : null,
      memberName
        ? `The member's name is ${JSON.stringify(promptName(memberName))}.`
        : "The member's name is not known.",
      view.channel === 'phone-sms' ? 'Answer briefly, in plain text suited to SMS.' : 'Answer in plain text.',
      'Use the tools offered when they help; never invent facts a tool could give.',
    ].filter((l): l is string => l !== null);
    return {
      messages: [
        { role: 'system', content: lines.join('\n') },
        ...historyWithin(view, this.config.assistantHistoryTokens),
      ],
      model: persona?.model ?? undefined,
    };
  }

  /** A member of the workspace as identity's contacts show them (undefined: none). */
  private async contact(workspaceId: string, memberId: number): Promise<MemberContact | undefined> {
    const contacts = await this.queries.execute<GetMemberContactsQuery, MemberContact[]>(
      new GetMemberContactsQuery(workspaceId, [memberId]),
    );
    return contacts.find((c) => c.id === memberId);
  }

  /** The chat's workflow as work's stream shows it (name and agent member). */
  private async workflow(
    workflowId: number,
    workspaceId: string,
  ): Promise<{ name: string; agentId: number } | null> {
    let wf: { name: string; agentId: number } | null = null;
    for (const raw of await this.store.readStream(workflowStream(workflowId))) {
      const e = raw as unknown as WorkflowEvent;
      if (e.type === 'WorkflowCreated' && e.data.workspaceId === workspaceId)
        wf = { name: e.data.name, agentId: e.data.agentId };
      else if (e.type === 'WorkflowUpdated' && wf)
        wf = { name: e.data.changes.name ?? wf.name, agentId: e.data.changes.agentId ?? wf.agentId };
      else if (e.type === 'WorkflowDeleted') wf = null;
    }
    return wf;
  }

  private async recordTool(
    job: ReplyJob,
    attempt: number,
    round: number,
    call: { id: string; name: string },
    run: {
      source: AssistantToolCalled['data']['source'];
      target: AssistantToolCalled['data']['target'];
      arguments: unknown;
      outcome: AssistantToolCalled['data']['outcome'];
      result: string;
    },
    started: number,
    reusedFrom?: { attempt: number; callId: string },
  ): Promise<void> {
    await this.append(job, [
      {
        type: 'AssistantToolCalled',
        data: {
          chatId: job.chatId,
          workspaceId: job.workspaceId,
          replyTo: job.replyTo,
          attempt,
          round,
          callId: storable(call.id, 200),
          name: storable(call.name, 200),
          source: run.source,
          target: run.target,
          arguments: run.arguments,
          outcome: run.outcome,
          result: run.result,
          durationMs: Date.now() - started,
          calledAt: new Date(started).toISOString(),
          ...(reusedFrom
            ? {
                reused: true as const,
                reusedFrom: { attempt: reusedFrom.attempt, callId: reusedFrom.callId },
              }
            : {}),
        },
      },
    ]);
  }

  /**
   * Appends `events` without holding the job's worker slot: the reply is sent, and the next
   * job may start while its record is written. What a crash loses is what it lost before,
   * when the append came last in the job: a job that dies after its send finds the chat
   * answered when it runs again and records nothing more. A failed append is logged (the
   * message was sent; nothing about it is retried). Shutdown waits for those in flight.
   */
  private afterSlot(job: ReplyJob, events: AssistantEvent[]): void {
    const append: Promise<void> = this.append(job, events)
      .catch((error: unknown) =>
        this.log.error(
          `chat ${job.chatId}: ${events[0].type} not recorded: ${error instanceof Error ? error.name : 'error'}`,
        ),
      )
      .finally(() => this.appending.delete(append));
    this.appending.add(append);
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all([...this.appending]);
  }

  private async append(job: ReplyJob, events: AssistantEvent[]): Promise<void> {
    await this.repo.append(assistantChatStream(job.chatId), job.workspaceId, events, 'any');
  }
}
