import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';

/** A tiny valid PNG (1×1, transparent): what file-type recognises as image/png. */
export const PNG_1X1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

export const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

export interface UploadResponse {
  status: number;
  headers: Headers;
  body: any;
  requestId: string;
}

/** POST a file as multipart/form-data (fetch's FormData: Content-Length known). */
export async function uploadFile(
  baseUrl: string,
  wid: string,
  token: string | undefined,
  bytes: Buffer,
  { name = 'upload.bin', type = 'application/octet-stream', field = 'file', headers = {} } = {},
): Promise<UploadResponse> {
  const form = new FormData();
  form.append(field, new Blob([bytes], { type }), name);
  const res = await fetch(`${baseUrl}/w/${wid}/files`, {
    method: 'POST',
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body: form,
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: (res.headers.get('content-type') ?? '').includes('json') && text ? JSON.parse(text) : text,
    requestId: res.headers.get('x-request-id') ?? '',
  };
}

/**
 * POST `size` random bytes as the part `file` with chunked transfer encoding (no
 * Content-Length, so the server learns the size only by reading), generated 64 KiB at a
 * time: the client never holds the upload either. Resolves with the answer once the
 * server has answered and the body is sent (or the server stopped reading it).
 */
export function uploadChunked(
  baseUrl: string,
  wid: string,
  token: string,
  size: number,
): Promise<{ status: number; body: any; requestId: string }> {
  const url = new URL(`${baseUrl}/w/${wid}/files`);
  const boundary = `----upload${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n` +
      `Content-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const chunk = randomBytes(64 * 1024);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          'transfer-encoding': 'chunked',
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: text && (res.headers['content-type'] ?? '').includes('json') ? JSON.parse(text) : text,
            requestId: String(res.headers['x-request-id'] ?? ''),
          }),
        );
      },
    );
    req.on('error', reject);
    let sent = 0;
    const pump = (): void => {
      while (sent < size) {
        const n = Math.min(chunk.length, size - sent);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n)))
          return void req.once('drain', pump);
      }
      req.end(tail);
    };
    req.write(head);
    pump();
  });
}
