import { Module } from '@nestjs/common';
import { Feature } from '../../core/features/feature';
import { CalendarsTables1764000007200 } from './calendars.migration';
import {
  CreateCalendarEventHandler,
  DeleteCalendarEventHandler,
  UpdateCalendarEventHandler,
} from './commands/calendar-event.commands';
import { CalendarLookup } from './commands/calendar-lookup';
import { CreateCalendarHandler } from './commands/create-calendar.command';
import { MemberStandings } from './commands/member-standings';
import { CalendarEventsController } from './http/calendar-events.controller';
import { CalendarsController } from './http/calendars.controller';
import { CalendarEventEntity } from './projections/calendar-event.entity';
import { CalendarEntity } from './projections/calendar.entity';
import { CalendarsProjection } from './projections/calendars.projection';
import { GetCalendarEventHandler, ListCalendarEventsHandler } from './queries/calendar-event.queries';
import { GetCalendarHandler, ListCalendarsHandler } from './queries/calendar.queries';

/** Calendars owned by members or the workspace, and the events on them (window queries). */
@Feature({
  name: 'calendars',
  entities: [CalendarEntity, CalendarEventEntity],
  migrations: [CalendarsTables1764000007200],
  versionedResources: ['calendars', 'calendar_events'],
})
@Module({
  controllers: [CalendarsController, CalendarEventsController],
  providers: [
    CalendarsProjection,
    CalendarLookup,
    MemberStandings,
    CreateCalendarHandler,
    CreateCalendarEventHandler,
    UpdateCalendarEventHandler,
    DeleteCalendarEventHandler,
    ListCalendarsHandler,
    GetCalendarHandler,
    ListCalendarEventsHandler,
    GetCalendarEventHandler,
  ],
})
export class CalendarsModule {}

declare module '../../core/features/feature' {
  interface VersionedTables {
    calendars: true;
    calendar_events: true;
  }
}
