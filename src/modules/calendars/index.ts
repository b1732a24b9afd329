/**
 * The calendars feature's public surface. Nothing else under modules/calendars is
 * importable by other features (src/app.features.spec.ts enforces it).
 */
export { calendarEventStream, calendarStream } from './domain/calendar.events';
export type {
  CalendarAggregateEvent,
  CalendarCreated,
  CalendarEventAggregateEvent,
  CalendarEventCreated,
  CalendarEventDeleted,
  CalendarEventUpdated,
} from './domain/calendar.events';
/** For the MCP endpoint's tools (calendar_events.*): what the calendar event routes run. */
export { CreateCalendarEventCommand } from './commands/calendar-event.commands';
export { GetCalendarEventQuery, ListCalendarEventsQuery } from './queries/calendar-event.queries';
export { CreateCalendarEventDto, ListCalendarEventsQueryDto } from './http/calendar-event.dto';
export { callerOf as calendarCallerOf } from './http/caller';
