import { ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { TEST_REDIS_URL } from './redis';

export const ROOT = path.resolve(__dirname, '../..');
/** A worker with the spine's test-only subscribers and processor (see spine-test.module.ts). */
export const TEST_WORKER = 'test/support/processes/worker.ts';

export interface ServiceProcess {
  name: string;
  child: ChildProcess;
  pid: number;
  /** Everything the process wrote so far (stdout and stderr), for failure messages. */
  output(): string;
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves with the exit signal (or code) once the process has exited. */
  exited: Promise<NodeJS.Signals | number | null>;
  kill(signal?: NodeJS.Signals): Promise<NodeJS.Signals | number | null>;
}

/**
 * Every process a test file spawned: `killAll()` in afterAll stops them even when a
 * test failed half-way, and the exit hook covers a jest worker that dies itself.
 */
const running = new Set<ServiceProcess>();
process.once('exit', () => running.forEach((p) => p.child.kill('SIGKILL')));

export function spawnService(
  name: string,
  script: string,
  env: Record<string, string>,
  args: string[] = [],
): ServiceProcess {
  const child = spawn(process.execPath, ['-r', '@swc-node/register', script, ...args], {
    cwd: ROOT,
    // Small pools, as in startTestApp: several service processes share one PostgreSQL.
    env: { DATABASE_POOL_SIZE: '5', ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const listeners = new Set<() => void>();
  const collect = (chunk: Buffer) => {
    out += chunk.toString();
    if (out.length > 2_000_000) out = out.slice(-1_000_000);
    listeners.forEach((l) => l());
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? code)),
  );
  const proc: ServiceProcess = {
    name,
    child,
    pid: child.pid!,
    output: () => out,
    exited,
    waitForLine(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const line = out.split('\n').find((l) => pattern.test(l));
          if (line !== undefined) finish(() => resolve(line));
          else if (child.exitCode !== null || child.signalCode !== null) {
            finish(() =>
              reject(new Error(`${name} exited before printing ${pattern}; output:\n${out.slice(-3000)}`)),
            );
          }
        };
        const timer = setTimeout(
          () =>
            finish(() =>
              reject(new Error(`${name}: timed out waiting for ${pattern}; output:\n${out.slice(-3000)}`)),
            ),
          timeoutMs,
        );
        const finish = (fn: () => void) => {
          clearTimeout(timer);
          listeners.delete(check);
          child.off('exit', check);
          fn();
        };
        listeners.add(check);
        child.on('exit', check);
        check();
      });
    },
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
  running.add(proc);
  void exited.then(() => running.delete(proc));
  return proc;
}

/** SIGKILL every process still running (afterAll). */
export async function killAll(): Promise<void> {
  await Promise.all([...running].map((p) => p.kill('SIGKILL')));
}

