import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { DataField, Visibility } from '../domain/data-type.events';
import type { FieldValues } from '../domain/field-values';

@Entity({ name: 'data_types' })
export class DataTypeEntity {
  @PrimaryColumn('integer') id: number;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  @Column('text') name: string;
  @Column('text') slug: string;
  @Column('boolean', { name: 'is_collection' }) isCollection: boolean;
  @Column('text') visibility: Visibility;
  @Column('jsonb') fields: DataField[];
  @Column('integer', { name: 'owner_member_id', nullable: true }) ownerMemberId: number | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
  /** Changes shown so far (the ETag); see core/http/preconditions.ts. */
  @Column('integer') version: number;
  /** Revision of `datatype-<id>` this row reflects (bigint as text). */
  @Column('bigint', { name: 'stream_revision' }) streamRevision: string;
}

@Entity({ name: 'data_records' })
export class DataRecordEntity {
  @PrimaryColumn('integer') id: number;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  @Column('integer', { name: 'data_type_id' }) dataTypeId: number;
  @Column('integer', { name: 'member_id', nullable: true }) memberId: number | null;
  @Column('text', { name: 'external_id', nullable: true }) externalId: string | null;
  @Column('jsonb', { name: 'field_values' }) fieldValues: FieldValues;
  /** The shouldIndex fields' values (text-like ones lower-cased): GIN, for `field.<slug>=`. */
  @Column('jsonb', { name: 'indexed_values' }) indexedValues: FieldValues;
  /** The indexed text-like values, lower-cased, one a line: trigram GIN, for `search`. */
  @Column('text', { name: 'search_text', nullable: true }) searchText: string | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
  @Column('integer') version: number;
  /** Revision of `record-<id>` this row reflects (bigint as text). */
  @Column('bigint', { name: 'stream_revision' }) streamRevision: string;
}

@Entity({ name: 'record_grants' })
export class RecordGrantEntity {
  @PrimaryColumn('integer') id: number;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  @Column('integer', { name: 'grantee_member_id' }) granteeMemberId: number;
  @Column('integer', { name: 'owner_member_id' }) ownerMemberId: number;
  @Column('text') access: 'read' | 'write';
  @Column('integer', { name: 'data_type_id', nullable: true }) dataTypeId: number | null;
  @Column('integer', { name: 'granted_by', nullable: true }) grantedBy: number | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
}
