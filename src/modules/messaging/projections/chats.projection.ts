import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';
import type { MemberOptedInToSms, MemberOptedOutOfSms } from '../../identity';
import { CHAT_EVENT_TYPES, ChatCreated, ChatEvent, MessageReceived } from '../domain/chat.events';
import { MessageRun } from './message-runs';

type ConsentEvent = MemberOptedOutOfSms | MemberOptedInToSms;

/** A MessageReceived right after its chat's ChatCreated, in the same stream. */
function isFirstMessage(created: StoredEvent, next: StoredEvent | undefined): next is StoredEvent {
  return (
    created.type === 'ChatCreated' &&
    next?.type === 'MessageReceived' &&
    next.streamName === created.streamName &&
    next.revision === created.revision + 1n
  );
}

/** A message's scheduledFor: when its last held delivery goes out (null: none held). */
function latest(scheduledFor: Record<string, string> | undefined): string | null {
  const times = Object.values(scheduledFor ?? {}).sort();
  return times.length ? times[times.length - 1] : null;
}

/**
 * chats, chat_messages, message_deliveries, and sms_opt_outs (fed by identity's public
 * opt-out events). A message's status sums up its deliveries: `sent` while any is
 * pending, then `delivered` when any reached its recipient, else `failed` with the first
 * reason.
 *
 * A batch writes each run of message events (sent, dispatched, delivered, failed) as one
 * or two statements (MessageRun), not one or two per event: every write's read-your-writes
 * waits for this projection, and the delivery bookkeeping of the messages sent before is
 * most of what it applies.
 */
@Injectable()
@Projection({
  name: 'messaging-chats',
  eventTypes: [...CHAT_EVENT_TYPES, 'MemberOptedOutOfSms', 'MemberOptedInToSms'],
  tables: ['chats', 'chat_messages', 'message_deliveries', 'sms_opt_outs'],
})
export class ChatsProjection implements ProjectionHandler {
  async handleBatch(events: readonly StoredEvent[], em: EntityManager): Promise<void> {
    let run = new MessageRun();
    const flush = async () => {
      if (run.events.length === 1) await this.handle(run.events[0], em);
      else if (run.events.length > 1) await this.applyRun(run, em);
      run = new MessageRun();
    };
    for (let i = 0; i < events.length; i++) {
      const event = events[i];
      if (run.accepts(event)) {
        run.add(event);
        continue;
      }
      await flush();
      if (run.accepts(event)) run.add(event);
      else if (isFirstMessage(event, events[i + 1])) {
        // New chats one after the other (a burst of texts from new members): one statement for all.
        const pairs: [StoredEvent, StoredEvent][] = [[event, events[++i]]];
        while (i + 2 < events.length && isFirstMessage(events[i + 1], events[i + 2]))
          pairs.push([events[++i], events[++i]]);
        await this.createWithMessages(pairs, em);
      } else await this.handle(event, em);
    }
    await flush();
  }

  /**
   * Chats created with their first message in the same append (an inbound text or mail
   * from a member without a chat), as many as came one after the other in the batch: the
   * chats' rows and the messages' in one statement, ending as ChatCreated then
   * MessageReceived one by one do (on a replay over an existing row, the message's change
   * of the chat still applies).
   */
  private async createWithMessages(pairs: [StoredEvent, StoredEvent][], em: EntityManager): Promise<void> {
    const rows = pairs.map(([created, received]) => {
      const c = (created as unknown as { data: ChatCreated['data'] }).data;
      const m = (received as unknown as { data: MessageReceived['data'] }).data;
      return {
        id: c.chatId,
        uuid: c.uuid,
        workspace_id: c.workspaceId,
        channel: c.channel,
        member_id: c.memberId,
        phone_number_id: c.phoneNumberId,
        assistant_kind: c.assistantKind,
        assistant_member_id: c.assistantMemberId,
        participants: c.participants,
        participant_ids: c.participants.map((p) => p.memberId),
        title: c.title,
        needs_response: c.assistantKind === 'ai',
        created_at: c.createdAt,
        received_at: m.receivedAt,
        stream_revision: received.revision.toString(),
        workflow_id: c.workflowId ?? null,
        assignment_id: c.assignmentId ?? null,
        message_id: m.messageId,
        content: m.content,
        subject: m.subject ?? null,
        sender_member_id: m.memberId,
        provider_message_id: m.providerMessageId,
      };
    });
    await em.query(
      `WITH r AS (
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(id int, uuid uuid, workspace_id uuid, channel text,
           member_id int, phone_number_id int, assistant_kind text, assistant_member_id int, participants jsonb,
           participant_ids int[], title text, needs_response boolean, created_at timestamptz,
           received_at timestamptz, stream_revision bigint, workflow_id int, assignment_id int, message_id int,
           content text, subject text, sender_member_id int, provider_message_id text)
       ), chat AS (
         INSERT INTO chats (id, uuid, workspace_id, channel, member_id, phone_number_id, assistant_kind,
           assistant_member_id, participants, participant_ids, title, paused, needs_response, created_at,
           updated_at, version, stream_revision, workflow_id, assignment_id)
         SELECT id, uuid, workspace_id, channel, member_id, phone_number_id, assistant_kind, assistant_member_id,
           participants, participant_ids, title, false, needs_response, created_at, received_at, 2,
           stream_revision, workflow_id, assignment_id
         FROM r
         ON CONFLICT (id) DO UPDATE SET needs_response = (chats.assistant_kind = 'ai'),
           updated_at = EXCLUDED.updated_at, version = chats.version + 1, stream_revision = EXCLUDED.stream_revision
       )
       INSERT INTO chat_messages (id, chat_id, workspace_id, direction, role, content, subject, sender_member_id,
         status, provider_message_id, created_at, delivered_at)
       SELECT message_id, id, workspace_id, 'inbound', 'user', content, subject, sender_member_id, 'delivered',
         provider_message_id, received_at, received_at
       FROM r
       ON CONFLICT (id) DO NOTHING`,
      [JSON.stringify(rows)],
    );
  }