/** Runs a script to completion and returns its stdout (throws with its output on failure). */
export async function runToCompletion(
  script: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<string> {
  const p = spawnService(`${script} ${args.join(' ')}`, script, env, args);
  let stdout = '';
  p.child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  const timer = setTimeout(() => void p.kill('SIGKILL'), timeoutMs);
  const result = await p.exited;
  clearTimeout(timer);
  if (result !== 0)
    throw new Error(`${script} ${args.join(' ')} ended with ${String(result)}:\n${p.output().slice(-3000)}`);
  return stdout;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/**
 * Spawns a service on a port from freePort() and waits for `pattern`. The port is free
 * only when freePort() returns, so another process can take it first: when the service
 * exits with EADDRINUSE, it is started again on a new port (at most `attempts` times).
 */
export async function spawnOnFreePort(
  name: string,
  script: string,
  envFor: (port: number) => Record<string, string>,
  pattern: RegExp,
  { attempts = 3, timeoutMs = 90_000 }: { attempts?: number; timeoutMs?: number } = {},
): Promise<{ proc: ServiceProcess; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const proc = spawnService(name, script, envFor(port));
    // 'close' comes after the output has been read to its end ('exit' may come before).
    const closed = new Promise((resolve) => proc.child.once('close', resolve));
    try {
      await proc.waitForLine(pattern, timeoutMs);
      return { proc, port };
    } catch (err) {
      await proc.kill('SIGKILL');
      await closed;
      if (attempt < attempts && proc.output().includes('EADDRINUSE')) continue;
      throw err;
    }
  }
}

/**
 * Two service processes over the same `env` on free ports, both listening: the first with
 * ROLE=all (projections, reactors, workers), the second ROLE=api (HTTP only): what two
 * processes of one deployment see of each other's writes.
 */
export async function startAllAndApi(
  env: Record<string, string>,
  names: [all: string, api: string],
): Promise<{ all: { proc: ServiceProcess; url: string }; api: { proc: ServiceProcess; url: string } }> {
  const start = (name: string, role: 'all' | 'api') =>
    spawnOnFreePort(
      name,
      'src/main.ts',
      (port) => ({ ...env, ROLE: role, PORT: String(port), HOST: '127.0.0.1' }),
      /"msg":"listening"/,
    ).then(({ proc, port }) => ({ proc, url: `http://127.0.0.1:${port}/api/v2` }));
  const [all, api] = await Promise.all([start(names[0], 'all'), start(names[1], 'api')]);
  return { all, api };
}

/** Polls until `fn` returns a truthy value (returned), or fails with the last value seen. */
export async function eventually<T>(
  fn: () => Promise<T>,
  what: string,
  timeoutMs = 20_000,
  everyMs = 100,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await fn();
    if (last) return last as NonNullable<T>;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** What the CLI's `bootstrap --json` prints: a workspace, its owner's member id and an API key. */
export interface CliWorkspace {
  apiKey: string;
  workspaceId: string;
  memberId: number;
}

/** A workspace made by the CLI's `bootstrap` against the database of `env` (as an operator would). */
export async function bootstrapWithCli(
  env: Record<string, string>,
  workspace: string,
  email: string,
): Promise<CliWorkspace> {
  const out = await runToCompletion(
    'src/cli.ts',
    ['bootstrap', '--workspace', workspace, '--email', email, '--json'],
    { ...env, LOG_LEVEL: 'warn' },
    90_000,
  );
  return JSON.parse(out.trim().split('\n').pop()!) as CliWorkspace;
}

/**
 * afterAll of a multi-process spec: prints the first error lines each process logged (a
 * failure above is easier to read with them), then kills every process still running.
 */
export async function reportErrorsAndKillAll(processes: readonly ServiceProcess[]): Promise<void> {
  for (const p of processes) {
    const errors = p
      .output()
      .split('\n')
      .filter((l) => l.includes('"level":"error"'));
    if (errors.length) console.error(`${p.name}:\n${errors.slice(0, 5).join('\n')}`);
  }
  await killAll();
}

/**
 * The environment of a spawned service on a test's database and Redis prefix: test mode,
 * info logs (what reportErrorsAndKillAll reads), rate limits far above any spec's load.
 */
export function serviceEnv(
  databaseUrl: string,
  prefix: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: prefix,
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    RATE_LIMIT_PER_MINUTE: '100000',
    RATE_LIMIT_CONCURRENCY: '1000',
    ...extra,
  };
}

/**
 * A worker process (src/worker.ts, ROLE=worker) on a test app's database and Redis prefix,
 * started and ready. A killed one's jobs go back to the queue within about three seconds
 * (lock 2 s, stalled check every 1 s).
 */
export async function startWorkerProcess(
  app: { database: { url: string }; config: { redisPrefix: string } },
  name: string,
  env: Record<string, string>,
): Promise<ServiceProcess> {
  const w = spawnService(name, 'src/worker.ts', {
    ...env,
    DATABASE_URL: app.database.url,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: app.config.redisPrefix,
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    QUEUE_LOCK_DURATION_MS: '2000',
    QUEUE_STALLED_INTERVAL_MS: '1000',
  });
  await w.waitForLine(/worker started/, 60_000);
  return w;
}
