/**
 * Events of the calendars feature: one stream per calendar (`calendar-<id>`) and one per
 * calendar event (`calendarevent-<id>`). Internal events: none of them leaves the service.
 * Times are ISO 8601 strings with the offset the client sent (normalised `±HH:MM` or `Z`).
 */
export const calendarStream = (id: number): string => `calendar-${id}`;
export const calendarEventStream = (id: number): string => `calendarevent-${id}`;

export interface CalendarCreated {
  type: 'CalendarCreated';
  data: {
    calendarId: number;
    workspaceId: string;
    name: string;
    /** The member who owns it; null: the workspace's own calendar. */
    ownerMemberId: number | null;
    createdAt: string;
  };
}

export type CalendarAggregateEvent = CalendarCreated;

export interface CalendarEventCreated {
  type: 'CalendarEventCreated';
  data: {
    eventId: number;
    workspaceId: string;
    calendarId: number | null;
    title: string;
    description: string | null;
    startTime: string;
    /** null: an event at one instant (it lies in a window that contains its start). */
    endTime: string | null;
    attendeeMemberIds: number[];
    /** The member who created it (null for a credential acting without one). */
    organizerMemberId: number | null;
    createdAt: string;
  };
}

/** Only what changed; a field present with null was cleared. */
export interface CalendarEventUpdated {
  type: 'CalendarEventUpdated';
  data: {
    eventId: number;
    workspaceId: string;
    calendarId?: number | null;
    title?: string;
    description?: string | null;
    startTime?: string;
    endTime?: string | null;
    attendeeMemberIds?: number[];
    updatedAt: string;
  };
}

export interface CalendarEventDeleted {
  type: 'CalendarEventDeleted';
  data: { eventId: number; workspaceId: string; calendarId: number | null; deletedAt: string };
}

export type CalendarEventAggregateEvent = CalendarEventCreated | CalendarEventUpdated | CalendarEventDeleted;
