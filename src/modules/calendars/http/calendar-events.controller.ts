import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { RequireScope, SelfAccess } from '../../../core/auth/auth.decorators';
import { CurrentPrincipal } from '../../../core/auth/current-principal.decorator';
import type { Principal } from '../../../core/auth/principal';
import { NotFoundError } from '../../../core/http/domain-errors';
import { CreatedLocation, seg } from '../../../core/http/location';
import { toPageRequest } from '../../../core/http/pagination';
import { ConditionalWrite, IfMatch, pinnedRevision } from '../../../core/http/preconditions';
import {
  CreateCalendarEventCommand,
  DeleteCalendarEventCommand,
  UpdateCalendarEventCommand,
} from '../commands/calendar-event.commands';
import { GetCalendarEventQuery, ListCalendarEventsQuery } from '../queries/calendar-event.queries';
import {
  CalendarEventListResponse,
  CalendarEventResponse,
  CreateCalendarEventDto,
  ListCalendarEventsQueryDto,
  UpdateCalendarEventDto,
} from './calendar-event.dto';
import { callerOf, pathId } from './caller';

const NOT_FOUND = 'Calendar event not found';

/**
 * Calendar events. Open to self-access: the owner of an event's calendar manages it with
 * no scope; others need calendars:read / write / admin (the handlers' policy).
 */
@ApiTags('calendars')
@Controller('w/:wid/calendar-events')
export class CalendarEventsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly db: DataSource,
  ) {}

  private pinnedRevision(workspaceId: string, eventId: number, ifMatch: number[] | undefined) {
    return pinnedRevision(this.db, ifMatch, {
      table: 'calendar_events',
      id: eventId,
      workspaceId,
      notFound: () => new NotFoundError(NOT_FOUND),
    });
  }

  @Post()
  @RequireScope('calendars:write')
  @SelfAccess()
  @CreatedLocation<CalendarEventResponse>(
    (r, p) => `/w/${seg(p.wid.toLowerCase())}/calendar-events/${seg(r.id)}`,
  )
  @ApiCreatedResponse({ type: CalendarEventResponse })
  async create(
    @Param('wid') wid: string,
    @Body() body: CreateCalendarEventDto,
    @CurrentPrincipal() principal: Principal,
  ): Promise<CalendarEventResponse> {
    const workspaceId = wid.toLowerCase();
    const caller = callerOf(principal);
    const eventId = await this.commands.execute<CreateCalendarEventCommand, number>(
      new CreateCalendarEventCommand(workspaceId, { ...body }, caller),
    );
    return this.queries.execute(new GetCalendarEventQuery(workspaceId, eventId, caller));
  }

  /** Events overlapping [startTime, endTime); without calendars:read, those on the caller's own calendars. */
  @Get()
  @RequireScope('calendars:read')
  @SelfAccess()
  @ApiOkResponse({ type: CalendarEventListResponse })
  list(
    @Param('wid') wid: string,
    @Query() query: ListCalendarEventsQueryDto,
    @CurrentPrincipal() principal: Principal,
  ): Promise<CalendarEventListResponse> {
    return this.queries.execute(
      new ListCalendarEventsQuery(
        wid.toLowerCase(),
        { calendarId: query.calendarId, attendeeMemberId: query.attendeeMemberId },
        callerOf(principal),
        toPageRequest(query),
      ),
    );
  }

  @Get(':eventId')
  @RequireScope('calendars:read')
  @SelfAccess()
  @ApiOkResponse({ type: CalendarEventResponse })
  get(
    @Param('wid') wid: string,
    @Param('eventId') eventId: string,
    @CurrentPrincipal() principal: Principal,
  ): Promise<CalendarEventResponse> {
    return this.queries.execute(
      new GetCalendarEventQuery(wid.toLowerCase(), pathId(eventId, NOT_FOUND), callerOf(principal)),
    );
  }

  @Put(':eventId')
  @RequireScope('calendars:write')
  @SelfAccess()
  @ApiOkResponse({ type: CalendarEventResponse })
  @ConditionalWrite()
  async update(
    @Param('wid') wid: string,
    @Param('eventId') rawEventId: string,
    @Body() body: UpdateCalendarEventDto,
    @CurrentPrincipal() principal: Principal,
    @IfMatch() ifMatch: number[] | undefined,
  ): Promise<CalendarEventResponse> {
    const workspaceId = wid.toLowerCase();
    const eventId = pathId(rawEventId, NOT_FOUND);
    const caller = callerOf(principal);
    const expectedRevision = await this.pinnedRevision(workspaceId, eventId, ifMatch);
    await this.commands.execute(
      new UpdateCalendarEventCommand(workspaceId, eventId, { ...body }, caller, expectedRevision),
    );
    return this.queries.execute(new GetCalendarEventQuery(workspaceId, eventId, caller));
  }

  @Delete(':eventId')
  @RequireScope('calendars:admin')
  @SelfAccess()
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'deleted' })
  @ConditionalWrite()
  async remove(
    @Param('wid') wid: string,
    @Param('eventId') rawEventId: string,
    @CurrentPrincipal() principal: Principal,
    @IfMatch() ifMatch: number[] | undefined,
  ): Promise<void> {
    const workspaceId = wid.toLowerCase();
    const eventId = pathId(rawEventId, NOT_FOUND);
    const expectedRevision = await this.pinnedRevision(workspaceId, eventId, ifMatch);
    await this.commands.execute(
      new DeleteCalendarEventCommand(workspaceId, eventId, callerOf(principal), expectedRevision),
    );
  }
}
