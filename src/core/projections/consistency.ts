import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AppendResult, Position } from '../event-store/event-store.port';
import { comparePositions } from '../event-store/event-store.port';
import { JsonLogger } from '../logging/json-logger';
import { CheckpointFeed, CheckpointNotice } from './checkpoint-feed';
import { SubscriberRegistry } from './subscriber-registry';
import { APP_CONFIG, AppConfig } from '../config/config';
import { requestContext } from '../cqrs/request-context';

const FALLBACK_POLL_MS = 25;
/**
 * The same while the LISTEN connection is up: every checkpoint move is then announced
 * (its NOTIFY commits with it, and a lost connection turns `live` off), so a quiet
 * interval means the projection is still working, not that a notice went missing;
 * querying every 25 ms per waiter only adds load to what it waits for.
 */
const LIVE_FALLBACK_POLL_MS = 250;

/**
 * Read-your-writes: after a command appends, wait (bounded) until every projection that
 * handles the appended event types has checkpointed past the append. The checkpoints
 * are kept in memory from what CheckpointFeed announces (this process's own commits at
 * once, other processes' through the NOTIFY each committed batch sends, with its
 * position), so a waiter checks a map instead of querying on every wake-up. The table
 * is read only for a checkpoint not yet seen, and after a quiet FALLBACK_POLL_MS (a lost
 * notification; LIVE_FALLBACK_POLL_MS while the LISTEN connection is up). Every position
 * in the map was read from a committed checkpoint, so the wait is exactly as strict as
 * reading the table.
 */
@Injectable()
export class ConsistencyWaiter implements OnModuleDestroy {
  private readonly waiters = new Set<() => void>();
  private readonly known = new Map<string, Position>();
  /** Counts checkpoints dropped from `known` (rebuilds): a waiter re-reads the table after one. */
  private drops = 0;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly db: DataSource,
    private readonly registry: SubscriberRegistry,
    private readonly logger: JsonLogger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly feed: CheckpointFeed,
  ) {
    this.unsubscribe = feed.subscribe((n) => this.onNotice(n));
  }

  /**
   * Waits for what the current request has appended so far and forgets it (the response
   * then waits only for later appends). Called by core/cqrs/read-your-writes.ts before a
   * query or command the request dispatches, and by a handler answering from the state it
   * decided (a member PUT) before it takes anything from a read model's side. False when the
   * wait timed out (the answer then must not assume the projections passed the appends).
   */
  async settle(): Promise<boolean> {
    const ctx = requestContext.current();
    if (!ctx || !ctx.appended.length) return true;
    const appended = ctx.appended.splice(0);
    return this.waitFor(appended, this.config.readYourWritesTimeoutMs);
  }

  async waitFor(appends: readonly AppendResult[], timeoutMs: number): Promise<boolean> {
    if (!appends.length || timeoutMs <= 0) return true;
    const targets = this.targets(appends);
    if (!targets.size) return true;
    await this.feed.listen().catch(() => undefined);
    const deadline = Date.now() + timeoutMs;
    // The table is read for a checkpoint not seen yet, without a live listener, and after
    // a quiet poll interval; otherwise the map is as fresh as the notices.
    let readTable = !this.feed.live || [...targets.keys()].some((name) => !this.known.has(name));
    let readAtDrop = this.drops;
    for (;;) {
      if (this.caughtUpInMemory(targets)) return true;
      if (readTable) {
        readAtDrop = this.drops;
        if (await this.caughtUpInTable(targets)) return true;
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        this.logger.event('warn', {
          msg: 'read-your-writes wait timed out',
          projections: [...targets.keys()],
          timeoutMs,
        });
        return false;
      }
      const quiet = this.feed.live ? LIVE_FALLBACK_POLL_MS : FALLBACK_POLL_MS;
      const signalled = await this.nextSignal(Math.min(left, quiet));
      // A rebuild's notice drops a checkpoint from the map: read it from the table then too.
      // A checkpoint still unknown after this waiter read the table has no row yet (its
      // projection has not committed a batch): its first commit is announced like any
      // other, so it is not read again on every notice. (Under load, while projections lag,
      // each waiter used to query on every other projection's notice: hundreds of reads
      // per signup, which slowed the projections it waited for.)
      readTable =
        !signalled ||
        !this.feed.live ||
        (readAtDrop !== this.drops && [...targets.keys()].some((name) => !this.known.has(name)));
    }
  }

  private onNotice(n: CheckpointNotice): void {
    if (!n.position) {
      // A rebuild swapped tables in: its checkpoint is whatever the table now says.
      this.known.delete(n.name);
      this.drops++;
    } else {
      const current = this.known.get(n.name);
      if (!current || comparePositions(n.position, current) > 0) this.known.set(n.name, n.position);
    }
    for (const w of [...this.waiters]) w();
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

  private caughtUpInMemory(targets: Map<string, Position>): boolean {
    for (const [name, target] of targets) {
      const at = this.known.get(name);
      if (!at || comparePositions(at, target) < 0) return false;
    }
    return true;
  }

  private async caughtUpInTable(targets: Map<string, Position>): Promise<boolean> {
    const rows = (await this.db.query(
      `SELECT name, position_commit, position_prepare FROM subscriber_checkpoints WHERE name = ANY($1)`,
      [[...targets.keys()]],
    )) as { name: string; position_commit: string; position_prepare: string }[];
    for (const r of rows) {
      this.onNotice({
        name: r.name,
        position: { commit: BigInt(r.position_commit), prepare: BigInt(r.position_prepare) },
      });
    }
    return this.caughtUpInMemory(targets);
  }

  /** Resolves true when a checkpoint was announced, false after `ms` without one. */
  private nextSignal(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (signalled: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve(signalled);
      };
      const wake = () => done(true);
      const timer = setTimeout(() => done(false), ms);
      this.waiters.add(wake);
    });
  }

  onModuleDestroy(): void {
    this.unsubscribe();
  }
}
