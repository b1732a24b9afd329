import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min, registerDecorator } from 'class-validator';
import { PageQueryDto, PaginatedResponse, parseDateTime } from '../../../core/http/pagination';
import { MAX_ID } from '../../../core/http/validation';
import {
  DELIVERY_STATUSES,
  DeliveryStatus,
  WebhookDeliveryEntity,
} from '../delivery/webhook-delivery.entity';

function IsDateTimeWithOffset(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isDateTimeWithOffset',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: { validate: (v: unknown) => parseDateTime(v) !== null },
      options: {
        message: `${String(propertyName)} must be an ISO 8601 date-time with an offset, e.g. 2024-05-01T12:00:00Z`,
      },
    });
}

export class ListWebhookLogsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_ID })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  ruleId?: number;

  @ApiPropertyOptional({ description: 'a type or alias' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  eventType?: string;

  @ApiPropertyOptional({ enum: DELIVERY_STATUSES })
  @IsOptional()
  @IsIn(DELIVERY_STATUSES)
  status?: DeliveryStatus;

  @ApiPropertyOptional({ format: 'date-time', description: 'created at or after (like startTime)' })
  @IsOptional()
  @IsDateTimeWithOffset()
  from?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'created before (like endTime)' })
  @IsOptional()
  @IsDateTimeWithOffset()
  to?: string;
}

export class RecoverDeliveriesDto {
  @ApiProperty({ minimum: 1, maximum: MAX_ID })
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  ruleId: number;

  @ApiProperty({ format: 'date-time', description: 'deliveries that ended failed at or after this time' })
  @IsString()
  @IsDateTimeWithOffset()
  since: string;
}

export class DeliveryAttemptResponse {
  @ApiProperty({ description: '1, 2, ... within the delivery, counting on across redeliveries' })
  attempt: number;
  @ApiProperty({ format: 'date-time' }) at: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'as sent, signatures included (never the secret)',
  })
  requestHeaders: Record<string, string>;
  @ApiProperty({ nullable: true, type: Number }) responseStatus: number | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description:
      "the first 1024 characters; null to a caller who may not read the delivery's body (a receiver may echo it)",
  })
  responseBodyExcerpt: string | null;
  @ApiProperty({ nullable: true, type: String }) error: string | null;
  @ApiProperty() durationMs: number;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) nextRetryAt: string | null;
}

export class WebhookDeliveryResponse {
  @ApiProperty({ format: 'uuid', description: 'also the webhook-id and X-Webhook-Id of every attempt' })
  id: string;
  @ApiProperty() ruleId: number;
  @ApiProperty({ nullable: true, type: String, format: 'uuid' }) eventId: string | null;
  @ApiProperty() eventType: string;
  @ApiProperty({ enum: DELIVERY_STATUSES }) status: DeliveryStatus;
  @ApiProperty({ description: 'sent by POST /event-rules/{ruleId}/test' }) isTest: boolean;
  @ApiProperty({ description: 'attempts made, over every round (redeliveries and recoveries included)' })
  attemptCount: number;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) nextRetryAt: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) completedAt: string | null;
  @ApiProperty() redeliveries: number;
  @ApiProperty({ type: [DeliveryAttemptResponse] }) attempts: DeliveryAttemptResponse[];
  @ApiPropertyOptional({ description: 'the exact body every attempt sends (one delivery only)' })
  requestBody?: string;

  /**
   * `withBody`: the exact body sent. `mayReadContent`: the caller may read what the delivery
   * carries, so also what the receiver answered, which may echo it (else null).
   */
  static of(d: WebhookDeliveryEntity, withBody = false, mayReadContent = withBody): WebhookDeliveryResponse {
    return {
      id: d.id,
      ruleId: d.ruleId,
      eventId: d.eventId,
      eventType: d.eventType,
      status: d.status,
      isTest: d.isTest,
      attemptCount: d.attempts.length,
      nextRetryAt: d.status === 'pending' ? (d.nextAttemptAt?.toISOString() ?? null) : null,
      createdAt: d.createdAt.toISOString(),
      completedAt: d.completedAt?.toISOString() ?? null,
      redeliveries: d.redeliveries,
      attempts: mayReadContent ? d.attempts : d.attempts.map((a) => ({ ...a, responseBodyExcerpt: null })),
      ...(withBody ? { requestBody: d.body } : {}),
    };
  }
}

export class WebhookDeliveryListResponse extends PaginatedResponse(WebhookDeliveryResponse) {}

export class RecoverDeliveriesResponse {
  @ApiProperty({ description: 'how many failed deliveries were queued again' }) requeued: number;
  @ApiProperty({ type: [String] }) deliveryIds: string[];
}

export class TestDeliveryResponse {
  @ApiProperty({ format: 'uuid' }) deliveryId: string;
  @ApiProperty({ description: 'the receiver answered 2xx in time' }) succeeded: boolean;
  @ApiProperty({ type: DeliveryAttemptResponse }) attempt: DeliveryAttemptResponse;
}
