import type { AppConfig } from '../../../core/config/config';
import type { BlobStorage } from './blob-storage.port';
import { DiskBlobStorage } from './disk-blob-storage';
import { S3BlobStorage } from './s3-blob-storage';

/** The adapter FILE_STORAGE names, configured from the environment (README, Configuration). */
export function createBlobStorage(config: AppConfig): BlobStorage {
  switch (config.fileStorage) {
    case 'disk':
      return new DiskBlobStorage(config.fileStorageDir);
    case 's3':
      return new S3BlobStorage({
        bucket: config.s3Bucket!, // loadConfig requires it with FILE_STORAGE=s3
        region: config.s3Region,
        endpoint: config.s3Endpoint,
        forcePathStyle: config.s3ForcePathStyle,
        credentials:
          config.s3AccessKeyId && config.s3SecretAccessKey
            ? { accessKeyId: config.s3AccessKeyId, secretAccessKey: config.s3SecretAccessKey }
            : undefined,
      });
  }
}
