import { Client } from 'pg';
import { JsonLogger } from '../logging/json-logger';

/** First half of the two-key advisory lock; the second is hashtext(subscriber name). */
const LOCK_NAMESPACE = 74_202;

/**
 * Session advisory locks on one dedicated connection: holding a subscriber's lock makes
 * this process its only runner across all processes. When the process dies its
 * connection closes, the lock is freed and another process takes over.
 */
export class LeaderLocks {
  private client: Client | undefined;
  private connecting: Promise<Client> | undefined;
  private readonly held = new Set<string>();
  /** pg clients must not run two queries at once: lock calls are chained. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly databaseUrl: string,
    private readonly logger: JsonLogger,
  ) {}

  holds(name: string): boolean {
    return this.held.has(name);
  }

  tryAcquire(name: string): Promise<boolean> {
    return this.serial(async () => {
      if (this.held.has(name)) return true;
      const client = await this.connect();
      const rows = await client.query<{ ok: boolean }>(
        'SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok',
        [LOCK_NAMESPACE, name],
      );
      if (rows.rows[0]?.ok) this.held.add(name);
      return this.held.has(name);
    });
  }

  release(name: string): Promise<void> {
    return this.serial(async () => {
      if (!this.held.delete(name) || !this.client) return;
      await this.client
        .query('SELECT pg_advisory_unlock($1, hashtext($2))', [LOCK_NAMESPACE, name])
        .catch(() => undefined);
    });
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  async close(): Promise<void> {
    this.held.clear();
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
  }

  private async connect(): Promise<Client> {
    if (this.client) return this.client;
    if (this.connecting) return this.connecting;
    this.connecting = (async () => {
      const client = new Client({
        connectionString: this.databaseUrl,
        application_name: 'workspace-service:leader-locks',
      });
      const lost = (err?: Error) => {
        if (this.client !== client) return;
        // Every lock died with the session: every runner must stop leading.
        this.logger.event('warn', {
          msg: 'leader lock connection lost',
          err: err?.message,
          held: [...this.held],
        });
        this.held.clear();
        this.client = undefined;
      };
      client.on('error', lost);
      client.on('end', () => lost());
      await client.connect();
      this.client = client;
      return client;
    })();
    try {
      return await this.connecting;
    } finally {
      this.connecting = undefined;
    }
  }
}
