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
