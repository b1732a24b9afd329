import { Decider } from '../../../core/cqrs/decider';
import { ConflictError, NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import type { CalendarAggregateEvent } from './calendar.events';

export { calendarStream } from './calendar.events';

export const CALENDAR_NAME_MAX = 200;

/** Facts about a member the handler looked up (identity's GetMemberFactsQuery). */
export type MemberStanding = 'active' | 'archived' | 'unknown';

export type CalendarCommand = {
  type: 'CreateCalendar';
  calendarId: number;
  workspaceId: string;
  name: string;
  ownerMemberId: number | null;
  /** How the owner stands in the workspace (ignored for the workspace's own calendar). */
  owner: MemberStanding;
  now: string;
};

export interface CalendarState {
  status: 'absent' | 'active';
  calendarId: number;
  workspaceId: string;
  name: string;
  ownerMemberId: number | null;
}

const initialState = (): CalendarState => ({
  status: 'absent',
  calendarId: 0,
  workspaceId: '',
  name: '',
  ownerMemberId: null,
});

export function checkCalendarName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw new ValidationError('name: must not be empty');
  if (trimmed.length > CALENDAR_NAME_MAX)
    throw new ValidationError(`name: must be at most ${CALENDAR_NAME_MAX} characters`);
  return trimmed;
}

/** A calendar of another workspace reads as absent: ids must not let a caller probe other tenants. */
export function requireCalendar(state: CalendarState, workspaceId: string): void {
  if (state.status !== 'active' || state.workspaceId !== workspaceId)
    throw new NotFoundError('Calendar not found');
}

export const calendarDecider: Decider<CalendarState, CalendarCommand, CalendarAggregateEvent> = {
  initialState,

  evolve(_state, event) {
    switch (event.type) {
      case 'CalendarCreated': {
        const d = event.data;
        return {
          status: 'active',
          calendarId: d.calendarId,
          workspaceId: d.workspaceId,
          name: d.name,
          ownerMemberId: d.ownerMemberId,
        };
      }
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreateCalendar': {
        if (state.status !== 'absent')
          throw new ConflictError(`A calendar with id ${command.calendarId} already exists`);
        const name = checkCalendarName(command.name);
        if (command.ownerMemberId !== null && command.owner !== 'active')
          throw new ValidationError(
            command.owner === 'archived'
              ? `ownerMemberId: member ${command.ownerMemberId} is archived`
              : `ownerMemberId: no member with id ${command.ownerMemberId} in this workspace`,
          );
        return [
          {
            type: 'CalendarCreated',
            data: {
              calendarId: command.calendarId,
              workspaceId: command.workspaceId,
              name,
              ownerMemberId: command.ownerMemberId,
              createdAt: command.now,
            },
          },
        ];
      }
    }
  },
};
