import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Integers as text from PostgreSQL's bigint; sizes fit a JS number (FILE_MAX_BYTES ≤ 5 GiB). */
const bigintAsNumber = { to: (v: number) => v, from: (v: string) => Number(v) };

@Entity({ name: 'files' })
export class FileEntity {
  @PrimaryColumn('integer') id: number;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  @Column('text') name: string;
  @Column('text', { name: 'content_type' }) contentType: string;
  @Column('bigint', { transformer: bigintAsNumber }) size: number;
  @Column('text') sha256: string;
  @Column('text', { name: 'storage_key' }) storageKey: string;
  /** Where the bytes were staged, if their commit to storage_key must still be finished. */
  @Column('text', { name: 'staging_key' }) stagingKey: string;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  /** Changes shown so far (the ETag); see core/http/preconditions.ts. */
  @Column('integer') version: number;
  /** Revision of the file's own stream (`file-<id>`) this row reflects (bigint as text). */
  @Column('bigint', { name: 'stream_revision' }) streamRevision: string;
}
