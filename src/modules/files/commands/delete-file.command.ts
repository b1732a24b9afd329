import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { JsonLogger } from '../../../core/logging/json-logger';
import { FileDeleted, fileDecider, fileStream } from '../domain/file';
import { BLOB_STORAGE, BlobStorage } from '../storage/blob-storage.port';

export class DeleteFileCommand {
  constructor(
    readonly workspaceId: string,
    readonly fileId: number,
    /** Pinned by If-Match: the file's stream must still be at this revision, else 412. */
    readonly expectedRevision?: bigint,
  ) {}
}

/**
 * Records the deletion, then removes the bytes. The record comes first: once FileDeleted is
 * appended nobody reads the file, so a crash before the removal leaves an orphan blob,
 * never a file whose bytes are gone.
 */
@CommandHandler(DeleteFileCommand)
export class DeleteFileHandler implements ICommandHandler<DeleteFileCommand> {
  constructor(
    private readonly repo: EventSourcedRepository,
    @Inject(BLOB_STORAGE) private readonly storage: BlobStorage,
    private readonly logger: JsonLogger,
  ) {}

  async execute(cmd: DeleteFileCommand): Promise<void> {
    const { events } = await this.repo.handle({
      streamName: fileStream(cmd.fileId),
      workspaceId: cmd.workspaceId,
      decider: fileDecider,
      expectedRevision: cmd.expectedRevision,
      command: {
        type: 'DeleteFile',
        fileId: cmd.fileId,
        workspaceId: cmd.workspaceId,
        now: new Date().toISOString(),
      },
    });
    const { storageKey, stagingKey, fileId } = (events[0] as FileDeleted).data;
    await Promise.all([this.storage.delete(storageKey), this.storage.discard(stagingKey)]).catch(
      (err: unknown) =>
        this.logger.event('warn', {
          msg: 'deleted file left its bytes behind',
          fileId,
          err: err instanceof Error ? err.message : String(err),
        }),
    );
  }
}
