import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { v7 as uuidv7 } from 'uuid';
import { assertBlobKey, BlobStorage, STAGING_PREFIX, StoredBlob } from './blob-storage.port';

const isMissing = (err: unknown): boolean => (err as NodeJS.ErrnoException)?.code === 'ENOENT';

/**
 * Blobs as files under one directory: staged under `staging/`, committed by rename(2),
 * which is atomic within a file system, so a reader sees the whole file or none. Every
 * process that serves or commits must see the same directory (one host, or a shared volume).
 */
export class DiskBlobStorage implements BlobStorage {
  readonly kind = 'disk';
  private readonly root: string;

  constructor(dir: string) {
    this.root = path.resolve(dir);
  }

  private pathOf(key: string): string {
    return path.join(this.root, ...assertBlobKey(key).split('/'));
  }

  async stage(body: Readable): Promise<string> {
    const key = `${STAGING_PREFIX}/${uuidv7()}`;
    const file = this.pathOf(key);
    await mkdir(path.dirname(file), { recursive: true });
    try {
      await pipeline(body, createWriteStream(file, { flags: 'wx' }));
      // On disk before the caller records it: a crash after the record must not lose it.
      const handle = await open(file, 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
    } catch (err) {
      await rm(file, { force: true });
      throw err;
    }
    return key;
  }

  async commit(stagingKey: string, key: string): Promise<void> {
    const target = this.pathOf(key);
    await mkdir(path.dirname(target), { recursive: true });
    try {
      await rename(this.pathOf(stagingKey), target);
    } catch (err) {
      // Committed before (a repeated commit): the staged file is gone, the target is there.
      if (isMissing(err) && (await this.exists(target))) return;
      throw err;
    }
  }

  discard(stagingKey: string): Promise<void> {
    return rm(this.pathOf(stagingKey), { force: true });
  }

  async open(key: string): Promise<StoredBlob | undefined> {
    const file = this.pathOf(key);
    try {
      const handle = await open(file, 'r');
      const { size } = await handle.stat();
      // The stream owns the handle from here (closes it at the end or on destroy).
      return { stream: createReadStream(file, { fd: handle }), size };
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  delete(key: string): Promise<void> {
    return rm(this.pathOf(key), { force: true });
  }

  private async exists(file: string): Promise<boolean> {
    try {
      await stat(file);
      return true;
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
  }
}