  /** A run of message events (MessageRun): the new messages, every delivery, every chat in one statement. */
  private async applyRun(run: MessageRun, em: EntityManager): Promise<void> {
    const rows = run.rows();
    await em.query(
      `WITH messages AS (
         INSERT INTO chat_messages (id, chat_id, workspace_id, direction, role, content, sender_member_id, encoding,
           segments, status, failure_reason, provider_message_id, created_at, delivered_at, scheduled_for)
         SELECT r.id, r.chat_id, r.workspace_id, 'outbound', r.role, r.content, r.sender_member_id, r.encoding,
           r.segments, r.status, r.failure_reason, r.provider_message_id, r.created_at, r.delivered_at, r.scheduled_for
         FROM jsonb_to_recordset($1::jsonb) AS r(id int, chat_id int, workspace_id uuid, role text, content text,
           sender_member_id int, encoding text, segments int, status text, failure_reason text,
           provider_message_id text, created_at timestamptz, delivered_at timestamptz, scheduled_for timestamptz)
         ON CONFLICT (id) DO NOTHING
       ), deliveries AS (
         INSERT INTO message_deliveries (message_id, member_id, chat_id, workspace_id, status, failure_reason,
           provider_message_id, updated_at, delivered_at, scheduled_for)
         SELECT r.message_id, r.member_id, r.chat_id, r.workspace_id, r.status, r.failure_reason,
           r.provider_message_id, r.updated_at, r.delivered_at, r.scheduled_for
         FROM jsonb_to_recordset($2::jsonb) AS r(message_id int, member_id int, chat_id int, workspace_id uuid,
           status text, failure_reason text, provider_message_id text, updated_at timestamptz,
           delivered_at timestamptz, scheduled_for timestamptz)
         ON CONFLICT DO NOTHING
       ), earlier AS (
         -- The SET expressions read the row as stored: which of the two folds applies.
         UPDATE message_deliveries d SET
           status = CASE WHEN d.status = 'sent' THEN u.s_status ELSE d.status END,
           failure_reason = CASE WHEN d.status = 'sent' AND u.s_decided THEN u.s_reason ELSE d.failure_reason END,
           provider_message_id = COALESCE(CASE WHEN d.status = 'sent' THEN u.s_provider_message_id
             ELSE u.n_provider_message_id END, d.provider_message_id),
           updated_at = COALESCE(CASE WHEN d.status = 'sent' THEN u.s_updated_at ELSE u.n_updated_at END, d.updated_at),
           delivered_at = CASE WHEN d.status = 'sent' AND u.s_decided THEN u.s_delivered_at ELSE d.delivered_at END
         FROM jsonb_to_recordset($3::jsonb) AS u(message_id int, member_id int, s_status text, s_decided boolean,
           s_reason text, s_provider_message_id text, s_updated_at timestamptz, s_delivered_at timestamptz,
           n_provider_message_id text, n_updated_at timestamptz)
         -- The ids again as an array: a recordset's row count is unknown to the planner (100),
         -- which then scans the whole table; the array's is known, and the index serves.
         WHERE d.message_id = ANY($5::int[]) AND d.message_id = u.message_id AND d.member_id = u.member_id
       )
       UPDATE chats c SET needs_response = c.needs_response AND u.keep, updated_at = COALESCE(u.updated_at, c.updated_at),
         version = c.version + u.sent, stream_revision = u.revision
       FROM jsonb_to_recordset($4::jsonb) AS u(id int, sent int, keep boolean, updated_at timestamptz, revision bigint)
       WHERE c.id = ANY($6::int[]) AND c.id = u.id`,
      [rows.messages, rows.deliveries, rows.earlier, rows.chats, rows.earlierMessageIds, rows.chatIds],
    );
    if (rows.summarise.length) await this.summariseMany(em, rows.summarise);
  }

