import { deciderSpec } from '../../../core/testing/decider-spec';
import { ConflictError, NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { calendarEventDecider, CalendarEventCommand } from './calendar-event';
import type { CalendarEventCreated, CalendarEventDeleted, CalendarEventUpdated } from './calendar.events';

const wid = '0190a0a0-0000-7000-8000-000000000001';
const other = '0190a0a0-0000-7000-8000-000000000002';
const now = '2026-11-23T10:00:00.000Z';
const later = '2026-11-23T11:00:00.000Z';
const spec = deciderSpec(calendarEventDecider);

type Create = Extract<CalendarEventCommand, { type: 'CreateCalendarEvent' }>;
type Update = Extract<CalendarEventCommand, { type: 'UpdateCalendarEvent' }>;

const create = (over: Partial<Create> = {}): Create => ({
  type: 'CreateCalendarEvent',
  eventId: 3,
  workspaceId: wid,
  organizerMemberId: 12,
  title: 'Intake call',
  startTime: '2024-05-01T09:00:00+05:30',
  endTime: '2024-05-01T10:00:00+05:30',
  calendarId: 7,
  attendeeMemberIds: [12, 13],
  description: 'First call',
  calendarFound: true,
  members: { 12: 'active', 13: 'active' },
  now,
  ...over,
});

const created: CalendarEventCreated = {
  type: 'CalendarEventCreated',
  data: {
    eventId: 3,
    workspaceId: wid,
    calendarId: 7,
    title: 'Intake call',
    description: 'First call',
    startTime: '2024-05-01T09:00:00+05:30',
    endTime: '2024-05-01T10:00:00+05:30',
    attendeeMemberIds: [12, 13],
    organizerMemberId: 12,
    createdAt: now,
  },
};

const update = (changes: Update['changes'], over: Partial<Update> = {}): Update => ({
  type: 'UpdateCalendarEvent',
  eventId: 3,
  workspaceId: wid,
  changes,
  calendarFound: false,
  members: {},
  now: later,
  ...over,
});

const updated = (data: Partial<CalendarEventUpdated['data']>): CalendarEventUpdated => ({
  type: 'CalendarEventUpdated',
  data: { eventId: 3, workspaceId: wid, ...data, updatedAt: later },
});

const deleted: CalendarEventDeleted = {
  type: 'CalendarEventDeleted',
  data: { eventId: 3, workspaceId: wid, calendarId: 7, deletedAt: later },
};

describe('calendar event decider', () => {
  describe('create', () => {
    it('records the event with its times as sent (offsets kept), attendees deduplicated', () => {
      spec
        .given([])
        .when(create({ attendeeMemberIds: [12, 13, 12] }))
        .then([created]);
    });

    it('normalises the offset spelling (+0530 → +05:30, z → Z)', () => {
      spec
        .given([])
        .when(create({ startTime: '2024-05-01T09:00:00+0530', endTime: '2024-05-01T04:30:00.5z' }))
        .then([
          {
            ...created,
            data: {
              ...created.data,
              startTime: '2024-05-01T09:00:00+05:30',
              endTime: '2024-05-01T04:30:00.5Z',
            },
          },
        ]);
    });

    it('takes an event without an end, calendar, attendees or description (an instant on no calendar)', () => {
      spec
        .given([])
        .when(
          create({
            endTime: undefined,
            calendarId: undefined,
            attendeeMemberIds: undefined,
            description: undefined,
            calendarFound: false,
          }),
        )
        .then([
          {
            ...created,
            data: {
              ...created.data,
              endTime: null,
              calendarId: null,
              attendeeMemberIds: [],
              description: null,
            },
          },
        ]);
    });

    it('refuses an end that is not after the start, compared as instants across offsets', () => {
      // 10:00+05:30 is 04:30Z: before 05:00Z.
      spec
        .given([])
        .when(create({ startTime: '2024-05-01T05:00:00Z', endTime: '2024-05-01T10:00:00+05:30' }))
        .thenThrows(ValidationError, /^endTime: must be after startTime/);
      spec
        .given([])
        .when(create({ startTime: '2024-05-01T04:30:00Z', endTime: '2024-05-01T10:00:00+05:30' }))
        .thenThrows(ValidationError, /^endTime: must be after startTime/);
    });

    it('keeps microseconds, as the read model does: an end after the start only by nanoseconds is not after it', () => {
      spec
        .given([])
        .when(create({ startTime: '2026-02-01T00:00:00.0000001Z', endTime: '2026-02-01T00:00:00.0000009Z' }))
        .thenThrows(ValidationError, /^endTime: must be after startTime/);
      spec
        .given([])
        .when(
          create({ startTime: '2026-02-01T00:00:00.1234567+01:00', endTime: '2026-02-01T00:00:00.000002Z' }),
        )
        .then([
          {
            type: 'CalendarEventCreated',
            data: {
              ...created.data,
              startTime: '2026-02-01T00:00:00.123456+01:00',
              endTime: '2026-02-01T00:00:00.000002Z',
            },
          },
        ]);
    });

    it('refuses times without an offset or not on the calendar, naming the field', () => {
      spec
        .given([])
        .when(create({ startTime: '2024-05-01T09:00:00' }))
        .thenThrows(ValidationError, /^startTime: /);
      spec
        .given([])
        .when(create({ endTime: '2024-02-30T09:00:00Z' }))
        .thenThrows(ValidationError, /^endTime: /);
    });

    it("refuses a calendar that is not the workspace's", () => {
      spec
        .given([])
        .when(create({ calendarFound: false }))
        .thenThrows(ValidationError, /^calendarId: no calendar with id 7/);
    });

    it('refuses attendees who are not active members of the workspace', () => {
      spec
        .given([])
        .when(create({ attendeeMemberIds: [12, 99] }))
        .thenThrows(ValidationError, /^attendeeMemberIds: no member with id 99/);
      spec
        .given([])
        .when(create({ members: { 12: 'active', 13: 'archived' } }))
        .thenThrows(ValidationError, /^attendeeMemberIds: member 13 is archived/);
    });

    it('refuses an empty title and a second create', () => {
      spec
        .given([])
        .when(create({ title: '  ' }))
        .thenThrows(ValidationError, /^title: must not be empty/);
      spec.given([created]).when(create()).thenThrows(ConflictError);
    });
  });

  describe('update', () => {
    it('records only what changed', () => {
      spec
        .given([created])
        .when(update({ title: 'Intake call', description: 'Moved', startTime: '2024-05-01T03:30:00Z' }))
        .then([updated({ description: 'Moved' })]);
    });

    it('checks a new end against the kept start, and a new start against the kept end', () => {
      spec
        .given([created])
        .when(update({ endTime: '2024-05-01T03:30:00Z' }))
        .thenThrows(ValidationError, /^endTime: must be after startTime/);
      spec
        .given([created])
        .when(update({ startTime: '2024-05-01T11:00:00+05:30' }))
        .thenThrows(ValidationError, /^endTime: must be after startTime/);
      spec
        .given([created])
        .when(update({ startTime: '2024-05-01T11:00:00+05:30', endTime: null }))
        .then([updated({ startTime: '2024-05-01T11:00:00+05:30', endTime: null })]);
    });

    it('moves it to another calendar of the workspace, or off any calendar', () => {
      spec
        .given([created])
        .when(update({ calendarId: 8 }, { calendarFound: true }))
        .then([updated({ calendarId: 8 })]);
      spec
        .given([created])
        .when(update({ calendarId: 8 }))
        .thenThrows(ValidationError, /^calendarId: no calendar/);
      spec
        .given([created])
        .when(update({ calendarId: null }))
        .then([updated({ calendarId: null })]);
    });

    it('keeps an attendee archived since, but invites only active members', () => {
      spec
        .given([created])
        .when(update({ attendeeMemberIds: [13, 14] }, { members: { 13: 'archived', 14: 'active' } }))
        .then([updated({ attendeeMemberIds: [13, 14] })]);
      spec
        .given([created])
        .when(update({ attendeeMemberIds: [15] }, { members: { 15: 'archived' } }))
        .thenThrows(ValidationError, /^attendeeMemberIds: member 15 is archived/);
    });

    it('changes nothing when nothing differs', () => {
      spec
        .given([created])
        .when(update({ title: ' Intake call ', attendeeMemberIds: [12, 13] }))
        .then([]);
    });

    it('is a 404 for an event that does not exist, was deleted, or is of another workspace', () => {
      spec
        .given([])
        .when(update({ title: 'x' }))
        .thenThrows(NotFoundError);
      spec
        .given([created, deleted])
        .when(update({ title: 'x' }))
        .thenThrows(NotFoundError);
      spec
        .given([created])
        .when(update({ title: 'x' }, { workspaceId: other }))
        .thenThrows(NotFoundError);
    });
  });

  describe('delete', () => {
    const del: CalendarEventCommand = {
      type: 'DeleteCalendarEvent',
      eventId: 3,
      workspaceId: wid,
      now: later,
    };

    it('deletes an event once', () => {
      spec.given([created]).when(del).then([deleted]);
      spec.given([created, deleted]).when(del).thenThrows(NotFoundError);
    });

    it("is a 404 for another workspace's event", () => {
      spec
        .given([created])
        .when({ ...del, workspaceId: other })
        .thenThrows(NotFoundError);
    });
  });
});
