import { Client } from 'pg';
import type { Position } from '../event-store.port';

/**
 * One dedicated LISTEN connection per store, opened on first use and reopened after an
 * error, fanning each notification out to in-process listeners. Pool connections cannot
 * LISTEN (they are handed to other queries between notifications).
 *
 * After a reconnect every listener is called once: notifications sent while the
 * connection was down are lost, so subscribers must look for themselves.
 */
export class PostgresAppendListener {
  private readonly listeners = new Set<(eventTypes?: ReadonlySet<string>, position?: Position) => void>();
  private client: Client | undefined;
  private connecting: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryDelayMs = 100;
  private closed = false;

  constructor(
    private readonly connectionString: string,
    private readonly channel: string,
    /**
     * Whether a notification comes from one of this process's own writers (by the server
     * process id that sent it): those commits were announced in process by `fire()` with
     * their event types already, so the echo is not fanned out again.
     */
    private readonly ownSender: (processId: number) => boolean = () => false,
  ) {}

  add(listener: (eventTypes?: ReadonlySet<string>, position?: Position) => void): () => void {
    this.listeners.add(listener);
    void this.ready();
    return () => {
      this.listeners.delete(listener);
    };
  }

  /**
   * Calls every in-process listener; used right after a local commit, ahead of the round
   * trip through the server, with the committed events' types (absent: any type) and the
   * position of the last of them.
   */
  fire(eventTypes?: ReadonlySet<string>, position?: Position): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(eventTypes, position);
      } catch {
        // A listener's failure is its own; the others still need waking.
      }
    }
  }

  /** Resolves once LISTEN is active, or once the attempt failed (a retry is then scheduled). */
  ready(): Promise<void> {
    if (this.closed || this.client) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.listeners.clear();
    await this.connecting;
    const client = this.client;
    this.client = undefined;
    if (client) await client.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new Client({
      connectionString: this.connectionString,
      application_name: 'event-store-listener',
      keepAlive: true,
    });
    client.on('notification', (msg) => {
      if (msg.channel === this.channel && !this.ownSender(msg.processId)) this.fire();
    });
    const lost = () => {
      if (this.client !== client) return;
      this.client = undefined;
      void client.end().catch(() => undefined);
      this.scheduleRetry();
    };
    client.on('error', lost);
    client.on('end', lost);
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
    } catch {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      this.scheduleRetry();
      return;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.retryDelayMs = 100;
    // Anything appended before LISTEN took effect went unheard.
    this.fire();
  }

  private scheduleRetry(): void {
    if (this.closed || this.retryTimer) return;
    const delay = this.retryDelayMs;
    this.retryDelayMs = Math.min(this.retryDelayMs * 2, 5000);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.listeners.size > 0) void this.ready();
    }, delay);
    this.retryTimer.unref();
  }
}

/**
 * Tells other processes that appends committed, at most about once per interval. A
 * notifying transaction holds a cluster-wide lock through its commit, so one per append
 * would serialise the writers on it.
 *
 * The notification rides on an append where it can: an append sent once the interval since
 * the last notification has passed (and no separate send is under way) carries pg_notify in
 * its own statement (`claim()`), delivered at its commit, which also covers every earlier
 * commit; that costs no round trip of its own. Requests no append carried are sent as a
 * separate statement (NOTIFY_SQL) two intervals after the last notification: under load the
 * next append carries them first, after a quiet spell the first append carries its own.
 */
export class ThrottledNotifier {
  private sending: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private again = false;
  private lastSentAt = -Infinity;
  private closed = false;

  constructor(
    private readonly send: () => Promise<unknown>,
    private readonly intervalMs: number,
  ) {}

  /** Asks for a notification of commits made before this call. */
  request(): void {
    if (this.closed) return;
    if (this.sending || this.timer) {
      this.again = true;
      return;
    }
    const wait = this.lastSentAt + 2 * this.intervalMs - Date.now();
    if (wait > 0) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.start();
      }, wait);
    } else {
      this.start();
    }
  }

  /**
   * Whether the statement about to be sent should carry the notification itself. When it
   * says yes, the caller must send it with pg_notify and then call `settle()` with whether
   * it committed: a pending request is then dropped, or (it failed) requested again.
   */
  claim(): boolean {
    if (this.closed || this.sending) return false;
    if (Date.now() - this.lastSentAt < this.intervalMs) return false;
    this.lastSentAt = Date.now();
    // Requests pending now were made after their commits, so before this statement's commit.
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.again = false;
    }
    return true;
  }

  /** After a claimed statement: `committed` false sends the notification separately instead. */
  settle(committed: boolean): void {
    if (!committed) this.request();
  }

  /** Stops sending; waits for a send under way, so the pool it uses can be ended after. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.sending;
  }

  private start(): void {
    if (this.closed) return;
    this.again = false;
    this.lastSentAt = Date.now();
    this.sending = this.send()
      .then(
        () => undefined,
        // A lost wake-up only delays other processes until their next poll.
        () => undefined,
      )
      .finally(() => {
        this.sending = undefined;
        if (this.again) this.request();
      });
  }
}
