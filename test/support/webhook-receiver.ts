import { createHmac, timingSafeEqual } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** One request as the receiver got it: the exact bytes, so signatures are checked on them. */
export interface Received {
  n: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  raw: Buffer;
  body: any;
  at: number;
}

export type Reply = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

/**
 * A real webhook receiver (node:http, or node:https with a certificate made at test
 * time): records every request and answers what `reply` says (default 200).
 */
export interface WebhookReceiver {
  url: string;
  port: number;
  received: Received[];
  reply: (r: Received) => Reply;
  waitFor(count: number, timeoutMs?: number, filter?: (r: Received) => boolean): Promise<Received[]>;
  /** Stops answering (connections refused) until start() again on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export interface TestCertificate {
  key: string;
  cert: string;
  /** A PEM file of the certificate, for NODE_EXTRA_CA_CERTS of a child process. */
  certFile: string;
}

/** A self-signed certificate for localhost and 127.0.0.1, made with openssl now. */
export function makeTestCertificate(): TestCertificate {
  const dir = mkdtempSync(path.join(tmpdir(), 'webhook-cert-'));
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8'), certFile };
}

export async function startReceiver(
  options: { tls?: TestCertificate; host?: string } = {},
): Promise<WebhookReceiver> {
  const hanging = new Set<ServerResponse>();
  let server: Server;
  let port = 0;
  const receiver: WebhookReceiver = {
    url: '',
    port: 0,
    received: [],
    reply: () => ({ status: 200, body: 'ok' }),
    async waitFor(count, timeoutMs = 20_000, filter = () => true) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const matching = receiver.received.filter(filter);
        if (matching.length >= count) return matching;
        if (Date.now() > deadline)
          throw new Error(`receiver: ${matching.length} of ${count} requests after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    stop: () =>
      new Promise<void>((resolve) => {
        hanging.forEach((res) => res.destroy());
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
    start: () => listen(),
    close: () => receiver.stop(),
  };
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: unknown;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = undefined;
      }
      const r: Received = {
        n: receiver.received.length + 1,
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers as Record<string, string>,
        raw,
        body,
        at: Date.now(),
      };
      receiver.received.push(r);
      const reply = receiver.reply(r);
      if (reply === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(reply.status, reply.headers ?? {});
      res.end(reply.body ?? '');
    });
  };
  const listen = () =>
    new Promise<void>((resolve) => {
      server = options.tls
        ? createHttpsServer({ key: options.tls.key, cert: options.tls.cert }, handler)
        : createHttpServer(handler);
      server.keepAliveTimeout = 5000;
      server.listen(port, '127.0.0.1', () => {
        port = (server.address() as { port: number }).port;
        receiver.port = port;
        receiver.url = `${options.tls ? 'https' : 'http'}://${options.host ?? '127.0.0.1'}:${port}/hook`;
        resolve();
      });
    });
  await listen();
  return receiver;
}

/**
 * The receiver's side of `X-Webhook-Signature: t=<unix>,v1=<hex>[,v1=...]`, written
 * here from the documented rule and nothing of the service: HMAC-SHA256 of
 * "<t>.<exact body bytes>" keyed with the secret's UTF-8 bytes; older than
 * `toleranceSeconds` is refused. Returns why it fails, or null when it verifies.
 */
export function verifyStripeStyle(
  header: string | undefined,
  raw: Buffer,
  secret: string,
  nowSeconds = Math.floor(Date.now() / 1000),
  toleranceSeconds = 300,
): string | null {
  if (!header) return 'no signature header';
  const parts = header.split(',').map((p) => p.split('='));
  const t = parts.find(([k]) => k === 't')?.[1];
  const signatures = parts.filter(([k]) => k === 'v1').map(([, v]) => v);
  if (!t || !/^\d+$/.test(t) || !signatures.length) return 'malformed header';
  if (Math.abs(nowSeconds - Number(t)) > toleranceSeconds) return 'timestamp outside tolerance';
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(Buffer.concat([Buffer.from(`${t}.`), raw]))
    .digest();
  const ok = signatures.some((s) => {
    const given = Buffer.from(s, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  return ok ? null : 'no matching signature';
}
