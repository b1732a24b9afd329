import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestApp, TestApp } from '../support/app';
import { PNG_1X1, sha256, uploadChunked, uploadFile } from '../support/file-uploads';
import { keyWithScopes } from '../support/identity-fixtures';
import { startS3Server, S3TestServer } from '../support/s3-server';

const MAX_BYTES = 1024 * 1024;

/** Every key a storage holds (committed and staged), to show what an operation left behind. */
type KeysOf = () => Promise<string[]>;

async function walk(dir: string, prefix = ''): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const nested = await Promise.all(
    entries.map((e) =>
      e.isDirectory() ? walk(path.join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`],
    ),
  );
  return nested.flat().sort();
}

async function download(t: TestApp, url: string, token: string) {
  const res = await fetch(`${t.baseUrl}${url}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

/** Upload, read back and delete: the same behaviour on both storage adapters. */
describe.each(['disk', 's3'] as const)('Files on %s storage (e2e)', (storage) => {
  let t: TestApp;
  let dir: string;
  let s3: S3TestServer | undefined;
  let inspector: S3Client | undefined;
  let keys: KeysOf;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'files-e2e-'));
    if (storage === 's3') {
      s3 = await startS3Server();
      inspector = new S3Client({
        region: 'us-east-1',
        endpoint: s3.endpoint,
        forcePathStyle: true,
        credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      });
      keys = async () =>
        ((await inspector!.send(new ListObjectsV2Command({ Bucket: s3!.bucket }))).Contents ?? [])
          .map((o) => o.Key!)
          .sort();
    } else {
      keys = () => walk(dir);
    }
    t = await startTestApp({
      env: { FILE_STORAGE_DIR: dir, FILE_MAX_BYTES: String(MAX_BYTES), ...(s3?.env ?? {}) },
    });
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    inspector?.destroy();
    await s3?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('stores an upload, serves it byte for byte with its sniffed type, and deletes it with its bytes', async () => {
    const a = await t.bootstrap();
    const bytes = Buffer.concat([PNG_1X1, randomBytes(200_000)]);
    // A PNG declared as text/plain, its name with a client path.
    const res = await uploadFile(t.baseUrl, a.workspaceId, a.apiKey, bytes, {
      name: 'C:\\Users\\ann\\holiday.png',
      type: 'text/plain',
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      name: 'holiday.png',
      contentType: 'image/png',
      size: bytes.length,
      sha256: sha256(bytes),
      createdAt: expect.any(String),
    });
    const id = res.body.id as number;
    expect(res.headers.get('location')).toBe(`/api/v2/w/${a.workspaceId}/files/${id}`);
    await t.expectEvents(res, [
      {
        type: 'FileUploaded',
        stream: `file-${id}`,
        data: {
          fileId: id,
          workspaceId: a.workspaceId,
          name: 'holiday.png',
          contentType: 'image/png',
          size: bytes.length,
          sha256: sha256(bytes),
        },
      },
    ]);
    // Committed: one blob at its final key, nothing left staged.
    expect(await keys()).toEqual([expect.stringMatching(new RegExp(`^files/${a.workspaceId}/[0-9a-f-]+$`))]);

    const meta = await t.request('GET', `/w/${a.workspaceId}/files/${id}`, { token: a.apiKey });
    expect(meta.status).toBe(200);
    expect(meta.body).toEqual(res.body);
    expect(meta.headers.get('etag')).toBe('"1"');

    for (const url of [
      `/w/${a.workspaceId}/files/${id}?download=1`,
      `/w/${a.workspaceId}/files/${id}/content`,
    ]) {
      const got = await download(t, url, a.apiKey);
      expect(got.status).toBe(200);
      expect(got.headers.get('content-type')).toBe('image/png');
      expect(got.headers.get('content-length')).toBe(String(bytes.length));
      expect(got.headers.get('content-disposition')).toBe(
        `attachment; filename="holiday.png"; filename*=UTF-8''holiday.png`,
      );
      expect(got.headers.get('x-content-type-options')).toBe('nosniff');
      expect(sha256(got.bytes)).toBe(sha256(bytes));
    }

    const list = await t.request('GET', `/w/${a.workspaceId}/files?search=HOLIDAY`, { token: a.apiKey });
    expect(list.body).toEqual({ items: [res.body], total: 1, page: 1, pageSize: 50 });

    const del = await t.request('DELETE', `/w/${a.workspaceId}/files/${id}`, { token: a.apiKey });
    expect(del.status).toBe(204);
    await t.expectEvents(del, [{ type: 'FileDeleted', stream: `file-${id}`, data: { fileId: id } }]);
    expect(await keys()).toEqual([]);
    expect((await t.request('GET', `/w/${a.workspaceId}/files/${id}`, { token: a.apiKey })).status).toBe(404);
    expect((await download(t, `/w/${a.workspaceId}/files/${id}/content`, a.apiKey)).status).toBe(404);
    expect((await t.request('DELETE', `/w/${a.workspaceId}/files/${id}`, { token: a.apiKey })).status).toBe(
      404,
    );
    expect((await t.request('GET', `/w/${a.workspaceId}/files`, { token: a.apiKey })).body.total).toBe(0);
  });

  it('accepts a file of exactly the limit and refuses one byte more with 413, keeping nothing', async () => {
    const a = await t.bootstrap();
    const before = await keys();
    const over = await uploadFile(t.baseUrl, a.workspaceId, a.apiKey, randomBytes(MAX_BYTES + 1));
    expect(over.status).toBe(413);
    expect(over.body).toEqual({ detail: `file: larger than the limit of ${MAX_BYTES} bytes` });
    await t.expectEvents(over, []);
    // Streamed without a Content-Length: refused once the limit is passed.
    const streamed = await uploadChunked(t.baseUrl, a.workspaceId, a.apiKey, 3 * MAX_BYTES);
    expect(streamed.status).toBe(413);
    expect(streamed.body.detail).toMatch(/^file: larger than the limit/);
    expect(await keys()).toEqual(before);

    const exact = await uploadFile(t.baseUrl, a.workspaceId, a.apiKey, randomBytes(MAX_BYTES));
    expect(exact.status).toBe(201);
    expect(exact.body.size).toBe(MAX_BYTES);
    expect((await t.request('GET', `/w/${a.workspaceId}/files`, { token: a.apiKey })).body.total).toBe(1);
  });
});

describe('Files (e2e)', () => {
  let t: TestApp;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'files-e2e-'));
    t = await startTestApp({ env: { FILE_STORAGE_DIR: dir, FILE_MAX_BYTES: String(MAX_BYTES) } });
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('sniffs the type from the bytes: text is text/plain whatever was declared, unknown bytes octet-stream', async () => {
    const a = await t.bootstrap();
    const html = await uploadFile(
      t.baseUrl,
      a.workspaceId,
      a.apiKey,
      Buffer.from('<script>alert(1)</script>'),
      {
        name: 'page.html',
        type: 'text/html',
      },
    );
    expect(html.body.contentType).toBe('text/plain; charset=utf-8');
    const blob = await uploadFile(t.baseUrl, a.workspaceId, a.apiKey, Buffer.from([0, 1, 2, 3, 0xff, 0xfe]), {
      type: 'image/png',
    });
    expect(blob.body.contentType).toBe('application/octet-stream');
    const got = await download(t, `/w/${a.workspaceId}/files/${html.body.id}/content`, a.apiKey);
    expect(got.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(got.headers.get('content-disposition')).toMatch(/^attachment;/);
  });

  it('keeps a name safe to show and to send back in a header', async () => {
    const a = await t.bootstrap();
    const res = await uploadFile(t.baseUrl, a.workspaceId, a.apiKey, Buffer.from('x'), {
      name: '../../etc/résumé (final)\u0007.txt',
    });
    expect(res.body.name).toBe('résumé (final).txt');
    const got = await download(t, `/w/${a.workspaceId}/files/${res.body.id}/content`, a.apiKey);
    expect(got.headers.get('content-disposition')).toBe(
      `attachment; filename="r_sum_ (final).txt"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%28final%29.txt`,
    );
  });

  it('reads multipart only on the upload route, and JSON everywhere else (415), before reading the body', async () => {
    const a = await t.bootstrap();
    const json = await t.request('POST', `/w/${a.workspaceId}/files`, {
      token: a.apiKey,
      body: { file: 'x' },
    });
    expect(json.status).toBe(415);
    expect(json.body).toEqual({
      detail: 'Content-Type application/json is not supported; send multipart/form-data',
    });
    const none = await fetch(`${t.baseUrl}/w/${a.workspaceId}/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.apiKey}` },
    });
    expect(none.status).toBe(415);
    expect(await none.json()).toEqual({
      detail: 'The request has no body; send the file as multipart/form-data',
    });
    const text = await fetch(`${t.baseUrl}/w/${a.workspaceId}/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.apiKey}`, 'content-type': 'text/plain' },
      body: 'x'.repeat(1000),
    });
    expect(text.status).toBe(415);
    expect(await text.json()).toEqual({
      detail: 'Content-Type text/plain is not supported; send multipart/form-data',
    });

    const form = new FormData();
    form.append('name', 'Sneaky');
    const onJsonRoute = await fetch(`${t.baseUrl}/w/${a.workspaceId}/member-roles`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.apiKey}` },
      body: form,
    });
    expect(onJsonRoute.status).toBe(415);
    expect(await onJsonRoute.json()).toEqual({
      detail: 'Content-Type multipart/form-data is not supported; send application/json',
    });
  });

  it('refuses a form without the part named file, and malformed multipart, with 400 naming file or body', async () => {
    const a = await t.bootstrap();
    const wrong = await uploadFile(t.baseUrl, a.workspaceId, a.apiKey, Buffer.from('x'), {
      field: 'attachment',
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.detail).toMatch(/^file: required/);

    const form = new FormData();
    form.append('note', 'no file here');
    const noFile = await fetch(`${t.baseUrl}/w/${a.workspaceId}/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.apiKey}` },
      body: form,
    });
    expect(noFile.status).toBe(400);
    expect(((await noFile.json()) as { detail: string }).detail).toMatch(/^file: required/);

    const cut = await fetch(`${t.baseUrl}/w/${a.workspaceId}/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.apiKey}`, 'content-type': 'multipart/form-data; boundary=xyz' },
      body: '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhalf a fi',
    });
    expect(cut.status).toBe(400);
    expect(((await cut.json()) as { detail: string }).detail).toMatch(/^(file|body): /);
    expect((await t.request('GET', `/w/${a.workspaceId}/files`, { token: a.apiKey })).body.total).toBe(0);
    expect(await walk(dir).then((k) => k.filter((x) => x.startsWith('staging/')))).toEqual([]);
  });

  it('needs files:read to read, files:write to upload and files:admin to delete', async () => {
    const a = await t.bootstrap();
    const up = await uploadFile(t.baseUrl, a.workspaceId, a.apiKey, PNG_1X1);
    const id = up.body.id as number;
    const reader = await keyWithScopes(t, a.apiKey, ['files:read']);
    const writer = await keyWithScopes(t, a.apiKey, ['files:write']);
    const none = await keyWithScopes(t, a.apiKey, ['members:read']);

    expect((await t.request('GET', `/w/${a.workspaceId}/files`, { token: reader })).status).toBe(200);
    expect((await t.request('GET', `/w/${a.workspaceId}/files/${id}`, { token: reader })).status).toBe(200);
    expect((await download(t, `/w/${a.workspaceId}/files/${id}/content`, reader)).status).toBe(200);
    const readerUpload = await uploadFile(t.baseUrl, a.workspaceId, reader, PNG_1X1);
    expect(readerUpload.status).toBe(403);
    expect(readerUpload.body.detail).toContain('files:write');

    expect((await uploadFile(t.baseUrl, a.workspaceId, writer, PNG_1X1)).status).toBe(201);
    const writerDelete = await t.request('DELETE', `/w/${a.workspaceId}/files/${id}`, { token: writer });
    expect(writerDelete.status).toBe(403);
    expect(writerDelete.body.detail).toContain('files:admin');

    for (const url of [`/w/${a.workspaceId}/files`, `/w/${a.workspaceId}/files/${id}`]) {
      const res = await t.request('GET', url, { token: none });
      expect(res.status).toBe(403);
      expect(res.body.detail).toContain('files:read');
    }
    expect((await download(t, `/w/${a.workspaceId}/files/${id}/content`, none)).status).toBe(403);
    const anonymous = await uploadFile(t.baseUrl, a.workspaceId, undefined, PNG_1X1);
    expect(anonymous.status).toBe(401);
    // Refusals changed nothing: the file is still there, with its bytes.
    expect((await download(t, `/w/${a.workspaceId}/files/${id}/content`, a.apiKey)).bytes).toEqual(PNG_1X1);
  });

  it("keeps each workspace's files to itself (404 elsewhere)", async () => {
    const a = await t.bootstrap('A');
    const b = await t.bootstrap('B');
    const up = await uploadFile(t.baseUrl, a.workspaceId, a.apiKey, PNG_1X1);
    const id = up.body.id as number;
    // B's credential on B's workspace, naming A's file id.
    expect((await t.request('GET', `/w/${b.workspaceId}/files/${id}`, { token: b.apiKey })).status).toBe(404);
    expect((await download(t, `/w/${b.workspaceId}/files/${id}/content`, b.apiKey)).status).toBe(404);
    expect((await download(t, `/w/${b.workspaceId}/files/${id}?download=1`, b.apiKey)).status).toBe(404);
    expect((await t.request('DELETE', `/w/${b.workspaceId}/files/${id}`, { token: b.apiKey })).status).toBe(
      404,
    );
    expect((await t.request('GET', `/w/${b.workspaceId}/files`, { token: b.apiKey })).body.total).toBe(0);
    // B's credential on A's workspace.
    expect((await t.request('GET', `/w/${a.workspaceId}/files/${id}`, { token: b.apiKey })).status).toBe(404);
    expect((await uploadFile(t.baseUrl, a.workspaceId, b.apiKey, PNG_1X1)).status).toBe(404);
    expect((await t.request('GET', `/w/${a.workspaceId}/files/${id}`, { token: a.apiKey })).status).toBe(200);
  });

  it('deletes with If-Match only at the current version (412 otherwise, nothing appended)', async () => {
    const a = await t.bootstrap();
    const up = await uploadFile(t.baseUrl, a.workspaceId, a.apiKey, PNG_1X1);
    const url = `/w/${a.workspaceId}/files/${up.body.id}`;
    const stale = await t.request('DELETE', url, { token: a.apiKey, headers: { 'if-match': '"7"' } });
    expect(stale.status).toBe(412);
    await t.expectEvents(stale, []);
    const fresh = await t.request('DELETE', url, { token: a.apiKey, headers: { 'if-match': '"1"' } });
    expect(fresh.status).toBe(204);
  });

  it('finishes the commit of an upload whose process died after recording it, on its first read', async () => {
    const a = await t.bootstrap();
    const bytes = randomBytes(50_000);
    const up = await uploadFile(t.baseUrl, a.workspaceId, a.apiKey, bytes);
    const [event] = await t.eventsOf(up);
    const { storageKey, stagingKey } = event.data as { storageKey: string; stagingKey: string };
    // The state a crash between the append and the commit leaves: the bytes still staged.
    await rename(path.join(dir, storageKey), path.join(dir, stagingKey));
    const got = await download(t, `/w/${a.workspaceId}/files/${up.body.id}/content`, a.apiKey);
    expect(got.status).toBe(200);
    expect(sha256(got.bytes)).toBe(sha256(bytes));
    expect(await walk(dir)).toContain(storageKey);
    expect(await walk(dir)).not.toContain(stagingKey);
  });

  it('replays an upload retried with its Idempotency-Key instead of storing it twice', async () => {
    const a = await t.bootstrap();
    const headers = { 'idempotency-key': `upload-${Date.now()}` };
    const first = await uploadFile(t.baseUrl, a.workspaceId, a.apiKey, PNG_1X1, { headers });
    const again = await uploadFile(t.baseUrl, a.workspaceId, a.apiKey, PNG_1X1, { headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    await t.expectEvents(again, []);
    expect((await t.request('GET', `/w/${a.workspaceId}/files`, { token: a.apiKey })).body.total).toBe(1);
  });

  it('does not take ?download values it does not know', async () => {
    const a = await t.bootstrap();
    const up = await uploadFile(t.baseUrl, a.workspaceId, a.apiKey, PNG_1X1);
    const res = await t.request('GET', `/w/${a.workspaceId}/files/${up.body.id}?download=yes`, {
      token: a.apiKey,
    });
    expect(res.status).toBe(400);
    expect(res.body.detail).toMatch(/^download: /);
  });
});
