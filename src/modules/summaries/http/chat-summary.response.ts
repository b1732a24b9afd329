import { ApiProperty } from '@nestjs/swagger';
import { SUMMARY_TRIGGERS } from '../domain/summary.events';

export class SummaryParticipantResponse {
  @ApiProperty() memberId: number;
  @ApiProperty({ enum: ['user', 'supervisor', 'contributor'] }) role: string;
  @ApiProperty({ nullable: true, type: String }) name: string | null;
}

export class CallSummaryResponse {
  @ApiProperty() callSid: string;
  @ApiProperty() durationSeconds: number;
  @ApiProperty({ enum: ['completed', 'busy', 'no-answer', 'failed', 'canceled'] }) outcome: string;
  @ApiProperty() completedAt: string;
}

export class ChatSummaryResponse {
  @ApiProperty() chatId: number;
  @ApiProperty({ enum: ['chat', 'call'], description: '`call`: the summary of a phone call (call:summary)' })
  kind: 'chat' | 'call';
  @ApiProperty({
    enum: SUMMARY_TRIGGERS,
    description: 'what made it: the chat went quiet, was paused, its assignment completed, or a call ended',
  })
  trigger: string;
  @ApiProperty() text: string;
  @ApiProperty({
    enum: ['model', 'digest'],
    description:
      '`digest`: the plain digest (ASSISTANT_PROVIDER=none, or the model failed: see fallbackReason)',
  })
  source: string;
  @ApiProperty({ nullable: true, type: String, description: 'the model that wrote it' }) model: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: "why a digest stands where the model's text was asked for",
  })
  fallbackReason: string | null;
  @ApiProperty({ enum: ['phone-sms', 'phone-voice', 'web-chat', 'email'] }) channel: string;
  @ApiProperty({ nullable: true, type: Number }) workflowId: number | null;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) workflowUuid: string | null;
  @ApiProperty({ type: [SummaryParticipantResponse] }) participants: SummaryParticipantResponse[];
  @ApiProperty() messageCount: number;
  @ApiProperty({ description: "messages from the chat's member" }) inboundCount: number;
  @ApiProperty({ description: "messages to the chat's people (assistant, operator, system)" })
  outboundCount: number;
  @ApiProperty({ nullable: true, type: String }) firstMessageAt: string | null;
  @ApiProperty({ nullable: true, type: String }) lastMessageAt: string | null;
  @ApiProperty({ nullable: true, type: CallSummaryResponse }) call: CallSummaryResponse | null;
  @ApiProperty() summarizedAt: string;
}
