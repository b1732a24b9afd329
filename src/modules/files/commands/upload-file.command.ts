import { Inject } from '@nestjs/common';
import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import FileType from 'file-type';
import { finished, Readable } from 'node:stream';
import { DataSource } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { EventSourcedRepository } from '../../../core/cqrs/event-sourced-repository';
import { nextId } from '../../../core/database/ids';
import { DomainError, ValidationError } from '../../../core/http/domain-errors';
import { JsonLogger } from '../../../core/logging/json-logger';
import { contentTypeOf } from '../domain/content-type';
import { FileCommand, fileDecider, fileStream } from '../domain/file';
import { BLOB_STORAGE, BlobStorage } from '../storage/blob-storage.port';
import { crashPoint } from './crash-points';
import { UploadMeter } from './upload-meter';

export class UploadFileCommand {
  constructor(
    readonly workspaceId: string,
    /** The name the client gave (normalised by the decider). */
    readonly name: string | undefined,
    /** The bytes, streamed: they pass through once and are never held whole. */
    readonly body: Readable,
    /** FILE_MAX_BYTES: more is 413 and nothing is kept. */
    readonly maxBytes: number,
    /**
     * What must still arrive whole once the bytes are in, before anything is recorded (the
     * rest of a multipart body: no second file); a refusal there keeps nothing.
     */
    readonly rest: () => Promise<void> = () => Promise.resolve(),
  ) {}
}

/**
 * Stores an upload and records it; returns the new file's id. The order keeps storage and
 * the record consistent through a crash at any point: the bytes are staged (out of sight)
 * while they are measured, hashed and sniffed; FileUploaded is appended naming both the
 * staging key and the final key; then the blob is committed to its final key. A crash
 * before the append leaves an orphan staged blob and no record; one after it leaves a
 * record whose bytes are still staged, and the first read finishes the commit
 * (ReadFileContentHandler).
 */
@CommandHandler(UploadFileCommand)
export class UploadFileHandler implements ICommandHandler<UploadFileCommand, number> {
  constructor(
    private readonly repo: EventSourcedRepository,
    private readonly db: DataSource,
    @Inject(BLOB_STORAGE) private readonly storage: BlobStorage,
    private readonly logger: JsonLogger,
  ) {}

  async execute(cmd: UploadFileCommand): Promise<number> {
    const meter = new UploadMeter(cmd.maxBytes);
    // The meter may fail before storage listens to it (the source can fail at once): its
    // error is kept by the stream and surfaces through stage(), never as an uncaught event.
    meter.on('error', () => undefined);
    // A source that fails or stops short (a cut-off or malformed upload, possibly before
    // it gets here) fails the staging as the client's fault; a failure of storage itself
    // stays a 500.
    finished(cmd.body, (err) => {
      if (err) meter.destroy(new ValidationError(`file: the upload did not arrive whole (${err.message})`));
    });
    const stagingKey = await this.storage.stage(cmd.body.pipe(meter));
    crashPoint('staged');
    let command: FileCommand;
    let fileId: number;
    let storageKey: string;
    try {
      await cmd.rest();
      const head = meter.head();
      const sniffed = await FileType.fromBuffer(head);
      fileId = await nextId(this.db, 'file_id_seq');
      storageKey = `files/${cmd.workspaceId}/${uuidv7()}`;
      command = {
        type: 'UploadFile',
        fileId,
        workspaceId: cmd.workspaceId,
        name: cmd.name,
        contentType: contentTypeOf(head, sniffed?.mime),
        size: meter.size,
        sha256: meter.sha256(),
        storageKey,
        stagingKey,
        maxBytes: cmd.maxBytes,
        now: new Date().toISOString(),
      };
    } catch (err) {
      await this.discard(stagingKey);
      throw err;
    }
    try {
      await this.repo.handle({
        streamName: fileStream(fileId),
        workspaceId: cmd.workspaceId,
        decider: fileDecider,
        command,
      });
    } catch (err) {
      // Refused by the decider: nothing was appended, the staged bytes go. Any other failure
      // may have appended after all (a connection lost after the commit): the bytes stay,
      // at worst an orphan, never a record without bytes.
      if (err instanceof DomainError) await this.discard(stagingKey);
      throw err;
    }
    crashPoint('recorded');
    await this.storage.commit(stagingKey, storageKey).catch((err: unknown) =>
      // Recorded, and the bytes are safe where they were staged: the first read commits them.
      this.logger.event('warn', {
        msg: 'file commit deferred to its first read',
        fileId,
        err: err instanceof Error ? err.message : String(err),
      }),
    );
    return fileId;
  }

  private async discard(stagingKey: string): Promise<void> {
    await this.storage.discard(stagingKey).catch((err: unknown) =>
      this.logger.event('warn', {
        msg: 'staged upload not discarded (an orphan under staging/)',
        err: err instanceof Error ? err.message : String(err),
      }),
    );
  }
}
