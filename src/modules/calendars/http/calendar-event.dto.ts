import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
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
import { EVENT_ATTENDEES_MAX, EVENT_DESCRIPTION_MAX, EVENT_TITLE_MAX } from '../domain/calendar-event';
import type { CalendarEventEntity } from '../projections/calendar-event.entity';
import { IsAfter, IsOffsetDateTime } from './date-time';

const TIME = { type: String, format: 'date-time', example: '2024-05-01T09:00:00+05:30' } as const;
/** Examples of an end: after the start's example, so a body made of examples is valid. */
const END_TIME = { ...TIME, example: '2024-05-01T10:00:00+05:30' } as const;

export class CreateCalendarEventDto {
  @ApiProperty({ maxLength: EVENT_TITLE_MAX, example: 'Intake call' })
  @IsString()
  @MinLength(1)
  @MaxLength(EVENT_TITLE_MAX)
  title: string;

  @ApiProperty({ ...TIME, description: 'ISO 8601 with an offset' })
  @IsOffsetDateTime()
  startTime: string;

  @ApiPropertyOptional({
    ...END_TIME,
    description: 'ISO 8601 with an offset, after startTime; left out: an event at one instant',
  })
  @IsOptional()
  @IsOffsetDateTime()
  @IsAfter('startTime')
  endTime?: string;

  @ApiPropertyOptional({
    description:
      'the calendar it is on; its owner may manage it without calendars:write. Left out: on no calendar (calendars:write)',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  calendarId?: number;

  @ApiPropertyOptional({
    type: [Number],
    maxItems: EVENT_ATTENDEES_MAX,
    description: 'active members of the workspace',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(EVENT_ATTENDEES_MAX)
  @IsInt({ each: true })
  @Min(1, { each: true })
  @Max(MAX_ID, { each: true })
  attendeeMemberIds?: number[];

  @ApiPropertyOptional({ maxLength: EVENT_DESCRIPTION_MAX })
  @IsOptional()
  @IsString()
  @MaxLength(EVENT_DESCRIPTION_MAX)
  description?: string;
}

/** Only the fields sent change; null clears endTime, description and calendarId. */
export class UpdateCalendarEventDto {
  @ApiPropertyOptional({ maxLength: EVENT_TITLE_MAX })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(EVENT_TITLE_MAX)
  title?: string;

  @ApiPropertyOptional({ ...TIME })
  @IsOptional()
  @IsOffsetDateTime()
  startTime?: string;

  @ApiPropertyOptional({
    ...END_TIME,
    nullable: true,
    description: 'after the (new or kept) startTime; null: an instant',
  })
  @IsOptional()
  @IsOffsetDateTime()
  @IsAfter('startTime')
  endTime?: string | null;

  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    description: 'move it to this calendar (its owner, or calendars:write); null: on no calendar',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  calendarId?: number | null;

  @ApiPropertyOptional({
    type: [Number],
    maxItems: EVENT_ATTENDEES_MAX,
    description: 'replaces the attendees',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(EVENT_ATTENDEES_MAX)
  @IsInt({ each: true })
  @Min(1, { each: true })
  @Max(MAX_ID, { each: true })
  attendeeMemberIds?: number[];

  @ApiPropertyOptional({ type: String, maxLength: EVENT_DESCRIPTION_MAX, nullable: true })
  @IsOptional()
  @IsString()
  @MaxLength(EVENT_DESCRIPTION_MAX)
  description?: string | null;
}

/**
 * The list's window is on the events' own times, not their creation: an event is listed
 * when [its start, its end) overlaps [startTime, endTime) (an event without an end: when
 * its start lies in the window).
 */
export class ListCalendarEventsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    ...TIME,
    description:
      'ISO 8601 with an offset: only events still going on after this instant (an event ending exactly at it is not)',
  })
  @IsOptional()
  @IsOffsetDateTime()
  override startTime?: string = undefined;

  @ApiPropertyOptional({
    ...END_TIME,
    description:
      'ISO 8601 with an offset, after startTime: only events that start before this instant (one starting exactly at it is not)',
  })
  @IsOptional()
  @IsOffsetDateTime()
  @IsAfter('startTime')
  override endTime?: string = undefined;

  @ApiPropertyOptional({ description: 'only events on this calendar' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  calendarId?: number;

  @ApiPropertyOptional({ description: 'only events this member attends' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  attendeeMemberId?: number;
}

export class CalendarEventResponse {
  @ApiProperty() id: number;
  @ApiProperty({ type: 'integer', nullable: true }) calendarId: number | null;
  @ApiProperty() title: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ format: 'date-time', description: 'in UTC' }) startTime: string;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'in UTC; null: an event at one instant',
  })
  endTime: string | null;
  @ApiProperty({ type: [Number] }) attendeeMemberIds: number[];
  @ApiProperty({ type: 'integer', nullable: true, description: 'the member who created it' })
  organizerMemberId: number | null;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;

  static of(
    row: Omit<CalendarEventEntity, 'workspaceId' | 'version' | 'streamRevision'>,
  ): CalendarEventResponse {
    return {
      id: row.id,
      calendarId: row.calendarId,
      title: row.title,
      description: row.description,
      startTime: row.startTime.toISOString(),
      endTime: row.endTime ? row.endTime.toISOString() : null,
      attendeeMemberIds: row.attendeeMemberIds,
      organizerMemberId: row.organizerMemberId,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    };
  }
}

export class CalendarEventListResponse extends PaginatedResponse(CalendarEventResponse) {}
