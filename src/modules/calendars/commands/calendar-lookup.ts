import { Injectable } from '@nestjs/common';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { calendarDecider, calendarStream } from '../domain/calendar';

export interface CalendarRef {
  found: boolean;
  /** The owner (null: the workspace's own calendar, or none found). */
  ownerMemberId: number | null;
}

/**
 * A calendar as its own stream shows it, for the decisions about its events (who owns it
 * decides who may manage them). Read from the event store, not the read model: commands
 * decide on the source of truth.
 */
@Injectable()
export class CalendarLookup {
  constructor(private readonly repo: EventSourcedRepository) {}

  async find(workspaceId: string, calendarId: number | null | undefined): Promise<CalendarRef> {
    if (calendarId === null || calendarId === undefined) return { found: false, ownerMemberId: null };
    const { state } = await this.repo.load(calendarStream(calendarId), calendarDecider);
    if (state.status !== 'active' || state.workspaceId !== workspaceId)
      return { found: false, ownerMemberId: null };
    return { found: true, ownerMemberId: state.ownerMemberId };
  }
}