  async handle(stored: StoredEvent, em: EntityManager): Promise<void> {
    const event = { type: stored.type, data: stored.data } as ChatEvent | ConsentEvent;
    const revision = stored.revision.toString();
    switch (event.type) {
      case 'MemberOptedOutOfSms': {
        const d = event.data;
        await em.query(
          `INSERT INTO sms_opt_outs (workspace_id, member_id, keyword, opted_out_at) VALUES ($1, $2, $3, $4)
           ON CONFLICT (workspace_id, member_id) DO UPDATE SET keyword = $3, opted_out_at = $4`,
          [d.workspaceId, d.memberId, d.keyword, d.optedOutAt],
        );
        return;
      }
      case 'MemberOptedInToSms':
        await em.query(`DELETE FROM sms_opt_outs WHERE workspace_id = $1 AND member_id = $2`, [
          event.data.workspaceId,
          event.data.memberId,
        ]);
        return;
      case 'ChatCreated': {
        const d = event.data;
        await em.query(
          `INSERT INTO chats (id, uuid, workspace_id, channel, member_id, phone_number_id, assistant_kind,
             assistant_member_id, participants, participant_ids, title, paused, needs_response, created_at,
             updated_at, version, stream_revision, workflow_id, assignment_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, false, false, $12, $12, 1, $13, $14, $15)
           ON CONFLICT (id) DO NOTHING`,
          [
            d.chatId,
            d.uuid,
            d.workspaceId,
            d.channel,
            d.memberId,
            d.phoneNumberId,
            d.assistantKind,
            d.assistantMemberId,
            JSON.stringify(d.participants),
            d.participants.map((p) => p.memberId),
            d.title,
            d.createdAt,
            revision,
            d.workflowId ?? null,
            d.assignmentId ?? null,
          ],
        );
        return;
      }
      case 'ChatUpdated': {
        const d = event.data;
        const values: unknown[] = [d.chatId, d.updatedAt, revision];
        const sets = ['updated_at = $2', 'version = version + 1', 'stream_revision = $3'];
        if (d.changes.title !== undefined) {
          values.push(d.changes.title);
          sets.push(`title = $${values.length}`);
        }
        if (d.changes.paused !== undefined) {
          values.push(d.changes.paused);
          sets.push(`paused = $${values.length}`);
        }
        if (d.changes.assignmentId !== undefined) {
          values.push(d.changes.assignmentId);
          sets.push(`assignment_id = $${values.length}`);
        }
        if (d.changes.workflowId !== undefined) {
          values.push(d.changes.workflowId);
          sets.push(`workflow_id = $${values.length}`);
        }
        await em.query(`UPDATE chats SET ${sets.join(', ')} WHERE id = $1`, values);
        return;
      }
      case 'MessageReceived': {
        const d = event.data;
        // The message and the chat's change in one round trip; a member's message awaits an
        // answer on an AI chat.
        await em.query(
          `WITH message AS (
             INSERT INTO chat_messages (id, chat_id, workspace_id, direction, role, content, subject, sender_member_id,
               status, provider_message_id, created_at, delivered_at)
             VALUES ($1, $2, $3, 'inbound', 'user', $4, $5, $6, 'delivered', $7, $8, $8) ON CONFLICT (id) DO NOTHING
           )
           UPDATE chats SET needs_response = (assistant_kind = 'ai'), updated_at = $8, version = version + 1,
             stream_revision = $9 WHERE id = $2`,
          [
            d.messageId,
            d.chatId,
            d.workspaceId,
            d.content,
            d.subject ?? null,
            d.memberId,
            d.providerMessageId,
            d.receivedAt,
            revision,
          ],
        );
        return;
      }
      case 'MessageSent': {
        const d = event.data;
        // One round trip (three tables, none read by another part): the projection is
        // sequential, and every write's read-your-writes waits on it.
        await em.query(
          `WITH message AS (
             INSERT INTO chat_messages (id, chat_id, workspace_id, direction, role, content, sender_member_id, encoding,
               segments, status, created_at, scheduled_for)
             VALUES ($1, $2, $3, 'outbound', $4, $5, $6, $7, $8, 'sent', $9, $10) ON CONFLICT (id) DO NOTHING
           ), deliveries AS (
             INSERT INTO message_deliveries (message_id, member_id, chat_id, workspace_id, status, updated_at, scheduled_for)
             SELECT $1, m, $2, $3, 'sent', $9, ($12::jsonb ->> m::text)::timestamptz
             FROM unnest($11::int[]) AS m ON CONFLICT DO NOTHING
           )
           -- Only the assistant's (or its operator's) answer clears needsResponse; keyword replies do not.
           UPDATE chats SET needs_response = needs_response AND $13, updated_at = $9, version = version + 1,
             stream_revision = $14 WHERE id = $2`,
          [
            d.messageId,
            d.chatId,
            d.workspaceId,
            d.role,
            d.content,
            d.senderMemberId,
            d.encoding,
            d.segments,
            d.sentAt,
            latest(d.scheduledFor),
            d.recipientMemberIds,
            JSON.stringify(d.scheduledFor ?? {}),
            d.role === 'system',
            revision,
          ],
        );
        return;
      }
      case 'MessageDispatched': {
        const d = event.data;
        await em.query(
          `WITH delivery AS (
             UPDATE message_deliveries SET provider_message_id = $3, updated_at = $4 WHERE message_id = $1 AND member_id = $2
           )
           UPDATE chats SET stream_revision = $6 WHERE id = $5`,
          [d.messageId, d.recipientMemberId, d.providerMessageId, d.dispatchedAt, d.chatId, revision],
        );
        return;
      }
      case 'MessageDelivered':
      case 'MessageFailed': {
        const d = event.data;
        const delivered = event.type === 'MessageDelivered';
        const at = event.type === 'MessageDelivered' ? event.data.deliveredAt : event.data.failedAt;
        await em.query(
          `UPDATE message_deliveries SET status = $3, failure_reason = $4,
             provider_message_id = COALESCE($5, provider_message_id), updated_at = $6, delivered_at = $7
           WHERE message_id = $1 AND member_id = $2 AND status = 'sent'`,
          [
            d.messageId,
            d.recipientMemberId,
            delivered ? 'delivered' : 'failed',
            event.type === 'MessageFailed' ? event.data.reason : null,
            d.providerMessageId,
            at,
            delivered ? at : null,
          ],
        );
        await this.summarise(em, d.messageId, d.chatId, revision);
        return;
      }
    }
  }

