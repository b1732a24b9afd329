import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { Readable } from 'node:stream';
import { v7 as uuidv7 } from 'uuid';
import { assertBlobKey, BlobStorage, STAGING_PREFIX, StoredBlob } from './blob-storage.port';

export interface S3BlobStorageOptions {
  bucket: string;
  region: string;
  endpoint?: string;
  forcePathStyle?: boolean;
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

/**
 * S3's smallest part of a multipart upload (but the last): an upload is buffered one part
 * at a time, so a stream of any length costs at most this much memory.
 */
export const S3_PART_BYTES = 5 * 1024 * 1024;

const isNotFound = (err: unknown): boolean => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
};

/**
 * Blobs as objects of one bucket (AWS S3, or any S3-compatible server through S3_ENDPOINT).
 * A stream of unknown length is uploaded in parts of S3_PART_BYTES (one PutObject when it
 * is smaller); staged objects live under `staging/` and are committed by a server-side copy
 * to the final key, then deleted. A staged object that is never committed (a crash before
 * its record) is an orphan a bucket lifecycle rule on `staging/` can expire.
 */
export class S3BlobStorage implements BlobStorage {
  readonly kind = 's3';
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(options: S3BlobStorageOptions) {
    this.bucket = options.bucket;
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      credentials: options.credentials,
      // Checksums only where S3 requires them: S3-compatible servers do not all understand
      // the SDK's default trailing checksums on streamed bodies.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async stage(body: Readable): Promise<string> {
    const Key = `${STAGING_PREFIX}/${uuidv7()}`;
    const Bucket = this.bucket;
    let uploadId: string | undefined;
    const parts: { ETag: string | undefined; PartNumber: number }[] = [];
    let chunks: Buffer[] = [];
    let buffered = 0;
    const uploadPart = async () => {
      uploadId ??= (await this.client.send(new CreateMultipartUploadCommand({ Bucket, Key }))).UploadId;
      const PartNumber = parts.length + 1;
      const part = Buffer.concat(chunks, buffered);
      chunks = [];
      buffered = 0;
      const { ETag } = await this.client.send(
        new UploadPartCommand({ Bucket, Key, UploadId: uploadId, PartNumber, Body: part }),
      );
      parts.push({ ETag, PartNumber });
    };
    try {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        chunks.push(chunk);
        buffered += chunk.length;
        if (buffered >= S3_PART_BYTES) await uploadPart();
      }
      if (uploadId === undefined) {
        await this.client.send(new PutObjectCommand({ Bucket, Key, Body: Buffer.concat(chunks, buffered) }));
      } else {
        if (buffered > 0) await uploadPart();
        await this.client.send(
          new CompleteMultipartUploadCommand({
            Bucket,
            Key,
            UploadId: uploadId,
            MultipartUpload: { Parts: parts },
          }),
        );
      }
    } catch (err) {
      if (uploadId !== undefined)
        await this.client
          .send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId: uploadId }))
          .catch(() => undefined); // an unfinished upload is invisible; lifecycle rules expire it
      throw err;
    }
    return Key;
  }

  async commit(stagingKey: string, key: string): Promise<void> {
    assertBlobKey(key);
    try {
      await this.client.send(
        new CopyObjectCommand({
          Bucket: this.bucket,
          Key: key,
          CopySource: encodeURI(`${this.bucket}/${assertBlobKey(stagingKey)}`),
        }),
      );
    } catch (err) {
      // Committed before (a repeated commit): the staged object is gone, the target is there.
      if (isNotFound(err) && (await this.exists(key))) return;
      throw err;
    }
    await this.discard(stagingKey);
  }

  async discard(stagingKey: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: assertBlobKey(stagingKey) }));
  }

  async open(key: string): Promise<StoredBlob | undefined> {
    try {
      const res = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: assertBlobKey(key) }),
      );
      return { stream: res.Body as Readable, size: Number(res.ContentLength ?? 0) };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: assertBlobKey(key) }));
  }

  private async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /** Nest calls this on shutdown: the client's sockets are closed. */
  onModuleDestroy(): void {
    this.destroy();
  }

  /** Closes the client's sockets. */
  destroy(): void {
    this.client.destroy();
  }
}
