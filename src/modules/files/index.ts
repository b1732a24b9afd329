/**
 * The files feature's public surface: what other features may use. Everything else under
 * modules/files is internal (src/app.features.spec.ts enforces it).
 *
 * BlobStorage is the port other features store bytes through (the messaging feature's
 * voice recordings): import FilesModule and inject BLOB_STORAGE.
 */
export { FilesModule } from './files.module';
export { BLOB_STORAGE } from './storage/blob-storage.port';
export type { BlobStorage, StoredBlob } from './storage/blob-storage.port';
export { fileStream } from './domain/file.events';
export type { FileDeleted, FileEvent, FileUploaded } from './domain/file.events';
