import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { PageQueryDto, PaginatedResponse } from '../../../core/http/pagination';
import { MAX_PER_SECOND_MAX, RULE_NAME_MAX } from '../domain/event-rule';
import { PAYLOAD_FORMATS, PayloadFormat, WEBHOOK_SEND } from '../domain/event-rule.events';
import { ACCEPTED_EVENT_TYPES } from '../domain/event-types';
import { OUTBOUND_URL_MAX as WEBHOOK_URL_MAX } from '../../../core/net/outbound-address';
import type { EventRuleEntity } from '../projections/event-rule.entity';

export const SECRET_MIN = 16;
export const SECRET_MAX = 256;
const FILTER_MAX = 200;
const SECRET_EXAMPLE = 'whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3';
const EVENT_TYPE_DESCRIPTION = `one of ${ACCEPTED_EVENT_TYPES.join(', ')} (record.created and record.updated are aliases of data_record:created and data_record:updated)`;

export class ActionParamsDto {
  @ApiPropertyOptional({ maxLength: WEBHOOK_URL_MAX, example: 'https://hooks.example.com/workspace' })
  @IsOptional()
  @IsString()
  @MaxLength(WEBHOOK_URL_MAX)
  webhookUrl?: string;

  @ApiPropertyOptional({
    minLength: SECRET_MIN,
    maxLength: SECRET_MAX,
    example: SECRET_EXAMPLE,
    description: 'HMAC key of the signatures; stored encrypted, never returned (only hasSigningSecret)',
  })
  @IsOptional()
  @IsString()
  @MinLength(SECRET_MIN)
  @MaxLength(SECRET_MAX)
  signingSecret?: string;

  @ApiPropertyOptional({ enum: PAYLOAD_FORMATS, default: 'flat' })
  @IsOptional()
  @IsIn(PAYLOAD_FORMATS)
  payloadFormat?: PayloadFormat;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: MAX_PER_SECOND_MAX,
    nullable: true,
    type: Number,
    description:
      'deliveries per second to this receiver at most; later ones wait, none is dropped. null (PUT): no limit',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_PER_SECOND_MAX)
  maxPerSecond?: number | null;
}

/**
 * Both forms of the spec: long (`name`, `eventType`, `actionType`, `actionParams`) and the
 * quick reference's short one (`trigger`, `action`, `webhookUrl`). Which fields are
 * required depends on the form, so the check is `ruleInputOf`, not decorators.
 */
export class CreateEventRuleDto {
  @ApiPropertyOptional({
    maxLength: RULE_NAME_MAX,
    description: 'long form; short form: defaults to the trigger',
  })
  @IsOptional()
  @IsString()
  @MaxLength(RULE_NAME_MAX)
  name?: string;

