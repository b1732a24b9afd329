import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';
import type { ChatCreated, ChatUpdated, MessageReceived, MessageSent } from '../../messaging';
import type { WorkflowEvent } from '../../work';
import type { SummaryEvent } from '../domain/summary.events';
import type { LastMessageEvent } from './summaries.entities';

type WorkflowCreated = Extract<WorkflowEvent, { type: 'WorkflowCreated' }>;
type SourceEvent = ChatCreated | ChatUpdated | MessageReceived | MessageSent | WorkflowCreated | SummaryEvent;

/** A message event as summary_chats.last_event keeps it. */
const lastEventOf = (stored: StoredEvent): LastMessageEvent => ({
  id: stored.id,
  type: stored.type,
  correlationId: stored.metadata.correlationId,
  commit: stored.position.commit.toString(),
  prepare: stored.position.prepare.toString(),
});

/**
 * The triggers a summary job waits for (core's ConsistencyWaiter waits for every
 * projection handling the trigger's type): handled here, with nothing to write, so a job
 * started by one finds this read model at least as far as its trigger.
 */
export const TRIGGER_ONLY_TYPES = ['AssignmentCompleted', 'CallCompleted'] as const;

/**
 * What a summary needs of other features, from their public event types: a chat's
 * assignment and workflow (an assignment's completion finds its chats here), its message
 * counts each way with the first and last message time, its newest message event, and
 * each workflow's uuid. From the summaries' own events, the last message the newest
 * summary covered (`covered_message_id`): a chat whose last message is not covered and
 * is older than the quiet period is due for its idle summary (IdleSummarySweep).
 */
@Injectable()
@Projection({
  name: 'summary-sources',
  eventTypes: [
    'ChatCreated',
    'ChatUpdated',
    'MessageReceived',
    'MessageSent',
    'WorkflowCreated',
    'ChatSummarized',
    'CallSummarized',
    ...TRIGGER_ONLY_TYPES,
  ],
  tables: ['summary_chats', 'summary_workflows'],
})
export class SummarySourcesProjection implements ProjectionHandler {
  /**
   * A batch in at most three statements besides the rare ChatUpdated / WorkflowCreated:
   * the new chats in one insert, then every message's counts and times folded per chat into
   * one update (the sums, the earliest and latest times and the highest message id are what
   * the per-event updates leave, in any order; the last event is the chat's last in the
   * batch, as it is one by one). The inserts go first: a chat's ChatCreated
   * comes before its own updates and messages in the batch, and the updates of other chats
   * do not depend on it. Under load a batch held a few dozen chats' events, one round trip each.
   */
  async handleBatch(events: readonly StoredEvent[], em: EntityManager): Promise<void> {
    const created: ChatCreated['data'][] = [];
    const others: StoredEvent[] = [];
    const messages: { chatId: number; inbound: number; at: string; messageId: number; event: string }[] = [];
    for (const stored of events) {
      const event = { type: stored.type, data: stored.data } as SourceEvent;
      if (event.type === 'ChatCreated') created.push(event.data);
      else if (event.type === 'MessageReceived')
        messages.push({
          chatId: event.data.chatId,
          inbound: 1,
          at: event.data.receivedAt,
          messageId: event.data.messageId,
          event: JSON.stringify(lastEventOf(stored)),
        });
      else if (event.type === 'MessageSent')
        messages.push({
          chatId: event.data.chatId,
          inbound: 0,
          at: event.data.sentAt,
          messageId: event.data.messageId,
          event: JSON.stringify(lastEventOf(stored)),
        });
      else others.push(stored);
    }
    if (created.length)
      await em.query(
        `INSERT INTO summary_chats (chat_id, workspace_id, workflow_id, assignment_id)
         SELECT * FROM unnest($1::int[], $2::uuid[], $3::int[], $4::int[])
         ON CONFLICT (chat_id) DO NOTHING`,
        [
          created.map((d) => d.chatId),
          created.map((d) => d.workspaceId),
          created.map((d) => d.workflowId ?? null),
          created.map((d) => d.assignmentId ?? null),
        ],
      );
    for (const stored of others) await this.handle(stored, em);
    if (messages.length)
      await em.query(
        `UPDATE summary_chats s SET inbound_count = s.inbound_count + m.inbound,
           outbound_count = s.outbound_count + m.outbound,
           first_message_at = LEAST(COALESCE(s.first_message_at, m.first_at), m.first_at),
           last_message_at = GREATEST(COALESCE(s.last_message_at, m.last_at), m.last_at),
           last_message_id = GREATEST(COALESCE(s.last_message_id, m.last_id), m.last_id),
           last_event = m.last_event
         FROM (SELECT chat_id, sum(inbound)::int AS inbound, sum(1 - inbound)::int AS outbound,
                      min(at) AS first_at, max(at) AS last_at, max(message_id) AS last_id,
                      (array_agg(event ORDER BY n DESC))[1]::jsonb AS last_event
                 FROM unnest($1::int[], $2::int[], $3::timestamptz[], $4::int[], $5::text[])
                      WITH ORDINALITY AS u(chat_id, inbound, at, message_id, event, n)
                GROUP BY chat_id) m
         WHERE s.chat_id = m.chat_id`,
        [
          messages.map((m) => m.chatId),
          messages.map((m) => m.inbound),
          messages.map((m) => m.at),
          messages.map((m) => m.messageId),
          messages.map((m) => m.event),
        ],
      );
  }

