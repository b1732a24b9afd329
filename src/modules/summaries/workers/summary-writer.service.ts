import { Inject, Injectable } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import type { AppendResult, StoredEvent } from '../../../core/event-store/event-store.port';
import { NotFoundError } from '../../../core/http/domain-errors';
import type { Paginated } from '../../../core/http/pagination';
import { JsonLogger } from '../../../core/logging/json-logger';
import { ConsistencyWaiter } from '../../../core/projections/consistency';
import { LANGUAGE_MODEL, LanguageModel, ModelError } from '../../assistant';
import { Caller, ChatResponse, GetChatQuery, ListMessagesQuery, MessageResponse } from '../../messaging';
import { Conversation, digest, summaryPrompt } from '../domain/digest';
import { summaryDecider } from '../domain/summary';
import { summaryStream, SummaryEvent, SummaryFacts } from '../domain/summary.events';
import { SummaryChatEntity, SummaryWorkflowEntity } from '../projections/summaries.entities';
import { SummaryJob } from './summary-job';

/** The summaries feature reads chats as the system: chats:read, no member of its own. */
const SYSTEM_READER: Caller = { scopes: ['chats:read'], memberId: undefined };
/** The newest messages a summary reads (two pages of this): more than the prompt budget holds. */
const TAIL_PAGE = 100;
/** How long a job waits for the read models to reach its trigger before it is retried. */
const CONSISTENCY_TIMEOUT_MS = 10_000;
const MAX_SUMMARY_CHARS = 4_000;

export interface SummaryAttempt {
  /** 1 for the first run of the job. */
  attempt: number;
  /** The job's last attempt: a model failure then falls back to the digest. */
  final: boolean;
}

export type SummaryOutcome = 'written' | 'unchanged' | 'stale' | 'no-chat';

/**
 * Writes a chat's summary: waits until the read models have seen the trigger, reads the
 * chat and the tail of its messages through messaging's queries, has the model write the
 * text (ASSISTANT_PROVIDER=openai) or makes the digest, and appends ChatSummarized or
 * CallSummarized on the chat's summary stream (the decider drops a repeat).
 *
 * A model failure is retried with the job's backoff while it may pass (429, 5xx, timeouts);
 * on the last attempt, or at once for one that will not pass, the digest is written
 * instead, with `source: "digest"` and the reason in `fallbackReason`. Why not fail the
 * job: a summary is also the trigger of the workspace's chat:summary / call:summary rules
 * and the record of what the chat said; a digest that says it is one keeps both, where a
 * failed job would leave a gap no one sees. The text is PHI: never logged.
 */
@Injectable()
export class SummaryWriter {
  constructor(
    private readonly db: DataSource,
    private readonly queries: QueryBus,
    private readonly repo: EventSourcedRepository,
    private readonly waiter: ConsistencyWaiter,
    private readonly logger: JsonLogger,
    @Inject(LANGUAGE_MODEL) private readonly model: LanguageModel,
  ) {}

  async run(job: SummaryJob, attempt: SummaryAttempt): Promise<SummaryOutcome[]> {
    await this.waitForTrigger(job);
    if (job.trigger === 'assignment_completed') {
      const chats = await this.db.getRepository(SummaryChatEntity).find({
        where: { workspaceId: job.workspaceId, assignmentId: job.assignmentId },
        order: { chatId: 'ASC' },
      });
      const out: SummaryOutcome[] = [];
      for (const c of chats) out.push(await this.summarize(job, c.chatId, attempt));
      return out;
    }
    return [await this.summarize(job, job.chatId!, attempt)];
  }

  private async waitForTrigger(job: SummaryJob): Promise<void> {
    const t = job.triggerEvent;
    const position = { commit: BigInt(t.commit), prepare: BigInt(t.prepare) };
    const stand = {
      nextExpectedRevision: 0n,
      position,
      events: [{ id: t.id, type: t.type, position } as unknown as StoredEvent],
    } as AppendResult;
    if (!(await this.waiter.waitFor([stand], CONSISTENCY_TIMEOUT_MS)))
      throw new Error('the read models have not reached the summary trigger yet');
  }

