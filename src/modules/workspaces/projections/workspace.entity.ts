import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { WorkspaceSettings } from '../domain/workspace';

@Entity({ name: 'workspaces' })
export class WorkspaceEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('text') name: string;
  @Column('jsonb') settings: WorkspaceSettings;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
}