  @ApiPropertyOptional({ description: `long form: ${EVENT_TYPE_DESCRIPTION}`, example: 'member:updated' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  eventType?: string;

  @ApiPropertyOptional({ enum: [WEBHOOK_SEND], description: 'long form' })
  @IsOptional()
  @IsIn([WEBHOOK_SEND])
  actionType?: string;

  // No description here: a described $ref becomes allOf in the document, which clients read worse.
  @ApiPropertyOptional({ type: ActionParamsDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => ActionParamsDto)
  actionParams?: ActionParamsDto;

  @ApiPropertyOptional({ description: `short form: the event type, ${EVENT_TYPE_DESCRIPTION}` })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  trigger?: string;

  @ApiPropertyOptional({ enum: [WEBHOOK_SEND, 'webhook'], description: 'short form' })
  @IsOptional()
  @IsIn([WEBHOOK_SEND, 'webhook'])
  action?: string;

  @ApiPropertyOptional({
    maxLength: WEBHOOK_URL_MAX,
    example: 'https://hooks.example.com/workspace',
    description: 'short form',
  })
  @IsOptional()
  @IsString()
  @MaxLength(WEBHOOK_URL_MAX)
  webhookUrl?: string;

  @ApiPropertyOptional({
    minLength: SECRET_MIN,
    maxLength: SECRET_MAX,
    example: SECRET_EXAMPLE,
    description: 'short form',
  })
  @IsOptional()
  @IsString()
  @MinLength(SECRET_MIN)
  @MaxLength(SECRET_MAX)
  signingSecret?: string;

  @ApiPropertyOptional({
    maxLength: FILTER_MAX,
    nullable: true,
    type: String,
    description: 'chat:summary only: deliver summaries of this channel. null (PUT): any channel',
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(FILTER_MAX)
  channel?: string | null;

  @ApiPropertyOptional({
    format: 'uuid',
    nullable: true,
    type: String,
    description: 'chat:summary only: deliver summaries of this workflow. null (PUT): any workflow',
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(FILTER_MAX)
  workflowUuid?: string | null;

  @ApiPropertyOptional({
    default: true,
    description: 'false stops deliveries (or saves the rule stopped); true resumes them from new events',
  })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;
}

export class UpdateEventRuleDto extends CreateEventRuleDto {}

export class ListEventRulesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ description: 'a type or alias; rules of its canonical type' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  eventType?: string;

  @ApiPropertyOptional({ enum: ['true', 'false'] })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsBoolean()
  enabled?: boolean;
}

export class ActionParamsResponse {
  @ApiProperty() webhookUrl: string;
  @ApiProperty({ enum: PAYLOAD_FORMATS }) payloadFormat: PayloadFormat;
  @ApiProperty({ nullable: true, type: Number }) maxPerSecond: number | null;
  @ApiProperty({ description: 'whether deliveries are signed; the secret itself is never returned' })
  hasSigningSecret: boolean;
}

export class EventRuleResponse {
  @ApiProperty() id: number;
  @ApiProperty({ format: 'uuid' }) uuid: string;
  @ApiProperty() name: string;
  @ApiProperty({ example: 'member:updated' }) eventType: string;
  @ApiProperty({ enum: [WEBHOOK_SEND] }) actionType: string;
  @ApiProperty({ type: ActionParamsResponse }) actionParams: ActionParamsResponse;
  @ApiPropertyOptional() channel?: string;
  @ApiPropertyOptional() workflowUuid?: string;
  @ApiProperty() enabled: boolean;
  @ApiProperty() hasSigningSecret: boolean;
  @ApiProperty({ nullable: true, type: String, enum: ['manual', 'receiver_gone', 'sustained_failure'] })
  disabledReason: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) disabledAt: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;

  static of(r: EventRuleEntity): EventRuleResponse {
    return {
      id: r.id,
      uuid: r.uuid,
      name: r.name,
      eventType: r.eventType,
      actionType: r.actionType,
      actionParams: {
        webhookUrl: r.webhookUrl,
        payloadFormat: r.payloadFormat,
        maxPerSecond: r.maxPerSecond,
        hasSigningSecret: r.secret !== null,
      },
      ...(r.filters.channel !== undefined ? { channel: r.filters.channel } : {}),
      ...(r.filters.workflowUuid !== undefined ? { workflowUuid: r.filters.workflowUuid } : {}),
      enabled: r.enabled,
      hasSigningSecret: r.secret !== null,
      disabledReason: r.disabledReason,
      disabledAt: r.disabledAt?.toISOString() ?? null,
      createdAt: r.createdAt.toISOString(),
      updatedAt: r.updatedAt.toISOString(),
    };
  }
}

export class EventRuleListResponse extends PaginatedResponse(EventRuleResponse) {}

export class RotatedSecretResponse {
  @ApiProperty({ description: 'the new signing secret, shown this once' }) signingSecret: string;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'date-time',
    description: 'until then deliveries also carry a signature made with the previous secret',
  })
  previousSecretValidUntil: string | null;
  @ApiProperty({ type: EventRuleResponse }) rule: EventRuleResponse;
}
