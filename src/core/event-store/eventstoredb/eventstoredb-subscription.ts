import type { AllStreamSubscription } from '@eventstore/db-client';
import { EventSubscription, StoredEvent, SubscribeOptions, matchesFilter } from '../event-store.port';
import { isStrictlyAfter, ourEvent } from './eventstoredb-mapping';

const CLOSED = Symbol('closed');

/**
 * A catch-up subscription to $all as the port's EventSubscription. The client's
 * subscription is a Readable whose iteration does not end when it is unsubscribed, so
 * every wait races a close signal: close() ends a waiting `for await` at once.
 * Events are checked again here (system events, the exclusive checkpoint, the whole
 * filter), since the server applies only one filter and treats `after` as it sees fit.
 */
export class EventStoreDbSubscription implements EventSubscription {
  private closed = false;
  private signalClosed!: () => void;
  private readonly closedSignal = new Promise<typeof CLOSED>((resolve) => {
    this.signalClosed = () => resolve(CLOSED);
  });
  private readonly iterator: AsyncGenerator<StoredEvent>;

  constructor(
    private readonly source: AllStreamSubscription,
    private readonly options: SubscribeOptions,
    private readonly onClosed: (subscription: EventStoreDbSubscription) => void,
  ) {
    // An error while nobody iterates must not become an unhandled 'error' event; an
    // iteration still receives it through the stream's own iterator.
    source.on('error', () => undefined);
    this.iterator = this.iterate();
  }

  [Symbol.asyncIterator](): AsyncIterator<StoredEvent> {
    return this.iterator;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.signalClosed();
    this.onClosed(this);
    await this.source.unsubscribe().catch(() => undefined);
    this.source.destroy();
  }

  private async *iterate(): AsyncGenerator<StoredEvent> {
    const events = this.source[Symbol.asyncIterator]();
    try {
      while (!this.closed) {
        const next = events.next();
        // Left pending when close() wins the race; it settles once the source is destroyed.
        next.catch(() => undefined);
        const result = await Promise.race([next, this.closedSignal]);
        if (result === CLOSED) return;
        // A catch-up subscription never ends by itself: the consumer must hear of it and resubscribe.
        if (result.done) throw new Error('EventStoreDB ended the subscription to $all');
        const event = ourEvent(result.value);
        if (!event || !isStrictlyAfter(event.position, this.options.after)) continue;
        if (!matchesFilter(event, this.options.filter)) continue;
        yield event;
      }
    } catch (error) {
      if (this.closed) return;
      throw error;
    } finally {
      await this.close();
    }
  }
}
