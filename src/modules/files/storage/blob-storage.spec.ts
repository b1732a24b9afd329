import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { startS3Server, S3TestServer } from '../../../../test/support/s3-server';
import { BlobStorage, STAGING_PREFIX } from './blob-storage.port';
import { DiskBlobStorage } from './disk-blob-storage';
import { S3_PART_BYTES, S3BlobStorage } from './s3-blob-storage';

/** One adapter under test, with a way to look at what it keeps behind the port. */
interface Subject {
  storage: BlobStorage;
  /** Every key the backing store holds (staged and committed). */
  keys(): Promise<string[]>;
  close(): Promise<void>;
}

async function diskSubject(): Promise<Subject> {
  const dir = await mkdtemp(path.join(tmpdir(), 'blobs-'));
  const walk = async (at: string, prefix: string): Promise<string[]> => {
    const entries = await readdir(at, { withFileTypes: true }).catch(() => []);
    const nested = await Promise.all(
      entries.map((e) =>
        e.isDirectory() ? walk(path.join(at, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`],
      ),
    );
    return nested.flat();
  };
  return {
    storage: new DiskBlobStorage(dir),
    keys: () => walk(dir, ''),
    close: () => rm(dir, { recursive: true, force: true }),
  };
}

async function s3Subject(): Promise<Subject> {
  const server: S3TestServer = await startS3Server();
  const options = {
    bucket: server.bucket,
    region: 'us-east-1',
    endpoint: server.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  };
  const storage = new S3BlobStorage(options);
  const inspector = new S3Client({ ...options });
  return {
    storage,
    async keys() {
      const res = await inspector.send(new ListObjectsV2Command({ Bucket: server.bucket }));
      return (res.Contents ?? []).map((o) => o.Key!).sort();
    },
    async close() {
      storage.destroy();
      inspector.destroy();
      await server.stop();
    },
  };
}

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** `bytes` as a stream of 64 KiB chunks, the way an upload arrives. */
function chunked(bytes: Buffer, failAfter?: number): Readable {
  let offset = 0;
  return new Readable({
    read() {
      if (failAfter !== undefined && offset >= failAfter) {
        this.destroy(new Error('upload interrupted'));
        return;
      }
      if (offset >= bytes.length) return void this.push(null);
      this.push(bytes.subarray(offset, offset + 65536));
      offset += 65536;
    },
  });
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** The same conformance spec for every adapter of the BlobStorage port. */
describe.each([
  ['disk', diskSubject],
  ['s3 (s3rver)', s3Subject],
])('BlobStorage conformance: %s', (_name, make) => {
  let subject: Subject;
  let storage: BlobStorage;

  beforeAll(async () => {
    subject = await make();
    storage = subject.storage;
  });
  afterAll(() => subject?.close());

  it('stages bytes out of sight, commits them to their key, and reads them back byte for byte', async () => {
    const bytes = randomBytes(300_000);
    const staged = await storage.stage(chunked(bytes));
    expect(staged.startsWith(`${STAGING_PREFIX}/`)).toBe(true);
    expect(await storage.open('files/ws-a/one')).toBeUndefined();

    await storage.commit(staged, 'files/ws-a/one');
    const blob = await storage.open('files/ws-a/one');
    expect(blob?.size).toBe(bytes.length);
    expect(sha256(await readAll(blob!.stream))).toBe(sha256(bytes));
    expect(await subject.keys()).toEqual(['files/ws-a/one']);
  });

  it('streams a blob larger than one S3 part and keeps it whole', async () => {
    const bytes = randomBytes(S3_PART_BYTES * 2 + 12_345);
    const staged = await storage.stage(chunked(bytes));
    await storage.commit(staged, 'files/ws-a/large');
    const blob = await storage.open('files/ws-a/large');
    expect(blob?.size).toBe(bytes.length);
    expect(sha256(await readAll(blob!.stream))).toBe(sha256(bytes));
  });

  it('stores an empty blob', async () => {
    const staged = await storage.stage(Readable.from([]));
    await storage.commit(staged, 'files/ws-a/empty');
    const blob = await storage.open('files/ws-a/empty');
    expect(blob?.size).toBe(0);
    expect((await readAll(blob!.stream)).length).toBe(0);
  });

  it('repeats a commit harmlessly (a commit finished after a crash), and refuses one of nothing', async () => {
    const bytes = randomBytes(1000);
    const staged = await storage.stage(chunked(bytes));
    await storage.commit(staged, 'files/ws-b/again');
    await storage.commit(staged, 'files/ws-b/again');
    expect(sha256(await readAll((await storage.open('files/ws-b/again'))!.stream))).toBe(sha256(bytes));
    await expect(storage.commit(`${STAGING_PREFIX}/never-staged`, 'files/ws-b/nothing')).rejects.toThrow();
    expect(await storage.open('files/ws-b/nothing')).toBeUndefined();
  });

  it('leaves nothing behind when the stream fails part-way', async () => {
    const before = await subject.keys();
    const bytes = randomBytes(S3_PART_BYTES + 200_000);
    await expect(storage.stage(chunked(bytes, S3_PART_BYTES + 65536))).rejects.toThrow('upload interrupted');
    expect(await subject.keys()).toEqual(before);
  });

  it('rejects a stream that failed before it was handed over, keeping nothing', async () => {
    const before = await subject.keys();
    const failed = new Readable({ read() {} });
    failed.on('error', () => undefined);
    failed.destroy(new Error('failed early'));
    await expect(storage.stage(failed)).rejects.toThrow('failed early');
    expect(await subject.keys()).toEqual(before);
  });

  it('discards a staged blob and deletes a committed one, each idempotently', async () => {
    const before = await subject.keys();
    const dropped = await storage.stage(chunked(randomBytes(10)));
    await storage.discard(dropped);
    await storage.discard(dropped);
    expect(await subject.keys()).toEqual(before);

    const kept = await storage.stage(chunked(randomBytes(10)));
    await storage.commit(kept, 'files/ws-c/gone');
    await storage.delete('files/ws-c/gone');
    await storage.delete('files/ws-c/gone');
    expect(await storage.open('files/ws-c/gone')).toBeUndefined();
    expect(await subject.keys()).toEqual(before);
  });

  it('refuses keys that could leave its space', async () => {
    for (const key of ['../etc/passwd', '/abs', 'a/../b', 'a//b', '', 'a/.hidden/..'])
      await expect(storage.open(key)).rejects.toThrow('Invalid blob key');
  });
});
