import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { BuiltInRoleKey } from '../domain/built-in-roles';
import type { FileAccess, SiteAudience } from '../domain/role-access';

@Entity({ name: 'member_roles' })
export class MemberRoleEntity {
  @PrimaryColumn('integer') id: number;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  @Column('text') name: string;
  @Column('text', { array: true }) permissions: string[];
  @Column('text', { name: 'built_in', nullable: true }) builtIn: BuiltInRoleKey | null;
  @Column('jsonb', { name: 'site_audience' }) siteAudience: SiteAudience;
  @Column('jsonb', { name: 'file_access' }) fileAccess: FileAccess;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
  /** Changes shown so far (the ETag); see core/http/preconditions.ts. */
  @Column('integer') version: number;
  /** Revision of the role's own stream (`memberrole-<id>`) this row reflects (bigint as text). */
  @Column('bigint', { name: 'stream_revision' }) streamRevision: string;
}
