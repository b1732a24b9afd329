import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { PageQueryDto, PaginatedResponse } from '../../../core/http/pagination';
import { MAX_ID } from '../../../core/http/validation';
import { TASK_DESCRIPTION_MAX, TASK_MAX_ASSIGNEES, TASK_NAME_MAX, TASK_SLUG_MAX } from '../domain/task';
import { TASK_PRIORITIES, TASK_STATUSES, TaskPriority, TaskStatus } from '../domain/work.events';
import type { TaskEntity } from '../projections/work.entities';
import { IsOffsetDateTime, OptionalQueryId } from './work-validation';

export class CreateTaskDto {
  @ApiProperty({ maxLength: TASK_NAME_MAX }) @IsString() @MinLength(1) @MaxLength(TASK_NAME_MAX) name: string;

  @ApiPropertyOptional({ maxLength: TASK_NAME_MAX, description: 'default: the name' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(TASK_NAME_MAX)
  title?: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'call-back',
    maxLength: TASK_SLUG_MAX,
    pattern: '^[a-z0-9][a-z0-9_-]*$',
    description: 'unique per workspace (409 when taken)',
  })
  @IsOptional()
  @IsString()
  @MaxLength(TASK_SLUG_MAX)
  slug?: string | null;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: TASK_DESCRIPTION_MAX })
  @IsOptional()
  @IsString()
  @MaxLength(TASK_DESCRIPTION_MAX)
  description?: string | null;

  @ApiPropertyOptional({ type: Number, nullable: true, description: 'a workflow of this workspace' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  workflowId?: number | null;

  @ApiPropertyOptional({
    description: 'visible only to holders of assignments:admin (and created only by them)',
  })
  @IsOptional()
  @IsBoolean()
  isAdmin?: boolean;

  @ApiPropertyOptional({ enum: TASK_PRIORITIES, default: 'normal' })
  @IsOptional()
  @IsIn(TASK_PRIORITIES)
  priority?: TaskPriority;

  @ApiPropertyOptional({ type: String, nullable: true, format: 'date-time', example: '2026-12-01T09:00:00Z' })
  @IsOptional()
  @IsOffsetDateTime()
  dueAt?: string | null;

  @ApiPropertyOptional({ type: [Number], maxItems: TASK_MAX_ASSIGNEES, description: 'member ids' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(TASK_MAX_ASSIGNEES)
  @IsInt({ each: true })
  @Min(1, { each: true })
  @Max(MAX_ID, { each: true })
  assignees?: number[];
}

export class UpdateTaskDto {
  @ApiPropertyOptional({ maxLength: TASK_NAME_MAX })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(TASK_NAME_MAX)
  name?: string;

  @ApiPropertyOptional({ maxLength: TASK_NAME_MAX })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(TASK_NAME_MAX)
  title?: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: TASK_DESCRIPTION_MAX })
  @IsOptional()
  @IsString()
  @MaxLength(TASK_DESCRIPTION_MAX)
  description?: string | null;

  @ApiPropertyOptional({ enum: TASK_STATUSES })
  @IsOptional()
  @IsIn(TASK_STATUSES)
  status?: TaskStatus;

  @ApiPropertyOptional({ enum: TASK_PRIORITIES })
  @IsOptional()
  @IsIn(TASK_PRIORITIES)
  priority?: TaskPriority;

  @ApiPropertyOptional({ type: String, nullable: true, format: 'date-time', example: '2026-12-01T09:00:00Z' })
  @IsOptional()
  @IsOffsetDateTime()
  dueAt?: string | null;

  @ApiPropertyOptional({
    type: [Number],
    maxItems: TASK_MAX_ASSIGNEES,
    description: 'member ids (replaces the list)',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(TASK_MAX_ASSIGNEES)
  @IsInt({ each: true })
  @Min(1, { each: true })
  @Max(MAX_ID, { each: true })
  assignees?: number[];
}

export class ListTasksQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: TASK_STATUSES })
  @IsOptional()
  @IsIn(TASK_STATUSES)
  status?: TaskStatus;

  @ApiPropertyOptional({ description: 'tasks assigned to this member id' })
  @OptionalQueryId()
  assignee?: number;
  @ApiPropertyOptional() @OptionalQueryId() workflowId?: number;

  @ApiPropertyOptional({ enum: TASK_PRIORITIES })
  @IsOptional()
  @IsIn(TASK_PRIORITIES)
  priority?: TaskPriority;
}

export class TaskResponse {
  @ApiProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty() title: string;
  @ApiProperty({ type: String, nullable: true }) slug: string | null;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ type: Number, nullable: true }) workflowId: number | null;
  @ApiProperty() isAdmin: boolean;
  @ApiProperty({ enum: TASK_STATUSES }) status: TaskStatus;
  @ApiProperty({ enum: TASK_PRIORITIES }) priority: TaskPriority;
  @ApiProperty({ type: String, nullable: true }) dueAt: string | null;
  @ApiProperty({ type: [Number] }) assignees: number[];
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;

  static of(row: TaskEntity): TaskResponse {
    return {
      id: row.id,
      name: row.name,
      title: row.title,
      slug: row.slug,
      description: row.description,
      workflowId: row.workflowId,
      isAdmin: row.isAdmin,
      status: row.status,
      priority: row.priority,
      dueAt: row.dueAt?.toISOString() ?? null,
      assignees: row.assignees,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    };
  }
}

export class TaskListResponse extends PaginatedResponse(TaskResponse) {}
