import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';
import type { ChatCreated, ChatUpdated, MessageReceived, MessageSent } from '../../messaging';
import type { WorkflowEvent } from '../../work';

type WorkflowCreated = Extract<WorkflowEvent, { type: 'WorkflowCreated' }>;
type SourceEvent = ChatCreated | ChatUpdated | MessageReceived | MessageSent | WorkflowCreated;

/**
 * The triggers a summary job waits for (core's ConsistencyWaiter waits for every
 * projection handling the trigger's type): handled here, with nothing to write, so a job
 * started by one finds this read model at least as far as its trigger.
 */
export const TRIGGER_ONLY_TYPES = ['AssignmentCompleted', 'CallCompleted'] as const;

/**
 * What a summary needs of other features, from their public event types: a chat's
 * assignment and workflow (an assignment's completion finds its chats here), its message
 * counts each way with the first and last message time, and each workflow's uuid.
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
    ...TRIGGER_ONLY_TYPES,
  ],
  tables: ['summary_chats', 'summary_workflows'],
})
export class SummarySourcesProjection implements ProjectionHandler {
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
             last_message_id = GREATEST(COALESCE(last_message_id, $5), $5)
           WHERE chat_id = $1`,
          [d.chatId, inbound, 1 - inbound, at, d.messageId],
        );
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