  /**
   * The message's status from its deliveries (a statement after the delivery's own update,
   * which it must see), and the chat's stream revision in the same round trip: delivery
   * events change no chat field, but a pinned write must expect their revision.
   */
  private async summarise(
    em: EntityManager,
    messageId: number,
    chatId: number,
    revision: string,
  ): Promise<void> {
    await em.query(
      `WITH chat AS (UPDATE chats SET stream_revision = $3 WHERE id = $2)
       UPDATE chat_messages m SET
         status = s.status,
         failure_reason = CASE WHEN s.status = 'failed' THEN s.reason END,
         provider_message_id = s.provider_message_id,
         delivered_at = CASE WHEN s.status = 'delivered' THEN s.delivered_at END
       FROM (
         SELECT CASE WHEN bool_or(status = 'sent') THEN 'sent'
                     WHEN bool_or(status = 'delivered') THEN 'delivered' ELSE 'failed' END AS status,
                (array_agg(failure_reason ORDER BY member_id) FILTER (WHERE status = 'failed'))[1] AS reason,
                (array_agg(provider_message_id ORDER BY member_id) FILTER (WHERE provider_message_id IS NOT NULL))[1]
                  AS provider_message_id,
                max(delivered_at) AS delivered_at
         FROM message_deliveries WHERE message_id = $1
       ) s
       WHERE m.id = $1`,
      [messageId, chatId, revision],
    );
  }

  /**
   * The messages' status from their deliveries (a statement after the deliveries' own
   * update, which it must see). A message without deliveries sums up as failed.
   */
  private async summariseMany(em: EntityManager, messageIds: number[]): Promise<void> {
    await em.query(
      `UPDATE chat_messages m SET
         status = s.status,
         failure_reason = CASE WHEN s.status = 'failed' THEN s.reason END,
         provider_message_id = s.provider_message_id,
         delivered_at = CASE WHEN s.status = 'delivered' THEN s.delivered_at END
       FROM unnest($1::int[]) AS x(id) CROSS JOIN LATERAL (
         SELECT CASE WHEN bool_or(status = 'sent') THEN 'sent'
                     WHEN bool_or(status = 'delivered') THEN 'delivered' ELSE 'failed' END AS status,
                (array_agg(failure_reason ORDER BY member_id) FILTER (WHERE status = 'failed'))[1] AS reason,
                (array_agg(provider_message_id ORDER BY member_id) FILTER (WHERE provider_message_id IS NOT NULL))[1]
                  AS provider_message_id,
                max(delivered_at) AS delivered_at
         FROM message_deliveries WHERE message_id = x.id
       ) s
       WHERE m.id = x.id`,
      [messageIds],
    );
  }
}
