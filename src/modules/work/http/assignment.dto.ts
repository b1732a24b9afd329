import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { PageQueryDto, PaginatedResponse } from '../../../core/http/pagination';
import { MAX_ID } from '../../../core/http/validation';
import { ASSIGNMENT_STATUSES, AssignmentStatus } from '../domain/work.events';
import type { AssignmentEntity } from '../projections/work.entities';
import { IsOffsetDateTime, OptionalQueryId } from './work-validation';

export class CreateAssignmentDto {
  @ApiProperty({ description: 'the workflow to start' })
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  workflowId: number;

  @ApiPropertyOptional({
    description: 'the member it runs for (default: your own); another member needs assignments:write',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  memberId?: number;
}

export class UpdateAssignmentDto {
  @ApiProperty({
    enum: ASSIGNMENT_STATUSES,
    description: 'an active assignment ends once; an ended one stays',
  })
  @IsIn(ASSIGNMENT_STATUSES)
  status: AssignmentStatus;

  @ApiPropertyOptional({
    format: 'date-time',
    example: '2026-12-01T09:00:00Z',
    description: 'when it ended (ISO 8601 with an offset; default now); only with an end status',
  })
  @IsOptional()
  @IsOffsetDateTime()
  completedAt?: string;
}

export class ListAssignmentsQueryDto extends PageQueryDto {
  @ApiPropertyOptional() @OptionalQueryId() memberId?: number;
  @ApiPropertyOptional() @OptionalQueryId() workflowId?: number;

  @ApiPropertyOptional({ enum: ASSIGNMENT_STATUSES })
  @IsOptional()
  @IsIn(ASSIGNMENT_STATUSES)
  status?: AssignmentStatus;
}

export class AssignmentResponse {
  @ApiProperty() id: number;
  @ApiProperty() workflowId: number;
  @ApiProperty({ format: 'uuid' }) workflowUuid: string;
  @ApiProperty() memberId: number;
  @ApiProperty({ enum: ASSIGNMENT_STATUSES }) status: AssignmentStatus;
  @ApiProperty() startedAt: string;
  @ApiProperty({ type: String, nullable: true }) completedAt: string | null;
  @ApiProperty({ description: 'when it started' }) createdAt: string;
  @ApiProperty() updatedAt: string;

  static of(row: AssignmentEntity): AssignmentResponse {
    return {
      id: row.id,
      workflowId: row.workflowId,
      workflowUuid: row.workflowUuid,
      memberId: row.memberId,
      status: row.status,
      startedAt: row.startedAt.toISOString(),
      completedAt: row.completedAt?.toISOString() ?? null,
      createdAt: row.startedAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    };
  }
}

export class AssignmentListResponse extends PaginatedResponse(AssignmentResponse) {}
