import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { AssistantKind, Channel, DeliveryStatus, MessageRole, Participant } from '../domain/chat.events';

@Entity({ name: 'phone_numbers' })
export class PhoneNumberEntity {
  @PrimaryColumn('integer') id: number;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  @Column('text') number: string;
  @Column('text', { nullable: true }) name: string | null;
  @Column('integer', { name: 'signup_role_id', nullable: true }) signupRoleId: number | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
  @Column('integer') version: number;
  @Column('bigint', { name: 'stream_revision' }) streamRevision: string;
}

@Entity({ name: 'inboxes' })
export class InboxEntity {
  @PrimaryColumn('integer') id: number;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  @Column('text') email: string;
  @Column('text', { nullable: true }) name: string | null;
  @Column('integer', { name: 'owner_member_id', nullable: true }) ownerMemberId: number | null;
  @Column('integer', { name: 'granted_member_ids', array: true }) grantedMemberIds: number[];
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
}

@Entity({ name: 'chats' })
export class ChatEntity {
  @PrimaryColumn('integer') id: number;
  @Column('uuid') uuid: string;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  @Column('text') channel: Channel;
  @Column('integer', { name: 'member_id' }) memberId: number;
  @Column('integer', { name: 'phone_number_id', nullable: true }) phoneNumberId: number | null;
  @Column('text', { name: 'assistant_kind' }) assistantKind: AssistantKind;
  @Column('integer', { name: 'assistant_member_id', nullable: true }) assistantMemberId: number | null;
  @Column('jsonb') participants: Participant[];
  /** The participants' member ids, for "chats I take part in" (GIN index). */
  @Column('integer', { name: 'participant_ids', array: true }) participantIds: number[];
  @Column('text', { nullable: true }) title: string | null;
  @Column('integer', { name: 'workflow_id', nullable: true }) workflowId: number | null;
  @Column('integer', { name: 'assignment_id', nullable: true }) assignmentId: number | null;
  @Column('boolean') paused: boolean;
  @Column('boolean', { name: 'needs_response' }) needsResponse: boolean;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
  @Column('integer') version: number;
  @Column('bigint', { name: 'stream_revision' }) streamRevision: string;
}

@Entity({ name: 'chat_messages' })
export class ChatMessageEntity {
  @PrimaryColumn('integer') id: number;
  @Column('integer', { name: 'chat_id' }) chatId: number;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  @Column('text') direction: 'inbound' | 'outbound';
  @Column('text') role: MessageRole;
  @Column('text') content: string;
  @Column('text', { nullable: true }) subject: string | null;
  @Column('integer', { name: 'sender_member_id', nullable: true }) senderMemberId: number | null;
  @Column('text', { nullable: true }) encoding: string | null;
  @Column('integer', { nullable: true }) segments: number | null;
  @Column('text') status: DeliveryStatus;
  @Column('text', { name: 'failure_reason', nullable: true }) failureReason: string | null;
  @Column('text', { name: 'provider_message_id', nullable: true }) providerMessageId: string | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'delivered_at', nullable: true }) deliveredAt: Date | null;
  /** Held by quiet hours until then (the latest of its deliveries'). */
  @Column('timestamptz', { name: 'scheduled_for', nullable: true }) scheduledFor: Date | null;
}

@Entity({ name: 'message_deliveries' })
export class MessageDeliveryEntity {
  @PrimaryColumn('integer', { name: 'message_id' }) messageId: number;
  @PrimaryColumn('integer', { name: 'member_id' }) memberId: number;
  @Column('integer', { name: 'chat_id' }) chatId: number;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  @Column('text') status: DeliveryStatus;
  @Column('text', { name: 'failure_reason', nullable: true }) failureReason: string | null;
  @Column('text', { name: 'provider_message_id', nullable: true }) providerMessageId: string | null;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
  @Column('timestamptz', { name: 'delivered_at', nullable: true }) deliveredAt: Date | null;
  @Column('timestamptz', { name: 'scheduled_for', nullable: true }) scheduledFor: Date | null;
}

@Entity({ name: 'sms_opt_outs' })
export class SmsOptOutEntity {
  @PrimaryColumn('uuid', { name: 'workspace_id' }) workspaceId: string;
  @PrimaryColumn('integer', { name: 'member_id' }) memberId: number;
  @Column('text') keyword: string;
  @Column('timestamptz', { name: 'opted_out_at' }) optedOutAt: Date;
}

export const MESSAGING_ENTITIES = [
  PhoneNumberEntity,
  InboxEntity,
  ChatEntity,
  ChatMessageEntity,
  MessageDeliveryEntity,
  SmsOptOutEntity,
];
