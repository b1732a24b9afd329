import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A calendar event. The table also has `during` (tstzrange, generated from the start and
 * end) for window queries; TypeORM never writes it, so it is not mapped here.
 */
@Entity({ name: 'calendar_events' })
export class CalendarEventEntity {
  @PrimaryColumn('integer') id: number;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  @Column('integer', { name: 'calendar_id', nullable: true }) calendarId: number | null;
  @Column('text') title: string;
  @Column('text', { nullable: true }) description: string | null;
  @Column('timestamptz', { name: 'start_time' }) startTime: Date;
  @Column('timestamptz', { name: 'end_time', nullable: true }) endTime: Date | null;
  @Column('integer', { name: 'attendee_member_ids', array: true }) attendeeMemberIds: number[];
  @Column('integer', { name: 'organizer_member_id', nullable: true }) organizerMemberId: number | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
  /** Changes shown so far (the ETag); see core/http/preconditions.ts. */
  @Column('integer') version: number;
  /** Revision of the event's stream (`calendarevent-<id>`) this row reflects (bigint as text). */
  @Column('bigint', { name: 'stream_revision' }) streamRevision: string;
}