  private async summarize(job: SummaryJob, chatId: number, attempt: SummaryAttempt): Promise<SummaryOutcome> {
    const ws = job.workspaceId;
    const counts = await this.db.getRepository(SummaryChatEntity).findOneBy({ chatId, workspaceId: ws });
    if (!counts) return 'no-chat';
    // A newer message restarted the quiet period: the sweep finds the chat again once it is quiet.
    if (job.trigger === 'idle' && counts.lastMessageId !== job.messageId) return 'stale';
    let chat: ChatResponse;
    try {
      chat = await this.queries.execute<GetChatQuery, ChatResponse>(
        new GetChatQuery(ws, chatId, SYSTEM_READER),
      );
    } catch (error) {
      if (error instanceof NotFoundError) return 'no-chat';
      throw error;
    }
    const conversation: Conversation = {
      channel: chat.channel,
      memberId: chat.memberId,
      participants: chat.participants.map((p) => ({ memberId: p.memberId, role: p.role, name: p.name })),
      assistantKind: chat.assistantKind,
      messageCount: counts.inboundCount + counts.outboundCount,
      inboundCount: counts.inboundCount,
      outboundCount: counts.outboundCount,
      firstMessageAt: counts.firstMessageAt?.toISOString() ?? null,
      lastMessageAt: counts.lastMessageAt?.toISOString() ?? null,
      messages: (await this.tail(ws, chatId)).map((m) => ({
        id: m.id,
        direction: m.direction as 'inbound' | 'outbound',
        role: m.role,
        content: m.content,
        createdAt: m.createdAt,
      })),
      ...(job.call ? { call: job.call } : {}),
    };
    const written = await this.write(conversation, attempt);
    const workflow = chat.workflowId
      ? await this.db.getRepository(SummaryWorkflowEntity).findOneBy({ workflowId: chat.workflowId })
      : null;
    const facts: SummaryFacts = {
      chatId,
      chatUuid: chat.uuid,
      workspaceId: ws,
      channel: chat.channel,
      memberId: chat.memberId,
      participants: conversation.participants,
      workflowId: chat.workflowId,
      workflowUuid: workflow?.uuid ?? null,
      assignmentId: chat.assignmentId,
      trigger: job.trigger,
      key: keyOf(job),
      ...written,
      messageCount: conversation.messageCount,
      inboundCount: conversation.inboundCount,
      outboundCount: conversation.outboundCount,
      firstMessageAt: conversation.firstMessageAt,
      lastMessageAt: conversation.lastMessageAt,
      lastMessageId: counts.lastMessageId,
      summarizedAt: new Date().toISOString(),
    };
    const event: SummaryEvent = job.call
      ? { type: 'CallSummarized', data: { ...facts, call: job.call } }
      : { type: 'ChatSummarized', data: facts };
    const { events } = await this.repo.handle({
      streamName: summaryStream(chatId),
      workspaceId: ws,
      decider: summaryDecider,
      command: { type: 'RecordSummary', summary: event },
    });
    this.logger.event('info', {
      msg: events.length ? 'chat summarised' : 'chat summary already written',
      workspaceId: ws,
      chatId,
      trigger: job.trigger,
      source: written.source,
    });
    return events.length ? 'written' : 'unchanged';
  }

  /** The newest messages, oldest first: the last two pages of TAIL_PAGE. */
  private async tail(ws: string, chatId: number): Promise<MessageResponse[]> {
    const page = (n: number) =>
      this.queries.execute<ListMessagesQuery, Paginated<MessageResponse>>(
        new ListMessagesQuery(ws, chatId, SYSTEM_READER, {
          page: n,
          pageSize: TAIL_PAGE,
          offset: (n - 1) * TAIL_PAGE,
        }),
      );
    const first = await page(1);
    const last = Math.max(1, Math.ceil(first.total / TAIL_PAGE));
    if (last === 1) return first.items;
    const [before, end] = await Promise.all([last - 1 === 1 ? first : page(last - 1), page(last)]);
    return [...before.items, ...end.items];
  }

  private async write(
    c: Conversation,
    attempt: SummaryAttempt,
  ): Promise<Pick<SummaryFacts, 'text' | 'source' | 'model' | 'fallbackReason'>> {
    const plain = { text: digest(c), source: 'digest' as const, model: null, fallbackReason: null };
    if (!this.model.available) return plain;
    try {
      const answer = await this.model.complete({
        messages: summaryPrompt(c),
        maxTokens: 400,
        temperature: 0.2,
      });
      const text = answer.content?.trim();
      if (!text) throw new ModelError('the model answered with no text', true);
      return {
        text: text.length > MAX_SUMMARY_CHARS ? `${text.slice(0, MAX_SUMMARY_CHARS - 1)}…` : text,
        source: 'model',
        model: answer.model,
        fallbackReason: null,
      };
    } catch (error) {
      const e = error instanceof ModelError ? error : new ModelError('the model call failed', true);
      this.logger.event('warn', {
        msg: 'summary model call failed',
        reason: e.message,
        status: e.status,
        attempt: attempt.attempt,
        fallback: !e.retryable || attempt.final,
      });
      if (e.retryable && !attempt.final) throw e;
      return { ...plain, fallbackReason: e.message };
    }
  }
}

/** Unique per trigger in the chat's summaries: the idle period's last message, the pause or call event, the assignment. */
function keyOf(job: SummaryJob): string {
  switch (job.trigger) {
    case 'idle':
      return `idle:${job.messageId}`;
    case 'assignment_completed':
      return `assignment:${job.assignmentId}`;
    case 'call_completed':
      return `call:${job.call?.callSid ?? job.triggerEvent.id}`;
    case 'paused':
      return `paused:${job.triggerEvent.id}`;
  }
}
