import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { NotFoundError } from '../../../core/http/domain-errors';
import { applyListFilters, PageRequest, Paginated, paginated } from '../../../core/http/pagination';
import { withVersion } from '../../../core/http/preconditions';
import { assertCalendarAccess, CalendarCaller, calendarVisibility } from '../domain/calendar-access.policy';
import { CalendarResponse } from '../http/calendar.dto';
import { CalendarEntity } from '../projections/calendar.entity';

export class ListCalendarsQuery {
  constructor(
    readonly workspaceId: string,
    readonly filters: { ownerMemberId?: number },
    readonly caller: CalendarCaller,
    readonly page: PageRequest,
  ) {}
}

export class GetCalendarQuery {
  constructor(
    readonly workspaceId: string,
    readonly calendarId: number,
    readonly caller: CalendarCaller,
  ) {}
}

/** A workspace's calendars by id; without calendars:read, only the caller's own. */
@QueryHandler(ListCalendarsQuery)
export class ListCalendarsHandler implements IQueryHandler<ListCalendarsQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: ListCalendarsQuery): Promise<Paginated<CalendarResponse>> {
    const qb = this.db
      .getRepository(CalendarEntity)
      .createQueryBuilder('c')
      .where('c.workspace_id = :workspaceId', { workspaceId: q.workspaceId });
    const visible = calendarVisibility(q.caller);
    if ('ownerMemberId' in visible) qb.andWhere('c.owner_member_id = :self', { self: visible.ownerMemberId });
    if (q.filters.ownerMemberId !== undefined)
      qb.andWhere('c.owner_member_id = :owner', { owner: q.filters.ownerMemberId });
    const [rows, total] = await applyListFilters(qb, q.page, { search: ['c.name'], time: 'c.created_at' })
      .orderBy('c.id', 'ASC')
      .skip(q.page.offset)
      .take(q.page.pageSize)
      .getManyAndCount();
    return paginated(rows.map(CalendarResponse.of), total, q.page);
  }
}

/** One calendar: 404 outside the workspace, then its owner or calendars:read (403). */
@QueryHandler(GetCalendarQuery)
export class GetCalendarHandler implements IQueryHandler<GetCalendarQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: GetCalendarQuery): Promise<CalendarResponse> {
    const row = await this.db
      .getRepository(CalendarEntity)
      .findOneBy({ id: q.calendarId, workspaceId: q.workspaceId });
    if (!row) throw new NotFoundError('Calendar not found');
    assertCalendarAccess(q.caller, row.ownerMemberId, 'read');
    return withVersion(CalendarResponse.of(row), row.version);
  }
}
