import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'custom_toolkits' })
export class CustomToolkitEntity {
  @PrimaryColumn('integer') id: number;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  @Column('text') name: string;
  @Column('text') slug: string;
  @Column('text', { nullable: true }) description: string | null;
  @Column('boolean') enabled: boolean;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
  /** Changes the toolkit shows (its ETag); its tools' changes are theirs. */
  @Column('integer') version: number;
  /** Revision of `customtoolkit-<id>` at the toolkit's last change (bigint as text). */
  @Column('bigint', { name: 'stream_revision' }) streamRevision: string;
}

@Entity({ name: 'custom_tools' })
export class CustomToolEntity {
  @PrimaryColumn('integer') id: number;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  @Column('integer', { name: 'toolkit_id' }) toolkitId: number;
  @Column('text') name: string;
  @Column('text', { name: 'display_name' }) displayName: string;
  @Column('text', { nullable: true }) description: string | null;
  @Column('text', { nullable: true }) prompt: string | null;
  @Column('text', { name: 'chat_model', nullable: true }) chatModel: string | null;
  /** A JsonSchemaObject; typed `object` for TypeORM's partial-entity types. */
  @Column('jsonb', { name: 'input_schema' }) inputSchema: object;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
  /** Changes the tool shows (its ETag, and the key of its compiled argument validator). */
  @Column('integer') version: number;
  /** Revision of its toolkit's stream at the tool's last change. */
  @Column('bigint', { name: 'stream_revision' }) streamRevision: string;
}
