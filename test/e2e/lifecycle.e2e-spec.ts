import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { createTestDatabase, TestDatabase } from '../support/database';
import { clearRedisPrefix, TEST_REDIS_URL, testRedisPrefix } from '../support/redis';

const ROOT = path.resolve(__dirname, '../..');
const NODE_ARGS = ['-r', '@swc-node/register'];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs = 90_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(
      () => reject(new Error(`timed out waiting for ${pattern}; output: ${buffer.slice(-2000)}`)),
      timeoutMs,
    );
    timer.unref();
    // 'close' comes once the output has been read to its end: the line will not come now.
    child.on('close', () => {
      clearTimeout(timer);
      reject(new Error(`exited before printing ${pattern}; output: ${buffer.slice(-2000)}`));
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const line = buffer.split('\n').find((l) => pattern.test(l));
      if (line) {
        clearTimeout(timer);
        resolve(line);
      }
    });
  });
}

describe('process lifecycle (e2e)', () => {
  it('refuses to start on a malformed PORT with one line naming it', () => {
    const res = spawnSync(process.execPath, [...NODE_ARGS, 'src/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, PORT: 'abc' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(res.status).toBe(1);
    const lines = res.stderr
      .trim()
      .split('\n')
      .filter((l) => !/ExperimentalWarning|DeprecationWarning|--trace/.test(l));
    expect(lines).toEqual(['Invalid configuration: PORT: expected an integer from 0 to 65535, got "abc"']);
  });

  it('migrates an empty database with `cli migrate`, and is idempotent', async () => {
    const db = await createTestDatabase({ migrate: false });
    try {
      const env = { ...process.env, DATABASE_URL: db.url };
      const run = () =>
        spawnSync(process.execPath, [...NODE_ARGS, 'src/cli.ts', 'migrate'], {
          cwd: ROOT,
          env,
          encoding: 'utf8',
          timeout: 60_000,
        });
      const first = run();
      expect(first.status).toBe(0);
      expect(first.stdout).toMatch(/^Applied \d+ migration\(s\): Initial/);
      const second = run();
      expect(second.status).toBe(0);
      expect(second.stdout.trim()).toBe('Database is up to date');
    } finally {
      await db.drop();
    }
  }, 180_000);

  describe('graceful shutdown', () => {
    let db: TestDatabase;
    let child: ChildProcess | undefined;
    const prefix = testRedisPrefix();
    beforeAll(async () => {
      db = await createTestDatabase({ migrate: false });
    });
    afterAll(async () => {
      if (child && child.exitCode === null) child.kill('SIGKILL');
      await clearRedisPrefix(prefix);
      await db.drop();
    });

    it('on SIGTERM finishes the request in flight, then exits 0', async () => {
      const env = {
        ...process.env,
        DATABASE_URL: db.url,
        REDIS_URL: TEST_REDIS_URL,
        REDIS_PREFIX: prefix,
        LOG_LEVEL: 'info',
      };
      // An empty database: the CLI migrates it and bootstraps a workspace with a key.
      const boot = spawnSync(
        process.execPath,
        [
          ...NODE_ARGS,
          'src/cli.ts',
          'bootstrap',
          '--workspace',
          'Shutdown',
          '--email',
          'sd@example.com',
          '--json',
        ],
        {
          cwd: ROOT,
          env,
          encoding: 'utf8',
          timeout: 90_000,
        },
      );
      expect(boot.status).toBe(0);
      const { workspaceId, apiKey } = JSON.parse(boot.stdout.trim().split('\n').pop()!);

      // ROLE=api runs no projections, so a write waits out its read-your-writes bound
      // (1.5 s): a request reliably in flight when the signal arrives. freePort() only
      // finds a port that was free: another process may take it first, so on EADDRINUSE
      // the service starts again on a new port.
      let port = 0;
      let output = '';
      let exited!: Promise<number | null>;
      for (let attempt = 1; ; attempt++) {
        port = await freePort();
        const proc = spawn(process.execPath, [...NODE_ARGS, 'src/main.ts'], {
          cwd: ROOT,
          env: { ...env, PORT: String(port), ROLE: 'api', READ_YOUR_WRITES_TIMEOUT_MS: '1500' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        child = proc;
        output = '';
        proc.stdout!.on('data', (c: Buffer) => (output += c.toString()));
        proc.stderr!.on('data', (c: Buffer) => (output += c.toString()));
        exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
        const listening = await waitForLine(proc, /"msg":"listening"/).catch((err: Error) => err);
        if (typeof listening === 'string') break;
        if (attempt < 3 && output.includes('EADDRINUSE')) continue;
        throw listening;
      }
      const stopped = waitForLine(child, /"msg":"stopped"/);

      let answered = false;
      const inFlight = fetch(`http://127.0.0.1:${port}/api/v2/w/${workspaceId}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Renamed during shutdown' }),
      }).finally(() => {
        answered = true;
      });
      // The write lands before the read-your-writes wait: once its event is in the store,
      // the request is in flight. An answer before that (a failed PUT) ends the wait too;
      // the checks below report it.
      const pool = db.pool({ max: 1 });
      try {
        const deadline = Date.now() + 30_000;
        for (;;) {
          const { rowCount } = await pool.query(
            `SELECT 1 FROM events WHERE stream_name = $1 AND type = 'WorkspaceUpdated' AND data->>'name' = $2`,
            [`workspace-${workspaceId}`, 'Renamed during shutdown'],
          );
          if (rowCount || answered) break;
          if (Date.now() > deadline)
            throw new Error(`the PUT wrote nothing within 30 s; output tail:\n${output.slice(-3000)}`);
          await new Promise((r) => setTimeout(r, 10));
        }
      } finally {
        await pool.end();
      }
      child.kill('SIGTERM');
      const res = await inFlight;
      expect(res.status).toBe(200);
      const code = await exited;
      if (code !== 0) throw new Error(`exit ${code}; output tail:\n${output.slice(-3000)}`);
      await stopped;
      // One structured line per request, and neither the body nor the credential in any log line.
      const requestLines = output
        .split('\n')
        .filter((l) => l.includes('"msg":"request"'))
        .map((l) => JSON.parse(l));
      expect(requestLines).toEqual([
        expect.objectContaining({
          method: 'PUT',
          route: '/api/v2/w/:wid',
          status: 200,
          requestId: expect.any(String),
          durationMs: expect.any(Number),
        }),
      ]);
      expect(output).not.toContain('Renamed during shutdown');
      expect(output).not.toContain(apiKey);
    }, 180_000);
  });
});
