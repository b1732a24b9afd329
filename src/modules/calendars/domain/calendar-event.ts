import { Decider } from '../../../core/cqrs/decider';
import { ConflictError, NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { parseDateTime } from '../../../core/http/pagination';
import type { MemberStanding } from './calendar';
import type {
  CalendarEventAggregateEvent,
  CalendarEventCreated,
  CalendarEventUpdated,
} from './calendar.events';

export { calendarEventStream } from './calendar.events';

export const EVENT_TITLE_MAX = 200;
export const EVENT_DESCRIPTION_MAX = 10_000;
export const EVENT_ATTENDEES_MAX = 500;

/** The facts a command needs beyond its own fields, looked up by the handler. */
export interface CalendarEventFacts {
  /** Whether the calendar the command names (if any) is one of this workspace's. */
  calendarFound: boolean;
  /** How each member id the command names stands in the workspace; absent: no such member. */
  members: Readonly<Record<number, MemberStanding>>;
}

export interface CalendarEventFields {
  title: string;
  description?: string | null;
  startTime: string;
  endTime?: string | null;
  calendarId?: number | null;
  attendeeMemberIds?: number[];
}

export type CalendarEventCommand =
  | ({
      type: 'CreateCalendarEvent';
      eventId: number;
      workspaceId: string;
      organizerMemberId: number | null;
      now: string;
    } & CalendarEventFields &
      CalendarEventFacts)
  | ({
      type: 'UpdateCalendarEvent';
      eventId: number;
      workspaceId: string;
      changes: Partial<CalendarEventFields>;
      now: string;
    } & CalendarEventFacts)
  | { type: 'DeleteCalendarEvent'; eventId: number; workspaceId: string; now: string };

export interface CalendarEventState {
  status: 'absent' | 'active' | 'deleted';
  eventId: number;
  workspaceId: string;
  calendarId: number | null;
  title: string;
  description: string | null;
  startTime: string;
  endTime: string | null;
  attendeeMemberIds: number[];
  organizerMemberId: number | null;
}

const initialState = (): CalendarEventState => ({
  status: 'absent',
  eventId: 0,
  workspaceId: '',
  calendarId: null,
  title: '',
  description: null,
  startTime: '',
  endTime: null,
  attendeeMemberIds: [],
  organizerMemberId: null,
});

/** An event of another workspace, or a deleted one, reads as absent. */
export function requireCalendarEvent(state: CalendarEventState, workspaceId: string): void {
  if (state.status !== 'active' || state.workspaceId !== workspaceId)
    throw new NotFoundError('Calendar event not found');
}

function checkTitle(title: string): string {
  const trimmed = title.trim();
  if (!trimmed) throw new ValidationError('title: must not be empty');
  if (trimmed.length > EVENT_TITLE_MAX)
    throw new ValidationError(`title: must be at most ${EVENT_TITLE_MAX} characters`);
  return trimmed;
}

function checkDescription(description: string | null | undefined): string | null {
  if (description === undefined || description === null) return null;
  if (description.length > EVENT_DESCRIPTION_MAX)
    throw new ValidationError(`description: must be at most ${EVENT_DESCRIPTION_MAX} characters`);
  return description;
}

/**
 * A time as the read model holds it: PostgreSQL keeps microseconds, so digits beyond the
 * sixth are cut here (an earlier time, never a later one) and the comparisons below are on
 * what is stored. Otherwise an end a few nanoseconds after the start passed as "after",
 * both became the same microsecond in the database, and the event's `during` was the
 * empty range: an event no window query ever found.
 */
function instant(field: string, value: string): { iso: string; epochNanos: bigint } {
  const parsed = parseDateTime(value.replace(/(\.\d{6})\d+/, '$1'));
  if (!parsed)
    throw new ValidationError(
      `${field}: must be an ISO 8601 date-time with an offset, e.g. 2024-05-01T12:00:00Z`,
    );
  return parsed;
}

/** Start and end as stored (normalised ISO with offset); the end, when there is one, strictly after the start. */
function checkTimes(
  startTime: string,
  endTime: string | null,
): { startTime: string; endTime: string | null } {
  const start = instant('startTime', startTime);
  if (endTime === null) return { startTime: start.iso, endTime: null };
  const end = instant('endTime', endTime);
  if (end.epochNanos <= start.epochNanos)
    throw new ValidationError('endTime: must be after startTime (leave it out for an event at one instant)');
  return { startTime: start.iso, endTime: end.iso };
}

function checkCalendar(calendarId: number | null, facts: CalendarEventFacts): number | null {
  if (calendarId !== null && !facts.calendarFound)
    throw new ValidationError(`calendarId: no calendar with id ${calendarId} in this workspace`);
  return calendarId;
}

/**
 * Attendees in the caller's order, repeats dropped. A member newly invited must be an
 * active member of the workspace; one already attending stays even if archived since.
 */
function checkAttendees(
  ids: readonly number[],
  facts: CalendarEventFacts,
  alreadyAttending: readonly number[] = [],
): number[] {
  const unique = [...new Set(ids)];
  if (unique.length > EVENT_ATTENDEES_MAX)
    throw new ValidationError(`attendeeMemberIds: at most ${EVENT_ATTENDEES_MAX} attendees`);
  for (const id of unique) {
    if (alreadyAttending.includes(id)) continue;
    const standing = facts.members[id] ?? 'unknown';
    if (standing === 'unknown')
      throw new ValidationError(`attendeeMemberIds: no member with id ${id} in this workspace`);
    if (standing === 'archived') throw new ValidationError(`attendeeMemberIds: member ${id} is archived`);
  }
  return unique;
}

const sameInstant = (a: string | null, b: string | null): boolean =>
  a === b || (a !== null && b !== null && parseDateTime(a)?.epochNanos === parseDateTime(b)?.epochNanos);

const sameList = (a: readonly number[], b: readonly number[]): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i]);