  async handle(stored: StoredEvent, em: EntityManager): Promise<void> {
    const event = { type: stored.type, data: stored.data } as SourceEvent;
    switch (event.type) {
      case 'ChatCreated': {
        const d = event.data;
        await em.query(
          `INSERT INTO summary_chats (chat_id, workspace_id, workflow_id, assignment_id)
           VALUES ($1, $2, $3, $4) ON CONFLICT (chat_id) DO NOTHING`,
          [d.chatId, d.workspaceId, d.workflowId ?? null, d.assignmentId ?? null],
        );
        return;
      }
      case 'ChatUpdated': {
        const c = event.data.changes;
        if (c.assignmentId === undefined && c.workflowId === undefined) return;
        await em.query(
          `UPDATE summary_chats SET assignment_id = COALESCE($2, assignment_id),
             workflow_id = COALESCE($3, workflow_id) WHERE chat_id = $1`,
          [event.data.chatId, c.assignmentId ?? null, c.workflowId ?? null],
        );
        return;
      }
      case 'MessageReceived':
      case 'MessageSent': {
        const d = event.data;
        const at = event.type === 'MessageReceived' ? event.data.receivedAt : event.data.sentAt;
        const inbound = event.type === 'MessageReceived' ? 1 : 0;
        await em.query(
          `UPDATE summary_chats SET inbound_count = inbound_count + $2, outbound_count = outbound_count + $3,
             first_message_at = LEAST(COALESCE(first_message_at, $4), $4),
             last_message_at = GREATEST(COALESCE(last_message_at, $4), $4),
             last_message_id = GREATEST(COALESCE(last_message_id, $5), $5), last_event = $6::jsonb
           WHERE chat_id = $1`,
          [d.chatId, inbound, 1 - inbound, at, d.messageId, JSON.stringify(lastEventOf(stored))],
        );
        return;
      }
      case 'ChatSummarized':
      case 'CallSummarized': {
        // As the summaries' decider folds it: the newest summary's last message, or the one before.
        const covered = event.data.lastMessageId;
        if (covered === null || covered === undefined) return;
        await em.query(`UPDATE summary_chats SET covered_message_id = $2 WHERE chat_id = $1`, [
          event.data.chatId,
          covered,
        ]);
        return;
      }
      case 'WorkflowCreated': {
        const d = event.data;
        await em.query(
          `INSERT INTO summary_workflows (workflow_id, workspace_id, uuid) VALUES ($1, $2, $3)
           ON CONFLICT (workflow_id) DO NOTHING`,
          [d.workflowId, d.workspaceId, d.uuid],
        );
        return;
      }
      default:
        // AssignmentCompleted, CallCompleted: see TRIGGER_ONLY_TYPES.
        return;
    }
  }
}
