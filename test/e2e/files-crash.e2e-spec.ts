import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestApp, TestApp } from '../support/app';
import { sha256, uploadFile } from '../support/file-uploads';
import { eventually, killAll, spawnOnFreePort } from '../support/processes';

/**
 * An upload's process killed part-way (FILES_TEST_CRASH_AT, honoured with NODE_ENV=test):
 * after staging, the bytes are an orphan under staging/ and nothing is recorded; after the
 * append, the record's bytes are still staged and its first read commits them. Never a
 * record without bytes, never half a file at a final key.
 */
describe('Files: a crash during an upload (e2e)', () => {
  let t: TestApp;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'files-crash-'));
    t = await startTestApp({ env: { FILE_STORAGE_DIR: dir } });
  }, 120_000);

  afterAll(async () => {
    await killAll();
    await t?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const keys = async (under: string) =>
    (await readdir(path.join(dir, under), { recursive: true }).catch(() => [] as string[]))
      .map(String)
      .sort();

  /** A ROLE=api process on the test app's database and storage, doomed at `point`. */
  async function doomedApi(point: string) {
    const { proc, port } = await spawnOnFreePort(
      `api crashing at ${point}`,
      'src/main.ts',
      (p) => ({
        DATABASE_URL: t.config.databaseUrl,
        REDIS_URL: t.config.redisUrl,
        REDIS_PREFIX: t.config.redisPrefix,
        NODE_ENV: 'test',
        LOG_LEVEL: 'info',
        ROLE: 'api',
        PORT: String(p),
        HOST: '127.0.0.1',
        RATE_LIMIT_PER_MINUTE: '1000000',
        RATE_LIMIT_CONCURRENCY: '10000',
        FILE_STORAGE_DIR: dir,
        FILES_TEST_CRASH_AT: point,
      }),
      /"msg":"listening"/,
    );
    return { proc, base: `http://127.0.0.1:${port}/api/v2` };
  }

  async function fileEvents(wid: string) {
    const events = [];
    let after;
    for (;;) {
      const batch = await t.store.readAll({ after, maxCount: 1000 });
      if (!batch.length) break;
      events.push(...batch);
      after = batch[batch.length - 1].position;
    }
    return events.filter((e) => e.type.startsWith('File') && e.metadata.workspaceId === wid);
  }

  it('leaves an orphan under staging/ and no record when it dies after staging', async () => {
    const a = await t.bootstrap();
    const api = await doomedApi('staged');
    const stagedBefore = await keys('staging');
    await expect(uploadFile(api.base, a.workspaceId, a.apiKey, randomBytes(100_000))).rejects.toThrow();
    expect(await api.proc.exited).toBe('SIGKILL');

    expect(await fileEvents(a.workspaceId)).toEqual([]);
    expect((await t.request('GET', `/w/${a.workspaceId}/files`, { token: a.apiKey })).body.total).toBe(0);
    expect(await keys(`files/${a.workspaceId}`)).toEqual([]);
    expect((await keys('staging')).length).toBe(stagedBefore.length + 1);
  });

  it('leaves a record whose first read commits its staged bytes when it dies after recording', async () => {
    const a = await t.bootstrap();
    const api = await doomedApi('recorded');
    const bytes = randomBytes(100_000);
    await expect(uploadFile(api.base, a.workspaceId, a.apiKey, bytes)).rejects.toThrow();
    expect(await api.proc.exited).toBe('SIGKILL');

    // The store shows an append to readers once no older transaction in the cluster is open.
    const [uploaded, ...rest] = await eventually(async () => {
      const events = await fileEvents(a.workspaceId);
      return events.length ? events : undefined;
    }, 'the FileUploaded event');
    expect(rest).toEqual([]);
    expect(uploaded.type).toBe('FileUploaded');
    const { fileId, storageKey, stagingKey } = uploaded.data as {
      fileId: number;
      storageKey: string;
      stagingKey: string;
    };
    expect(await keys(`files/${a.workspaceId}`)).toEqual([]);
    expect(await keys('staging')).toContain(stagingKey.replace(/^staging\//, ''));

    // The surviving process's projection shows the record; its content is whole.
    await eventually(
      async () =>
        (await t.request('GET', `/w/${a.workspaceId}/files/${fileId}`, { token: a.apiKey })).status === 200,
      'the file record',
    );
    const res = await fetch(`${t.baseUrl}/w/${a.workspaceId}/files/${fileId}/content`, {
      headers: { authorization: `Bearer ${a.apiKey}` },
    });
    expect(res.status).toBe(200);
    expect(sha256(Buffer.from(await res.arrayBuffer()))).toBe(sha256(bytes));
    expect(await keys(`files/${a.workspaceId}`)).toEqual([storageKey.split('/').pop()]);
    expect(await keys('staging')).not.toContain(stagingKey.replace(/^staging\//, ''));
  });
});
