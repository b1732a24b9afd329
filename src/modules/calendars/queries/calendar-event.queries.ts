import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { NotFoundError } from '../../../core/http/domain-errors';
import { escapeLike, PageRequest, Paginated, paginated } from '../../../core/http/pagination';
import { withVersion } from '../../../core/http/preconditions';
import { assertCalendarAccess, CalendarCaller, calendarVisibility } from '../domain/calendar-access.policy';
import { CalendarEventResponse } from '../http/calendar-event.dto';

export interface CalendarEventFilters {
  calendarId?: number;
  attendeeMemberId?: number;
}

export class ListCalendarEventsQuery {
  constructor(
    readonly workspaceId: string,
    readonly filters: CalendarEventFilters,
    readonly caller: CalendarCaller,
    /** startTime / endTime here are the window the events must overlap, not creation times. */
    readonly page: PageRequest,
  ) {}
}

export class GetCalendarEventQuery {
  constructor(
    readonly workspaceId: string,
    readonly eventId: number,
    readonly caller: CalendarCaller,
  ) {}
}

interface EventRow {
  id: number;
  calendar_id: number | null;
  title: string;
  description: string | null;
  start_time: Date;
  end_time: Date | null;
  attendee_member_ids: number[];
  organizer_member_id: number | null;
  created_at: Date;
  updated_at: Date;
  version: number;
  owner_member_id: number | null;
}

const EVENT_SELECT = `SELECT e.id, e.calendar_id, e.title, e.description, e.start_time, e.end_time, e.attendee_member_ids,
  e.organizer_member_id, e.created_at, e.updated_at, e.version FROM calendar_events e`;

function toResponse(r: EventRow): CalendarEventResponse {
  return CalendarEventResponse.of({
    id: r.id,
    calendarId: r.calendar_id,
    title: r.title,
    description: r.description,
    startTime: r.start_time,
    endTime: r.end_time,
    attendeeMemberIds: r.attendee_member_ids,
    organizerMemberId: r.organizer_member_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  });
}

/**
 * Events overlapping the window, by start time. An event occupies [start, end) (an event
 * without an end, the instant [start, start]); the window is [startTime, endTime), either
 * side open when left out. So an event ending exactly at startTime, or starting exactly at
 * endTime, is outside, and one spanning the whole window inside. `during && window` is
 * answered by the GiST index on (workspace_id, during).
 */
@QueryHandler(ListCalendarEventsQuery)
export class ListCalendarEventsHandler implements IQueryHandler<ListCalendarEventsQuery> {
  constructor(private readonly db: DataSource) {}

  async execute({
    workspaceId,
    filters,
    caller,
    page,
  }: ListCalendarEventsQuery): Promise<Paginated<CalendarEventResponse>> {
    const params: unknown[] = [workspaceId];
    const where = ['e.workspace_id = $1'];
    const visible = calendarVisibility(caller);
    if ('ownerMemberId' in visible) {
      params.push(visible.ownerMemberId);
      where.push(
        `e.calendar_id IN (SELECT c.id FROM calendars c WHERE c.workspace_id = $1 AND c.owner_member_id = $${params.length})`,
      );
    }
    if (page.startTime !== undefined || page.endTime !== undefined) {
      params.push(page.startTime ?? null, page.endTime ?? null);
      where.push(
        `e.during && tstzrange($${params.length - 1}::timestamptz, $${params.length}::timestamptz, '[)')`,
      );
    }
    if (filters.calendarId !== undefined) {
      params.push(filters.calendarId);
      where.push(`e.calendar_id = $${params.length}`);
    }
    if (filters.attendeeMemberId !== undefined) {
      params.push(filters.attendeeMemberId);
      where.push(`$${params.length} = ANY(e.attendee_member_ids)`);
    }
    if (page.search !== undefined) {
      params.push(`%${escapeLike(page.search)}%`);
      where.push(`e.title ILIKE $${params.length} ESCAPE '\\'`);
    }
    const condition = where.join(' AND ');
    // The count and the page in one statement (one snapshot: the total agrees with the items).
    const rows = (await this.db.query(
      `SELECT t.total, p.* FROM (SELECT count(*)::int AS total FROM calendar_events e WHERE ${condition}) t
         LEFT JOIN LATERAL (${EVENT_SELECT} WHERE ${condition} ORDER BY e.start_time, e.id
                            LIMIT $${params.length + 1} OFFSET $${params.length + 2}) p ON true`,
      [...params, page.pageSize, page.offset],
    )) as (EventRow & { total: number })[];
    const items = rows.filter((r) => r.id !== null).map(toResponse);
    return paginated(items, rows[0].total, page);
  }
}

/** One event: 404 outside the workspace, then the owner of its calendar or calendars:read (403). */
@QueryHandler(GetCalendarEventQuery)
export class GetCalendarEventHandler implements IQueryHandler<GetCalendarEventQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: GetCalendarEventQuery): Promise<CalendarEventResponse> {
    const rows = (await this.db.query(
      `SELECT e.id, e.calendar_id, e.title, e.description, e.start_time, e.end_time, e.attendee_member_ids,
              e.organizer_member_id, e.created_at, e.updated_at, e.version, c.owner_member_id
         FROM calendar_events e LEFT JOIN calendars c ON c.id = e.calendar_id AND c.workspace_id = e.workspace_id
        WHERE e.workspace_id = $1 AND e.id = $2`,
      [q.workspaceId, q.eventId],
    )) as EventRow[];
    if (!rows.length) throw new NotFoundError('Calendar event not found');
    assertCalendarAccess(q.caller, rows[0].owner_member_id, 'read');
    return withVersion(toResponse(rows[0]), rows[0].version);
  }
}
