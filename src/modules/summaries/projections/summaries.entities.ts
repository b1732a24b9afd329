import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { CallFacts, SummaryParticipant, SummarySource, SummaryTrigger } from '../domain/summary.events';

/** The latest summary of each chat. */
@Entity({ name: 'chat_summaries' })
export class ChatSummaryEntity {
  @PrimaryColumn('integer', { name: 'chat_id' }) chatId: number;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  @Column('text') kind: 'chat' | 'call';
  @Column('text') trigger: SummaryTrigger;
  @Column('text') text: string;
  @Column('text') source: SummarySource;
  @Column('text', { nullable: true }) model: string | null;
  @Column('text', { name: 'fallback_reason', nullable: true }) fallbackReason: string | null;
  @Column('text') channel: string;
  @Column('integer', { name: 'workflow_id', nullable: true }) workflowId: number | null;
  @Column('uuid', { name: 'workflow_uuid', nullable: true }) workflowUuid: string | null;
  @Column('jsonb') participants: SummaryParticipant[];
  @Column('integer', { name: 'message_count' }) messageCount: number;
  @Column('integer', { name: 'inbound_count' }) inboundCount: number;
  @Column('integer', { name: 'outbound_count' }) outboundCount: number;
  @Column('timestamptz', { name: 'first_message_at', nullable: true }) firstMessageAt: Date | null;
  @Column('timestamptz', { name: 'last_message_at', nullable: true }) lastMessageAt: Date | null;
  @Column('jsonb', { nullable: true }) call: CallFacts | null;
  @Column('timestamptz', { name: 'summarized_at' }) summarizedAt: Date;
  @Column('uuid', { name: 'event_id' }) eventId: string;
}

/** What a summary needs of a chat that messaging's events tell: its assignment, workflow and message counts. */
@Entity({ name: 'summary_chats' })
export class SummaryChatEntity {
  @PrimaryColumn('integer', { name: 'chat_id' }) chatId: number;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  @Column('integer', { name: 'workflow_id', nullable: true }) workflowId: number | null;
  @Column('integer', { name: 'assignment_id', nullable: true }) assignmentId: number | null;
  @Column('integer', { name: 'inbound_count' }) inboundCount: number;
  @Column('integer', { name: 'outbound_count' }) outboundCount: number;
  @Column('timestamptz', { name: 'first_message_at', nullable: true }) firstMessageAt: Date | null;
  @Column('timestamptz', { name: 'last_message_at', nullable: true }) lastMessageAt: Date | null;
  @Column('integer', { name: 'last_message_id', nullable: true }) lastMessageId: number | null;
  /** The last message the chat's newest summary covered (its `lastMessageId`): the chat is not idle-due while it is the last one. */
  @Column('integer', { name: 'covered_message_id', nullable: true }) coveredMessageId: number | null;
  /** The newest message event (MessageReceived / MessageSent): what an idle summary is caused by and waits for. */
  @Column('jsonb', { name: 'last_event', nullable: true }) lastEvent: LastMessageEvent | null;
}

/** A message event as summary_chats keeps it (positions as decimal strings). */
export interface LastMessageEvent {
  id: string;
  type: string;
  correlationId: string;
  commit: string;
  prepare: string;
}

/** A workflow's uuid (the chat:summary `workflowUuid` filter), from work's WorkflowCreated. */
@Entity({ name: 'summary_workflows' })
export class SummaryWorkflowEntity {
  @PrimaryColumn('integer', { name: 'workflow_id' }) workflowId: number;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  @Column('uuid') uuid: string;
}

export const SUMMARIES_ENTITIES = [ChatSummaryEntity, SummaryChatEntity, SummaryWorkflowEntity];
