import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';
import type { CalendarAggregateEvent, CalendarEventAggregateEvent } from '../domain/calendar.events';

/** Columns of calendar_events an update may set, by the event's field name. */
const EVENT_COLUMNS = {
  calendarId: 'calendar_id',
  title: 'title',
  description: 'description',
  startTime: 'start_time',
  endTime: 'end_time',
  attendeeMemberIds: 'attendee_member_ids',
} as const;

const CASTS: Partial<Record<keyof typeof EVENT_COLUMNS, string>> = {
  startTime: '::timestamptz',
  endTime: '::timestamptz',
  attendeeMemberIds: '::int[]',
};

/**
 * The calendars and calendar_events read models. Times go to PostgreSQL as the ISO strings
 * the events hold (offsets included), so nothing is lost to JavaScript's milliseconds.
 * Every change bumps the row's `version` (the ETag) and records its stream revision.
 */
@Injectable()
@Projection({
  name: 'calendars',
  eventTypes: ['CalendarCreated', 'CalendarEventCreated', 'CalendarEventUpdated', 'CalendarEventDeleted'],
  tables: ['calendars', 'calendar_events'],
})
export class CalendarsProjection implements ProjectionHandler {
  async handle(stored: StoredEvent, em: EntityManager): Promise<void> {
    const event = { type: stored.type, data: stored.data } as
      CalendarAggregateEvent | CalendarEventAggregateEvent;
    const revision = stored.revision.toString();
    switch (event.type) {
      case 'CalendarCreated': {
        const d = event.data;
        await em.query(
          `INSERT INTO calendars (id, workspace_id, name, owner_member_id, created_at, updated_at, version, stream_revision)
           VALUES ($1, $2, $3, $4, $5::timestamptz, $5::timestamptz, 1, $6)
           ON CONFLICT (id) DO NOTHING`,
          [d.calendarId, d.workspaceId, d.name, d.ownerMemberId, d.createdAt, revision],
        );
        return;
      }
      case 'CalendarEventCreated': {
        const d = event.data;
        await em.query(
          `INSERT INTO calendar_events (id, workspace_id, calendar_id, title, description, start_time, end_time,
                                        attendee_member_ids, organizer_member_id, created_at, updated_at, version, stream_revision)
           VALUES ($1, $2, $3, $4, $5, $6::timestamptz, $7::timestamptz, $8::int[], $9, $10::timestamptz, $10::timestamptz, 1, $11)
           ON CONFLICT (id) DO NOTHING`,
          [
            d.eventId,
            d.workspaceId,
            d.calendarId,
            d.title,
            d.description,
            d.startTime,
            d.endTime,
            d.attendeeMemberIds,
            d.organizerMemberId,
            d.createdAt,
            revision,
          ],
        );
        return;
      }
      case 'CalendarEventUpdated': {
        const d = event.data;
        const params: unknown[] = [d.eventId, d.updatedAt, revision];
        const sets = ['updated_at = $2::timestamptz', 'stream_revision = $3', 'version = version + 1'];
        for (const field of Object.keys(EVENT_COLUMNS) as (keyof typeof EVENT_COLUMNS)[]) {
          if (d[field] === undefined) continue;
          params.push(d[field]);
          sets.push(`${EVENT_COLUMNS[field]} = $${params.length}${CASTS[field] ?? ''}`);
        }
        await em.query(`UPDATE calendar_events SET ${sets.join(', ')} WHERE id = $1`, params);
        return;
      }
      case 'CalendarEventDeleted':
        await em.query(`DELETE FROM calendar_events WHERE id = $1`, [event.data.eventId]);
        return;
    }
  }
}