function decideUpdate(
  command: Extract<CalendarEventCommand, { type: 'UpdateCalendarEvent' }>,
  state: CalendarEventState,
): CalendarEventAggregateEvent[] {
  requireCalendarEvent(state, command.workspaceId);
  const c = command.changes;
  const changed: Omit<CalendarEventUpdated['data'], 'eventId' | 'workspaceId' | 'updatedAt'> = {};
  if (c.title !== undefined) {
    const title = checkTitle(c.title);
    if (title !== state.title) changed.title = title;
  }
  if (c.description !== undefined) {
    const description = checkDescription(c.description);
    if (description !== state.description) changed.description = description;
  }
  if (c.startTime !== undefined || c.endTime !== undefined) {
    // The pair is checked as it will be: a new end against the kept start, and so on.
    const times = checkTimes(
      c.startTime ?? state.startTime,
      c.endTime !== undefined ? c.endTime : state.endTime,
    );
    if (!sameInstant(times.startTime, state.startTime)) changed.startTime = times.startTime;
    if (!sameInstant(times.endTime, state.endTime)) changed.endTime = times.endTime;
  }
  if (c.calendarId !== undefined && c.calendarId !== state.calendarId)
    changed.calendarId = checkCalendar(c.calendarId, command);
  if (c.attendeeMemberIds !== undefined) {
    const attendees = checkAttendees(c.attendeeMemberIds, command, state.attendeeMemberIds);
    if (!sameList(attendees, state.attendeeMemberIds)) changed.attendeeMemberIds = attendees;
  }
  if (!Object.keys(changed).length) return [];
  return [
    {
      type: 'CalendarEventUpdated',
      data: { eventId: state.eventId, workspaceId: state.workspaceId, ...changed, updatedAt: command.now },
    },
  ];
}

export const calendarEventDecider: Decider<
  CalendarEventState,
  CalendarEventCommand,
  CalendarEventAggregateEvent
> = {
  initialState,

  evolve(state, event) {
    switch (event.type) {
      case 'CalendarEventCreated': {
        const d = event.data;
        return {
          status: 'active',
          eventId: d.eventId,
          workspaceId: d.workspaceId,
          calendarId: d.calendarId,
          title: d.title,
          description: d.description,
          startTime: d.startTime,
          endTime: d.endTime,
          attendeeMemberIds: d.attendeeMemberIds,
          organizerMemberId: d.organizerMemberId,
        };
      }
      case 'CalendarEventUpdated': {
        const d = event.data;
        return {
          ...state,
          calendarId: d.calendarId !== undefined ? d.calendarId : state.calendarId,
          title: d.title ?? state.title,
          description: d.description !== undefined ? d.description : state.description,
          startTime: d.startTime ?? state.startTime,
          endTime: d.endTime !== undefined ? d.endTime : state.endTime,
          attendeeMemberIds: d.attendeeMemberIds ?? state.attendeeMemberIds,
        };
      }
      case 'CalendarEventDeleted':
        return { ...state, status: 'deleted' };
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreateCalendarEvent': {
        if (state.status !== 'absent')
          throw new ConflictError(`A calendar event with id ${command.eventId} already exists`);
        const data: CalendarEventCreated['data'] = {
          eventId: command.eventId,
          workspaceId: command.workspaceId,
          calendarId: checkCalendar(command.calendarId ?? null, command),
          title: checkTitle(command.title),
          description: checkDescription(command.description),
          ...checkTimes(command.startTime, command.endTime ?? null),
          attendeeMemberIds: checkAttendees(command.attendeeMemberIds ?? [], command),
          organizerMemberId: command.organizerMemberId,
          createdAt: command.now,
        };
        return [{ type: 'CalendarEventCreated', data }];
      }
      case 'UpdateCalendarEvent':
        return decideUpdate(command, state);
      case 'DeleteCalendarEvent':
        requireCalendarEvent(state, command.workspaceId);
        return [
          {
            type: 'CalendarEventDeleted',
            data: {
              eventId: state.eventId,
              workspaceId: state.workspaceId,
              calendarId: state.calendarId,
              deletedAt: command.now,
            },
          },
        ];
    }
  },
};
