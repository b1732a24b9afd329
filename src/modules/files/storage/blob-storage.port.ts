import type { Readable } from 'node:stream';

/**
 * Where uploaded bytes live (files, and the messaging feature's voice recordings): a port
 * with a local-disk and an S3 adapter (storage/*.ts), chosen by FILE_STORAGE. Inject it
 * with `@Inject(BLOB_STORAGE)`; files' index.ts exports both.
 *
 * Writing is two-phase, so no reader ever sees half a blob and a crash leaves at most an
 * orphan: `stage` streams the bytes under a fresh staging key nobody reads, the caller
 * records what it stored (an event), then `commit` moves the blob to its final key (a
 * rename on disk, a copy on S3). A crash before the record leaves an orphan staged blob;
 * a crash after it leaves the bytes at the staging key the record names, which `commit`
 * (idempotent) finishes later.
 */
export interface BlobStorage {
  /** Which adapter this is (`disk`, `s3`), for logs and health. */
  readonly kind: string;
  /**
   * Streams `body` to a new staging key and resolves with that key once every byte is
   * stored. When `body` fails (an upload over its limit, a dropped connection) nothing is
   * left behind and the promise rejects with the stream's error.
   */
  stage(body: Readable): Promise<string>;
  /**
   * Makes the staged blob readable at `key`. Idempotent: done when the blob is already
   * there (a commit repeated after a crash); fails when neither exists.
   */
  commit(stagingKey: string, key: string): Promise<void>;
  /** Removes a staged blob that will not be committed; nothing when it is gone. */
  discard(stagingKey: string): Promise<void>;
  /** The committed blob at `key`, or undefined when there is none. */
  open(key: string): Promise<StoredBlob | undefined>;
  /** Removes the committed blob at `key`; nothing when it is gone. */
  delete(key: string): Promise<void>;
}

export interface StoredBlob {
  stream: Readable;
  size: number;
}

export const BLOB_STORAGE = Symbol('BLOB_STORAGE');

/**
 * Keys are relative paths of safe segments (`<workspace>/<uuid>`): on disk they become file
 * paths, so no `..`, no absolute path, no empty or dot segment.
 */
const KEY = /^[A-Za-z0-9][A-Za-z0-9_-]*(\/[A-Za-z0-9][A-Za-z0-9_.-]*)*$/;

export function assertBlobKey(key: string): string {
  if (!KEY.test(key) || key.length > 512) throw new Error(`Invalid blob key ${JSON.stringify(key)}`);
  return key;
}

/** Where staged blobs are kept, apart from committed ones. */
export const STAGING_PREFIX = 'staging';
