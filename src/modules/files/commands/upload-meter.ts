import { createHash, Hash } from 'node:crypto';
import { Transform, TransformCallback } from 'node:stream';
import { PayloadTooLargeError } from '../../../core/http/domain-errors';
import { SNIFF_BYTES } from '../domain/content-type';

/**
 * Passes an upload through unchanged while it counts the bytes, hashes them (SHA-256) and
 * keeps the first SNIFF_BYTES for content sniffing; nothing else is held. More than
 * `maxBytes` fails the stream with 413, so whatever it feeds (BlobStorage.stage) stops
 * and keeps nothing.
 */
export class UploadMeter extends Transform {
  size = 0;
  private readonly hash: Hash = createHash('sha256');
  private readonly headChunks: Buffer[] = [];
  private headBytes = 0;

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.size += chunk.length;
    if (this.size > this.maxBytes)
      return done(new PayloadTooLargeError(`file: larger than the limit of ${this.maxBytes} bytes`));
    this.hash.update(chunk);
    if (this.headBytes < SNIFF_BYTES) {
      const part = chunk.subarray(0, SNIFF_BYTES - this.headBytes);
      // A copy: the chunk's memory may be a slice of a larger buffer the parser reuses.
      this.headChunks.push(Buffer.from(part));
      this.headBytes += part.length;
    }
    done(null, chunk);
  }

  /** The first bytes (at most SNIFF_BYTES), once the stream has ended. */
  head(): Buffer {
    return Buffer.concat(this.headChunks, this.headBytes);
  }

  /** The SHA-256 of every byte, hex; call once, after the stream has ended. */
  sha256(): string {
    return this.hash.digest('hex');
  }
}
