import { END, excludeSystemEvents } from '@eventstore/db-client';
import type { AllStreamSubscription, EventStoreDBClient } from '@eventstore/db-client';

const RESUBSCRIBE_DELAY_MS = 1000;

/**
 * onAppended for EventStoreDB: one live subscription to $all from its end, started when
 * the first listener arrives and stopped when the last one leaves. Calls are coalesced
 * per tick, and listeners are also called (spuriously) whenever the live subscription
 * (re)starts, so that a write in the gap before it was confirmed is not slept through.
 */
export class AppendNotifier {
  private readonly listeners = new Set<() => void>();
  private live: AllStreamSubscription | undefined;
  private retry: NodeJS.Timeout | undefined;
  private scheduled = false;
  private closed = false;

  constructor(private readonly client: EventStoreDBClient) {}

  add(listener: () => void): () => void {
    this.listeners.add(listener);
    this.start();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  }

  close(): void {
    this.closed = true;
    this.listeners.clear();
    this.stop();
  }

  private start(): void {
    if (this.live || this.retry || this.closed) return;
    const live = this.client.subscribeToAll({ fromPosition: END, filter: excludeSystemEvents() });
    this.live = live;
    live.on('confirmation', () => this.notify());
    live.on('data', () => this.notify());
    const lost = () => {
      if (this.live !== live) return;
      this.live = undefined;
      live.unsubscribe().catch(() => undefined);
      if (this.listeners.size === 0 || this.closed) return;
      this.retry = setTimeout(() => {
        this.retry = undefined;
        if (this.listeners.size > 0) this.start();
      }, RESUBSCRIBE_DELAY_MS);
      this.retry.unref();
    };
    live.on('error', lost);
    live.on('end', lost);
  }

  private stop(): void {
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
    const live = this.live;
    this.live = undefined;
    if (live) {
      live.unsubscribe().catch(() => undefined);
      live.destroy();
    }
  }

  private notify(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      for (const listener of [...this.listeners]) {
        try {
          listener();
        } catch {
          // A listener's failure is its own; the others still hear of the write.
        }
      }
    });
  }
}
