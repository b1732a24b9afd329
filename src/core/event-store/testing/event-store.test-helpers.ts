import { randomUUID } from 'node:crypto';
import { EventMetadata, EventSubscription, NewEvent, StoredEvent } from '../event-store.port';

/** Helpers of the conformance spec, shared with the adapters' own specs. */

export function meta(overrides: Partial<EventMetadata> = {}): EventMetadata {
  return {
    workspaceId: '6f0c1f9e-3c1a-4b8e-9d57-2f1f2b0b7a11',
    actor: { kind: 'system', id: 'conformance' },
    correlationId: 'conformance',
    occurredAt: '2025-01-01T00:00:00.000Z',
    schemaVersion: 1,
    ...overrides,
  };
}

export function event(type: string, data: unknown = {}): NewEvent {
  return { type, data, metadata: meta() };
}

/** A stream-name prefix of its own per case, so cases can share one store. */
export function uniq(): string {
  return `c${randomUUID().replace(/-/g, '').slice(0, 12)}`;
}

export interface Collected {
  readonly events: StoredEvent[];
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** Drains a subscription in the background, the way a projection would. */
export function collect(subscription: EventSubscription): Collected {
  const events: StoredEvent[] = [];
  let failure: unknown;
  const drained = (async () => {
    try {
      for await (const e of subscription) events.push(e);
    } catch (error) {
      failure = error;
    }
  })();
  return {
    events,
    async waitFor(count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (events.length < count) {
        if (failure) throw failure;
        if (Date.now() > deadline)
          throw new Error(`Subscription delivered ${events.length} of ${count} events in ${timeoutMs} ms`);
        await delay(5);
      }
    },
    async stop() {
      await subscription.close();
      await drained;
      if (failure) throw failure;
    },
  };
}

export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await delay(20);
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}
