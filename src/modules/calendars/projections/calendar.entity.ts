import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'calendars' })
export class CalendarEntity {
  @PrimaryColumn('integer') id: number;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  @Column('text') name: string;
  /** null: the workspace's own calendar. */
  @Column('integer', { name: 'owner_member_id', nullable: true }) ownerMemberId: number | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
  /** Changes shown so far (the ETag); see core/http/preconditions.ts. */
  @Column('integer') version: number;
  /** Revision of the calendar's stream (`calendar-<id>`) this row reflects (bigint as text). */
  @Column('bigint', { name: 'stream_revision' }) streamRevision: string;
}
