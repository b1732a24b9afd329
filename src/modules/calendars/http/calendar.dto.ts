import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';
import { PageQueryDto, PaginatedResponse } from '../../../core/http/pagination';
import { MAX_ID } from '../../../core/http/validation';
import { CALENDAR_NAME_MAX } from '../domain/calendar';
import type { CalendarEntity } from '../projections/calendar.entity';

export class CreateCalendarDto {
  @ApiProperty({ maxLength: CALENDAR_NAME_MAX, example: 'Clinic rota' })
  @IsString()
  @MinLength(1)
  @MaxLength(CALENDAR_NAME_MAX)
  name: string;

  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    description:
      "the member who owns it (an active member of the workspace); left out: the caller's own member; " +
      "null: the workspace's own calendar. Another member's or the workspace's needs calendars:write",
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  ownerMemberId?: number | null;
}

export class ListCalendarsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ description: 'only calendars this member owns' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_ID)
  ownerMemberId?: number;
}

export class CalendarResponse {
  @ApiProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty({ type: 'integer', nullable: true, description: "null: the workspace's own calendar" })
  ownerMemberId: number | null;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;

  static of(row: CalendarEntity): CalendarResponse {
    return {
      id: row.id,
      name: row.name,
      ownerMemberId: row.ownerMemberId,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    };
  }
}

export class CalendarListResponse extends PaginatedResponse(CalendarResponse) {}
