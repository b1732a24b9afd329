/**
 * Preloaded into the service by the http bench (`-r`, with BENCH_HTTP_COUNT_STATEMENTS=1):
 * counts the round trips every pg Client of the process makes (one `query` call each,
 * a multi-statement simple query counting once), by the first words of their SQL. On
 * SIGUSR2 it writes the counts since the previous signal to the file named by
 * BENCH_STATEMENT_COUNTS_FILE and starts again from zero; the bench signals it around
 * each case's measured slices. Bench-only: nothing in src/ knows about it.
 */
import { writeFileSync } from 'node:fs';
import { Client } from 'pg';

const file = process.env.BENCH_STATEMENT_COUNTS_FILE;
let counts = new Map<string, number>();

/** `SELECT ... FROM events` → "SELECT events"; `INSERT INTO members ...` → "INSERT members". */
function keyOf(text: string): string {
  const sql = text.replace(/\s+/g, ' ').trim();
  const verb = (/^\w+/.exec(sql)?.[0] ?? '?').toUpperCase();
  const table = /\b(?:FROM|INTO|UPDATE|JOIN)\s+("?[\w.]+"?)/i.exec(sql)?.[1]?.replace(/"/g, '');
  return table ? `${verb} ${table}` : sql.slice(0, 40);
}

if (file) {
  const original = Client.prototype.query as (...args: unknown[]) => unknown;
  (Client.prototype as unknown as { query: (...args: unknown[]) => unknown }).query = function (
    this: Client,
    ...args: unknown[]
  ) {
    const first = args[0] as string | { text?: string } | undefined;
    const text = typeof first === 'string' ? first : (first?.text ?? '(submittable)');
    const key = keyOf(text);
    counts.set(key, (counts.get(key) ?? 0) + 1);
    return original.apply(this, args);
  };
  // BENCH_STATEMENT_COUNTS_REDIS=1: Redis commands too, as `redis <command>` (`redis+ <command>`
  // for one written in a pipeline or multi with others, in one round trip).
  if (process.env.BENCH_STATEMENT_COUNTS_REDIS === '1') {
    const { Redis } = require('ioredis') as typeof import('ioredis');
    const send = Redis.prototype.sendCommand as (...args: unknown[]) => unknown;
    (Redis.prototype as unknown as { sendCommand: (...args: unknown[]) => unknown }).sendCommand = function (
      this: unknown,
      ...args: unknown[]
    ) {
      const command = args[0] as { name?: string } | undefined;
      const key = `${args[1] ? 'redis+' : 'redis'} ${command?.name ?? '?'}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      return send.apply(this, args);
    };
  }
  process.on('SIGUSR2', () => {
    writeFileSync(file, JSON.stringify(Object.fromEntries(counts)));
    counts = new Map();
  });
}
