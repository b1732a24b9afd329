import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { RequireScope, SelfAccess } from '../../../core/auth/auth.decorators';
import { CurrentPrincipal } from '../../../core/auth/current-principal.decorator';
import type { Principal } from '../../../core/auth/principal';
import { CreatedLocation, seg } from '../../../core/http/location';
import { toPageRequest } from '../../../core/http/pagination';
import { CreateCalendarCommand } from '../commands/create-calendar.command';
import { GetCalendarQuery, ListCalendarsQuery } from '../queries/calendar.queries';
import {
  CalendarListResponse,
  CalendarResponse,
  CreateCalendarDto,
  ListCalendarsQueryDto,
} from './calendar.dto';
import { callerOf, pathId } from './caller';

/**
 * Calendars. Every route is open to self-access (owners manage their own calendars); the
 * handlers apply the calendar access policy: the owner, or the scope of the level.
 */
@ApiTags('calendars')
@Controller('w/:wid/calendars')
export class CalendarsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  /** Every calendar with calendars:read; without it, the caller's own. */
  @Get()
  @RequireScope('calendars:read')
  @SelfAccess()
  @ApiOkResponse({ type: CalendarListResponse })
  list(
    @Param('wid') wid: string,
    @Query() query: ListCalendarsQueryDto,
    @CurrentPrincipal() principal: Principal,
  ): Promise<CalendarListResponse> {
    return this.queries.execute(
      new ListCalendarsQuery(
        wid.toLowerCase(),
        { ownerMemberId: query.ownerMemberId },
        callerOf(principal),
        toPageRequest(query),
      ),
    );
  }

  /** One's own calendar with no scope; another member's or the workspace's with calendars:write. */
  @Post()
  @RequireScope('calendars:write')
  @SelfAccess()
  @CreatedLocation<CalendarResponse>((r, p) => `/w/${seg(p.wid.toLowerCase())}/calendars/${seg(r.id)}`)
  @ApiCreatedResponse({ type: CalendarResponse })
  async create(
    @Param('wid') wid: string,
    @Body() body: CreateCalendarDto,
    @CurrentPrincipal() principal: Principal,
  ): Promise<CalendarResponse> {
    const workspaceId = wid.toLowerCase();
    const caller = callerOf(principal);
    const owner = body.ownerMemberId === undefined ? (caller.memberId ?? null) : body.ownerMemberId;
    const calendarId = await this.commands.execute<CreateCalendarCommand, number>(
      new CreateCalendarCommand(workspaceId, body.name, owner, caller),
    );
    return this.queries.execute(new GetCalendarQuery(workspaceId, calendarId, caller));
  }

  @Get(':calendarId')
  @RequireScope('calendars:read')
  @SelfAccess()
  @ApiOkResponse({ type: CalendarResponse })
  get(
    @Param('wid') wid: string,
    @Param('calendarId') calendarId: string,
    @CurrentPrincipal() principal: Principal,
  ): Promise<CalendarResponse> {
    return this.queries.execute(
      new GetCalendarQuery(wid.toLowerCase(), pathId(calendarId, 'Calendar not found'), callerOf(principal)),
    );
  }
}
