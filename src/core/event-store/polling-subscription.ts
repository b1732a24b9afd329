import { EventSubscription, Position, StoredEvent, comparePositions } from './event-store.port';

export interface PollResult {
  events: StoredEvent[];
  /**
   * True when the store knows of committed events it may not hand out yet (PostgreSQL:
   * an older transaction is still open). The subscription then re-polls on a short
   * timer, because no notification will arrive when that older transaction ends
   * without appending anything.
   */
  heldBack: boolean;
  /**
   * How far the store looked, matching or not; the cursor moves there after the events,
   * so a filtered subscription does not rescan events it has already passed over.
   */
  scannedTo?: Position;
  /** Whether the store stopped at the batch size; defaults to "as many events as asked for". */
  more?: boolean;
}

export interface PollingSubscriptionSource {
  /** Events strictly after `after`, in global order, at most `limit`. */
  poll(after: Position | undefined, limit: number): Promise<PollResult>;
  onAppended(listener: () => void): () => void;
  /** Resolves once wake-ups are being delivered, so none is missed between the first poll and the first wait. */
  ready?(): Promise<void>;
}

export interface PollingSubscriptionOptions {
  after?: Position;
  batchSize?: number;
  /** Re-poll interval while the store reports held-back events. */
  behindPollMs?: number;
  /** Safety-net poll while caught up, in case a wake-up was lost (listener reconnecting). */
  idlePollMs?: number;
  /** Called once when the subscription ends, by close() or by its consumer leaving the loop. */
  onEnd?: () => void;
}

/**
 * Catch up in batches, then wait for a wake-up or a timer, and repeat. Shared by the
 * adapters whose stores are pull-based; the loop never spins: it only polls again
 * immediately when the last batch was full or a wake-up arrived during the poll.
 */
export function createPollingSubscription(
  source: PollingSubscriptionSource,
  options: PollingSubscriptionOptions = {},
): EventSubscription {
  const batchSize = options.batchSize ?? 1000;
  const behindPollMs = options.behindPollMs ?? 100;
  const idlePollMs = options.idlePollMs ?? 1000;

  let closed = false;
  let ended = false;
  let woken = false;
  let wake: (() => void) | undefined;
  const unsubscribeWakeUps = source.onAppended(() => {
    woken = true;
    wake?.();
  });
  const unsubscribe = () => {
    if (ended) return;
    ended = true;
    unsubscribeWakeUps();
    options.onEnd?.();
  };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });

  async function* iterate(): AsyncGenerator<StoredEvent> {
    let cursor = options.after;
    try {
      if (source.ready) await source.ready();
      while (!closed) {
        woken = false;
        let result: PollResult;
        try {
          result = await source.poll(cursor, batchSize);
        } catch (error) {
          // A store closed under an in-flight poll is the expected way to stop.
          if (closed) return;
          throw error;
        }
        for (const event of result.events) {
          if (closed) return;
          yield event;
          cursor = event.position;
        }
        if (closed) return;
        if (result.scannedTo && (!cursor || comparePositions(result.scannedTo, cursor) > 0))
          cursor = result.scannedTo;
        if ((result.more ?? result.events.length >= batchSize) || woken) continue;
        await sleep(result.heldBack ? behindPollMs : idlePollMs);
      }
    } finally {
      closed = true;
      unsubscribe();
    }
  }

  const iterator = iterate();
  return {
    [Symbol.asyncIterator]: () => iterator,
    async close() {
      if (closed) return;
      closed = true;
      unsubscribe();
      wake?.();
    },
  };
}
