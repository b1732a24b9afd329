import { Inject } from '@nestjs/common';
import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { NotFoundError } from '../../../core/http/domain-errors';
import { applyListFilters, PageRequest, Paginated, paginated } from '../../../core/http/pagination';
import { withVersion } from '../../../core/http/preconditions';
import { fileDecider, fileStream } from '../domain/file';
import { FileResponse } from '../http/file.dto';
import { FileEntity } from '../projections/file.entity';
import { BLOB_STORAGE, BlobStorage, StoredBlob } from '../storage/blob-storage.port';

export class ListFilesQuery {
  constructor(
    readonly workspaceId: string,
    readonly page: PageRequest,
  ) {}
}

export class GetFileQuery {
  constructor(
    readonly workspaceId: string,
    readonly fileId: number,
  ) {}
}

/** The bytes of a file, with what a download needs to describe them. */
export class ReadFileContentQuery {
  constructor(
    readonly workspaceId: string,
    readonly fileId: number,
  ) {}
}

export interface FileContent {
  name: string;
  contentType: string;
  sha256: string;
  blob: StoredBlob;
}

async function fileRow(db: DataSource, workspaceId: string, fileId: number): Promise<FileEntity> {
  // Another workspace's file is not found, like one that does not exist.
  const row = await db.getRepository(FileEntity).findOneBy({ id: fileId, workspaceId });
  if (!row) throw new NotFoundError('File not found');
  return row;
}

/** A workspace's files, newest first. */
@QueryHandler(ListFilesQuery)
export class ListFilesHandler implements IQueryHandler<ListFilesQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: ListFilesQuery): Promise<Paginated<FileResponse>> {
    const [rows, total] = await applyListFilters(
      this.db
        .getRepository(FileEntity)
        .createQueryBuilder('f')
        .where('f.workspace_id = :workspaceId', { workspaceId: q.workspaceId }),
      q.page,
      { search: ['f.name'], time: 'f.created_at' },
    )
      .orderBy('f.id', 'DESC')
      .skip(q.page.offset)
      .take(q.page.pageSize)
      .getManyAndCount();
    return paginated(rows.map(FileResponse.of), total, q.page);
  }
}

@QueryHandler(GetFileQuery)
export class GetFileHandler implements IQueryHandler<GetFileQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: GetFileQuery): Promise<FileResponse> {
    const row = await fileRow(this.db, q.workspaceId, q.fileId);
    return withVersion(FileResponse.of(row), row.version);
  }
}

@QueryHandler(ReadFileContentQuery)
export class ReadFileContentHandler implements IQueryHandler<ReadFileContentQuery> {
  constructor(
    private readonly db: DataSource,
    @Inject(BLOB_STORAGE) private readonly storage: BlobStorage,
    private readonly repo: EventSourcedRepository,
  ) {}

  async execute(q: ReadFileContentQuery): Promise<FileContent> {
    const row = await fileRow(this.db, q.workspaceId, q.fileId);
    let blob = await this.storage.open(row.storageKey);
    if (!blob) {
      // Recorded but not committed: the upload's process died between its append and its
      // commit. The bytes are at the staging key; finishing the commit is idempotent. Or
      // deleted since the row was read: FileDeleted is appended before the bytes go, and
      // the read model drops the row a moment later; that file is gone, a 404.
      try {
        await this.storage.commit(row.stagingKey, row.storageKey);
        blob = await this.storage.open(row.storageKey);
      } catch (err) {
        if (await this.deleted(q.fileId)) throw new NotFoundError('File not found');
        throw err;
      }
    }
    if (!blob) {
      if (await this.deleted(q.fileId)) throw new NotFoundError('File not found');
      throw new Error(`file ${row.id}: its bytes are missing at ${row.storageKey}`);
    }
    return { name: row.name, contentType: row.contentType, sha256: row.sha256, blob };
  }

  /** Whether the file's own stream records its deletion (the read model may not show it yet). */
  private async deleted(fileId: number): Promise<boolean> {
    const { state } = await this.repo.load(fileStream(fileId), fileDecider);
    return state.deleted;
  }
}
