import type { ArgumentsHost } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { TEST_SERVER_URL } from '../../../test/support/database';
import { JsonLogger } from '../logging/json-logger';
import { HttpExceptionFilter, INTERNAL_ERROR_DETAIL } from './http-exception.filter';

/** A record field value, as PHI as they come: it must reach no log line. */
const PHI = 'Grace-Hopper-MRN-4410';

describe('HttpExceptionFilter: a request that fails with a 5xx', () => {
  let db: DataSource;
  beforeAll(async () => {
    db = await new DataSource({ type: 'postgres', url: TEST_SERVER_URL }).initialize();
  });
  afterAll(() => db.destroy());

  it("logs the error's class, SQLSTATE and stack frames, never its message (PostgreSQL quotes the value)", async () => {
    const error = await db.query('SELECT $1::int AS n', [PHI]).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).toContain(PHI);

    let sent: unknown;
    let status = 0;
    const reply = {
      sent: false,
      status(s: number) {
        status = s;
        return reply;
      },
      headers: () => reply,
      send(body: unknown) {
        sent = body;
      },
    };
    const host = {
      switchToHttp: () => ({
        getResponse: () => reply,
        getRequest: () => ({ id: 'req-phi', method: 'POST', routeOptions: { url: '/w/:wid/records' } }),
      }),
    } as unknown as ArgumentsHost;

    const lines: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    try {
      new HttpExceptionFilter(new JsonLogger('info')).catch(error, host);
    } finally {
      process.stdout.write = write;
    }

    expect(status).toBe(500);
    expect(sent).toEqual({ detail: INTERNAL_ERROR_DETAIL });
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({
      level: 'error',
      msg: 'request failed',
      requestId: 'req-phi',
      route: '/w/:wid/records',
      err: { name: 'QueryFailedError', code: '22P02', stack: expect.stringMatching(/^\s+at /) },
    });
    expect(lines.join('')).not.toContain(PHI);
    expect(lines.join('')).not.toContain('invalid input syntax');
  });
});
