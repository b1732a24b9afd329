import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import type { Pool } from 'pg';

/** Prints rows under a header, the first column left-aligned and the rest right-aligned. */
export function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
}

/** Writes a bench's results to bench-results/<bench>-<timestamp>.json (git-ignored). */
export function writeResults(bench: string, body: Record<string, unknown>): void {
  const dir = join(__dirname, '..', 'bench-results');
  mkdirSync(dir, { recursive: true });
  const at = new Date().toISOString();
  const file = join(dir, `${bench}-${at.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify({ bench, at, ...body }, null, 2));
  console.log(`wrote ${file}`);
}

/** What the figures depend on: Node, the CPUs, and the PostgreSQL settings that move write latency. */
export async function describeEnvironment(pool: Pool): Promise<Record<string, unknown>> {
  const settings = await pool.query<{ name: string; setting: string }>(
    `SELECT name, setting FROM pg_settings WHERE name IN ('server_version', 'fsync', 'synchronous_commit', 'shared_buffers')`,
  );
  return {
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
    postgres: Object.fromEntries(settings.rows.map((r) => [r.name, r.setting])),
  };
}
