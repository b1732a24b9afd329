import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import type { AppendResult, Position } from '../event-store/event-store.port';
import { comparePositions } from '../event-store/event-store.port';
import { JsonLogger } from '../logging/json-logger';
import { CHECKPOINT_CHANNEL } from './checkpoints';
import { SubscriberRegistry } from './subscriber-registry';
import { APP_CONFIG, AppConfig } from '../config/config';
import { requestContext } from '../cqrs/request-context';

const FALLBACK_POLL_MS = 25;

/**
 * Read-your-writes: after a command appends, wait (bounded) until every projection that
 * handles the appended event types has checkpointed past the append. Woken by the
 * NOTIFY each committed batch sends, with a short poll as a fallback.
 */
@Injectable()
export class ConsistencyWaiter implements OnModuleDestroy {
  private listener: Client | undefined;
  private listening: Promise<void> | undefined;
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly db: DataSource,
    private readonly registry: SubscriberRegistry,
    private readonly logger: JsonLogger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Waits for what the current request has appended so far, for a handler that reads
   * its own write back before answering (e.g. PUT returning the updated resource).
   */
  async settle(): Promise<void> {
    const ctx = requestContext.current();
    if (!ctx || !ctx.appended.length) return;
    const appended = ctx.appended.splice(0);
    await this.waitFor(appended, this.config.readYourWritesTimeoutMs);
  }

  async waitFor(appends: readonly AppendResult[], timeoutMs: number): Promise<boolean> {
    if (!appends.length || timeoutMs <= 0) return true;
    const targets = this.targets(appends);
    if (!targets.size) return true;
    await this.listen().catch(() => undefined);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (await this.caughtUp(targets)) return true;
      const left = deadline - Date.now();
      if (left <= 0) {
        this.logger.event('warn', {
          msg: 'read-your-writes wait timed out',
          projections: [...targets.keys()],
          timeoutMs,
        });
        return false;
      }
      await this.nextSignal(Math.min(left, FALLBACK_POLL_MS));
    }
  }

  /** Per projection, the position of the last appended event it handles. */
  private targets(appends: readonly AppendResult[]): Map<string, Position> {
    const out = new Map<string, Position>();
    for (const event of appends.flatMap((a) => a.events)) {
      for (const name of this.registry.projectionsHandling(new Set([event.type]))) {
        const current = out.get(name);
        if (!current || comparePositions(event.position, current) > 0) out.set(name, event.position);
      }
    }
    return out;
  }

  private async caughtUp(targets: Map<string, Position>): Promise<boolean> {
    const rows = (await this.db.query(
      `SELECT name, position_commit, position_prepare FROM subscriber_checkpoints WHERE name = ANY($1)`,
      [[...targets.keys()]],
    )) as { name: string; position_commit: string; position_prepare: string }[];
    const stored = new Map(
      rows.map((r) => [r.name, { commit: BigInt(r.position_commit), prepare: BigInt(r.position_prepare) }]),
    );
    for (const [name, target] of targets) {
      const at = stored.get(name);
      if (!at || comparePositions(at, target) < 0) return false;
    }
    return true;
  }

  private nextSignal(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }

  private listen(): Promise<void> {
    if (this.listener) return Promise.resolve();
    this.listening ??= (async () => {
      const url = (this.db.options as { url?: string }).url!;
      const client = new Client({ connectionString: url, application_name: 'workspace-service:consistency' });
      client.on('notification', () => [...this.waiters].forEach((w) => w()));
      client.on('error', () => {
        if (this.listener === client) this.listener = undefined;
      });
      await client.connect();
      await client.query(`LISTEN ${CHECKPOINT_CHANNEL}`);
      this.listener = client;
    })().finally(() => (this.listening = undefined));
    return this.listening;
  }

  async onModuleDestroy(): Promise<void> {
    const c = this.listener;
    this.listener = undefined;
    await c?.end().catch(() => undefined);
  }
}
