import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PaginatedResponse } from '../../../core/http/pagination';
import { ASSISTANT_KINDS, CHANNELS } from '../domain/chat.events';

export class ParticipantResponse {
  @ApiProperty() memberId: number;
  @ApiProperty({ enum: ['user', 'supervisor', 'contributor'] }) role: string;
  @ApiProperty({ nullable: true, type: String }) name: string | null;
}

export class ChatResponse {
  @ApiProperty() id: number;
  @ApiProperty({ format: 'uuid' }) uuid: string;
  @ApiProperty({ enum: CHANNELS }) channel: string;
  @ApiProperty({
    nullable: true,
    type: Number,
    description: 'the workflow the chat runs; null: a simple chat',
  })
  workflowId: number | null;
  @ApiProperty({ nullable: true, type: Number, description: 'the assignment running the workflow' })
  assignmentId: number | null;
  @ApiProperty() memberId: number;
  @ApiProperty({ nullable: true, type: Number }) phoneNumberId: number | null;
  @ApiProperty({ enum: ASSISTANT_KINDS }) assistantKind: string;
  @ApiProperty({ nullable: true, type: Number }) assistantMemberId: number | null;
  @ApiProperty({ nullable: true, type: String }) title: string | null;
  @ApiProperty() paused: boolean;
  @ApiProperty() needsResponse: boolean;
  @ApiProperty({ type: [ParticipantResponse] }) participants: ParticipantResponse[];
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
}

export class ChatListResponse extends PaginatedResponse(ChatResponse) {}

export class DeliveryResponse {
  @ApiProperty() memberId: number;
  @ApiProperty({ enum: ['sent', 'delivered', 'failed'] }) status: string;
  @ApiProperty({
    nullable: true,
    type: String,
    description: "no_consent, opted_out, no_address, or the provider's",
  })
  failureReason: string | null;
  @ApiProperty({ nullable: true, type: String }) providerMessageId: string | null;
  @ApiProperty({ nullable: true, type: String }) deliveredAt: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: "held by the workspace's SMS quiet hours: when it goes out (ISO 8601)",
  })
  scheduledFor: string | null;
}

export class MessageResponse {
  @ApiProperty() id: number;
  @ApiProperty() chatId: number;
  @ApiProperty({ enum: ['inbound', 'outbound'] }) direction: string;
  @ApiProperty({ enum: ['user', 'assistant', 'operator', 'system'] }) role: string;
  @ApiProperty() content: string;
  @ApiPropertyOptional({ nullable: true, type: String }) subject: string | null;
  @ApiProperty({ enum: ['sent', 'delivered', 'failed'] }) status: string;
  @ApiProperty({ nullable: true, type: String }) failureReason: string | null;
  @ApiProperty({ nullable: true, enum: ['GSM-7', 'UCS-2'], type: String }) encoding: string | null;
  @ApiProperty({ nullable: true, type: Number }) segments: number | null;
  @ApiProperty({ type: [DeliveryResponse] }) deliveries: DeliveryResponse[];
  @ApiProperty() createdAt: string;
  @ApiProperty({ nullable: true, type: String }) deliveredAt: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description:
      "held by the workspace's SMS quiet hours: when it goes out (ISO 8601; the latest of its deliveries')",
  })
  scheduledFor: string | null;
}

export class MessageListResponse extends PaginatedResponse(MessageResponse) {}

export class PhoneNumberResponse {
  @ApiProperty() id: number;
  @ApiProperty({ example: '+14155550123' }) number: string;
  @ApiProperty({ nullable: true, type: String }) name: string | null;
  @ApiProperty({ nullable: true, type: Number }) signupRoleId: number | null;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
}

export class PhoneNumberListResponse extends PaginatedResponse(PhoneNumberResponse) {}

export class InboxResponse {
  @ApiProperty() id: number;
  @ApiProperty() email: string;
  @ApiProperty({ nullable: true, type: String }) name: string | null;
  @ApiProperty({ nullable: true, type: Number }) ownerMemberId: number | null;
  @ApiProperty({ type: [Number] }) memberIds: number[];
  @ApiProperty() createdAt: string;
}

export class InboxListResponse extends PaginatedResponse(InboxResponse) {}
