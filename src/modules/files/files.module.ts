import { Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../core/config/config';
import { Feature } from '../../core/features/feature';
import { DeleteFileHandler } from './commands/delete-file.command';
import { UploadFileHandler } from './commands/upload-file.command';
import { FilesTable1764000007300 } from './files.migration';
import { FilesController } from './http/files.controller';
import { FileEntity } from './projections/file.entity';
import { FilesProjection } from './projections/files.projection';
import { GetFileHandler, ListFilesHandler, ReadFileContentHandler } from './queries/file.queries';
import { createBlobStorage } from './storage/blob-storage.factory';
import { BLOB_STORAGE } from './storage/blob-storage.port';

/**
 * Files: uploads streamed to the BlobStorage port (disk or S3), their metadata as events
 * and a read model. The port is exported: the messaging feature keeps voice recordings
 * through it (import FilesModule, inject BLOB_STORAGE).
 */
@Feature({
  name: 'files',
  entities: [FileEntity],
  migrations: [FilesTable1764000007300],
  versionedResources: ['files'],
})
@Module({
  controllers: [FilesController],
  providers: [
    {
      provide: BLOB_STORAGE,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => createBlobStorage(config),
    },
    FilesProjection,
    UploadFileHandler,
    DeleteFileHandler,
    ListFilesHandler,
    GetFileHandler,
    ReadFileContentHandler,
  ],
  exports: [BLOB_STORAGE],
})
export class FilesModule {}

declare module '../../core/features/feature' {
  interface VersionedTables {
    files: true;
  }
}
