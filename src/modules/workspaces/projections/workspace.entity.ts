import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { WorkspaceSettings } from '../domain/workspace';

@Entity({ name: 'workspaces' })
export class WorkspaceEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('text') name: string;
  @Column('jsonb') settings: WorkspaceSettings;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
  /** Changes shown so far (the ETag); see core/http/preconditions.ts. */
  @Column('integer') version: number;
  /** Revision of the workspace stream this row reflects (bigint as text). */
  @Column('bigint', { name: 'stream_revision' }) streamRevision: string;
}
