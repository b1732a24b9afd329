import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { nextId } from '../../../core/database/ids';
import { calendarDecider, calendarStream } from '../domain/calendar';
import { assertMayCreateCalendar, CalendarCaller } from '../domain/calendar-access.policy';
import { MemberStandings } from './member-standings';

export class CreateCalendarCommand {
  constructor(
    readonly workspaceId: string,
    readonly name: string,
    /** null: the workspace's own calendar. */
    readonly ownerMemberId: number | null,
    readonly caller: CalendarCaller,
  ) {}
}

/** Creates a calendar for a member (oneself needs no scope) or the workspace; returns its id. */
@CommandHandler(CreateCalendarCommand)
export class CreateCalendarHandler implements ICommandHandler<CreateCalendarCommand, number> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly db: DataSource,
    private readonly members: MemberStandings,
  ) {}

  async execute(cmd: CreateCalendarCommand): Promise<number> {
    assertMayCreateCalendar(cmd.caller, cmd.ownerMemberId);
    const standings =
      cmd.ownerMemberId === null ? {} : await this.members.of(cmd.workspaceId, [cmd.ownerMemberId]);
    const calendarId = await nextId(this.db, 'calendar_id_seq');
    await this.repo.handle({
      streamName: calendarStream(calendarId),
      workspaceId: cmd.workspaceId,
      decider: calendarDecider,
      command: {
        type: 'CreateCalendar',
        calendarId,
        workspaceId: cmd.workspaceId,
        name: cmd.name,
        ownerMemberId: cmd.ownerMemberId,
        owner: cmd.ownerMemberId === null ? 'active' : (standings[cmd.ownerMemberId] ?? 'unknown'),
        now: new Date().toISOString(),
      },
    });
    return calendarId;
  }
}
