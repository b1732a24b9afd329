import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { PageQueryDto, PaginatedResponse } from '../../../../core/http/pagination';
import { KeepAsSent, MAX_ID } from '../../../../core/http/validation';
import { MAX_BULK_RECORDS } from '../../commands/bulk-records.command';
import { EXTERNAL_ID_MAX } from '../../domain/data-record';
import type { FieldValues } from '../../domain/field-values';
import { RECORD_SORTS } from '../../queries/record.queries';

const FIELD_VALUES = {
  type: 'object',
  additionalProperties: true,
  description:
    'field slug → value, checked against the type: text, email, phone (stored E.164), url, select (one of its options) as strings; date YYYY-MM-DD; datetime ISO 8601 with an offset; number; boolean',
} as const;

export class CreateRecordDto {
  @ApiProperty(FIELD_VALUES)
  @IsObject()
  @KeepAsSent()
  fieldValues: Record<string, unknown>;

  @ApiPropertyOptional({
    description: 'the member the record belongs to; another member than the caller needs records:write',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  memberId?: number;

  @ApiPropertyOptional({
    maxLength: EXTERNAL_ID_MAX,
    description:
      'unique per data type; for upsert and sync; trimmed, and blank is a 400 (leave it out for no externalId)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(EXTERNAL_ID_MAX)
  externalId?: string;
}

export class UpdateRecordDto {
  @ApiProperty({
    ...FIELD_VALUES,
    description: `${FIELD_VALUES.description}. Partial: given fields only; null clears one`,
  })
  @IsObject()
  @KeepAsSent()
  fieldValues: Record<string, unknown>;
}

export class UpsertRecordDto {
  @ApiProperty(FIELD_VALUES)
  @IsObject()
  @KeepAsSent()
  fieldValues: Record<string, unknown>;

  @ApiPropertyOptional({ description: 'the member of a new record; an existing record must belong to it' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  memberId?: number;
}

export class BulkRecordsDto {
  @ApiProperty({
    description: `up to ${MAX_BULK_RECORDS} records: {fieldValues, externalId?, memberId?}, each checked on its own`,
    type: 'array',
    items: { type: 'object' },
    maxItems: MAX_BULK_RECORDS,
  })
  @IsArray()
  @ArrayMaxSize(MAX_BULK_RECORDS)
  records: unknown[];

  @ApiPropertyOptional({
    default: false,
    description: 'update records matched by externalId instead of failing them',
  })
  @IsOptional()
  @IsBoolean()
  upsert?: boolean;
}

export class ListRecordsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_ID, description: "only this member's records" })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  memberId?: number;

  @ApiPropertyOptional({ maxLength: EXTERNAL_ID_MAX, description: 'the record holding it; blank is a 400' })
  @IsOptional()
  @IsString()
  @MaxLength(EXTERNAL_ID_MAX)
  externalId?: string;

  @ApiPropertyOptional({ enum: RECORD_SORTS, default: 'id' })
  @IsOptional()
  @IsIn(RECORD_SORTS)
  sort?: (typeof RECORD_SORTS)[number];
}

export class RecordResponse {
  @ApiProperty() id: number;
  @ApiProperty() dataTypeId: number;
  @ApiProperty({ nullable: true, type: Number }) memberId: number | null;
  @ApiProperty({ nullable: true, type: String }) externalId: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true }) fieldValues: FieldValues;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class UpsertRecordResponse extends RecordResponse {
  @ApiProperty({ description: 'true when the record is new' }) wasCreated: boolean;
}

export class RecordListResponse extends PaginatedResponse(RecordResponse) {}

export class BulkResultItemResponse {
  @ApiProperty() index: number;
  @ApiProperty({ enum: ['created', 'updated', 'failed'] }) status: string;
  @ApiProperty({ nullable: true, type: Number }) recordId: number | null;
  @ApiProperty({ nullable: true, type: String }) externalId: string | null;
}

export class BulkErrorResponse {
  @ApiProperty() index: number;
  @ApiProperty({ nullable: true, type: String }) externalId: string | null;
  @ApiProperty({ description: 'what is wrong, naming the field (never its value)' }) detail: string;
}

export class BulkRecordsResponse {
  @ApiProperty({ description: 'true only when every record was written' }) success: boolean;
  @ApiProperty() totalCount: number;
  @ApiProperty() importedCount: number;
  @ApiProperty({ type: [BulkResultItemResponse] }) results: BulkResultItemResponse[];
  @ApiProperty({ type: [BulkErrorResponse], nullable: true }) errors: BulkErrorResponse[] | null;
}
