import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { nextId } from '../../../core/database/ids';
import {
  calendarEventDecider,
  calendarEventStream,
  CalendarEventCommand,
  CalendarEventFields,
} from '../domain/calendar-event';
import { assertCalendarAccess, CalendarCaller } from '../domain/calendar-access.policy';
import { CalendarLookup } from './calendar-lookup';
import { MemberStandings } from './member-standings';

export class CreateCalendarEventCommand {
  constructor(
    readonly workspaceId: string,
    readonly fields: CalendarEventFields,
    readonly caller: CalendarCaller,
  ) {}
}

export class UpdateCalendarEventCommand {
  constructor(
    readonly workspaceId: string,
    readonly eventId: number,
    readonly changes: Partial<CalendarEventFields>,
    readonly caller: CalendarCaller,
    /** Pinned by If-Match: the event's stream must still be at this revision, else 412. */
    readonly expectedRevision?: bigint,
  ) {}
}

export class DeleteCalendarEventCommand {
  constructor(
    readonly workspaceId: string,
    readonly eventId: number,
    readonly caller: CalendarCaller,
    readonly expectedRevision?: bigint,
  ) {}
}

/**
 * Puts an event on a calendar (its owner, or calendars:write) or on none (calendars:write);
 * returns its id. A calendar that is not the workspace's is refused by the decider (400),
 * after the access check, which treats it as nobody's.
 */
@CommandHandler(CreateCalendarEventCommand)
export class CreateCalendarEventHandler implements ICommandHandler<CreateCalendarEventCommand, number> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly db: DataSource,
    private readonly calendars: CalendarLookup,
    private readonly members: MemberStandings,
  ) {}

  async execute(cmd: CreateCalendarEventCommand): Promise<number> {
    const calendar = await this.calendars.find(cmd.workspaceId, cmd.fields.calendarId);
    assertCalendarAccess(cmd.caller, calendar.ownerMemberId, 'write');
    const members = await this.members.of(cmd.workspaceId, cmd.fields.attendeeMemberIds ?? []);
    const eventId = await nextId(this.db, 'calendar_event_id_seq');
    await this.repo.handle({
      streamName: calendarEventStream(eventId),
      workspaceId: cmd.workspaceId,
      decider: calendarEventDecider,
      command: {
        type: 'CreateCalendarEvent',
        eventId,
        workspaceId: cmd.workspaceId,
        organizerMemberId: cmd.caller.memberId ?? null,
        ...cmd.fields,
        calendarFound: calendar.found,
        members,
        now: new Date().toISOString(),
      },
    });
    return eventId;
  }
}

/**
 * Changes an event: the caller must manage the calendar it is on and, when it moves, the
 * calendar it moves to. Judged on the state each attempt decides on, so a concurrent move
 * is not undone by a caller who could not have made it.
 */
@CommandHandler(UpdateCalendarEventCommand)
export class UpdateCalendarEventHandler implements ICommandHandler<UpdateCalendarEventCommand> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly calendars: CalendarLookup,
    private readonly members: MemberStandings,
  ) {}

  async execute(cmd: UpdateCalendarEventCommand): Promise<void> {
    const members = await this.members.of(cmd.workspaceId, cmd.changes.attendeeMemberIds ?? []);
    await this.repo.handle({
      streamName: calendarEventStream(cmd.eventId),
      workspaceId: cmd.workspaceId,
      decider: calendarEventDecider,
      expectedRevision: cmd.expectedRevision,
      command: {
        from: async (state): Promise<CalendarEventCommand> => {
          let calendarFound = false;
          // Existence first (the decider's 404), so nothing is told about other tenants' events.
          if (state.status === 'active' && state.workspaceId === cmd.workspaceId) {
            const current = await this.calendars.find(cmd.workspaceId, state.calendarId);
            assertCalendarAccess(cmd.caller, current.ownerMemberId, 'write');
            const target = cmd.changes.calendarId;
            if (target !== undefined && target !== state.calendarId) {
              const next = await this.calendars.find(cmd.workspaceId, target);
              assertCalendarAccess(cmd.caller, next.ownerMemberId, 'write');
              calendarFound = next.found;
            }
          }
          return {
            type: 'UpdateCalendarEvent',
            eventId: cmd.eventId,
            workspaceId: cmd.workspaceId,
            changes: cmd.changes,
            calendarFound,
            members,
            now: new Date().toISOString(),
          };
        },
      },
    });
  }
}

/** Deletes an event: the owner of its calendar, or calendars:admin. */
@CommandHandler(DeleteCalendarEventCommand)
export class DeleteCalendarEventHandler implements ICommandHandler<DeleteCalendarEventCommand> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly calendars: CalendarLookup,
  ) {}

  async execute(cmd: DeleteCalendarEventCommand): Promise<void> {
    await this.repo.handle({
      streamName: calendarEventStream(cmd.eventId),
      workspaceId: cmd.workspaceId,
      decider: calendarEventDecider,
      expectedRevision: cmd.expectedRevision,
      command: {
        from: async (state): Promise<CalendarEventCommand> => {
          if (state.status === 'active' && state.workspaceId === cmd.workspaceId) {
            const calendar = await this.calendars.find(cmd.workspaceId, state.calendarId);
            assertCalendarAccess(cmd.caller, calendar.ownerMemberId, 'admin');
          }
          return {
            type: 'DeleteCalendarEvent',
            eventId: cmd.eventId,
            workspaceId: cmd.workspaceId,
            now: new Date().toISOString(),
          };
        },
      },
    });
  }
}
