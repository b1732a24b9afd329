import { AsyncLocalStorage } from 'node:async_hooks';
import { Actor, AppendResult, comparePositions, StoredEvent } from '../event-store/event-store.port';

/**
 * What one HTTP request (or one job) carries through the command path: its id (the
 * correlation id of the events it appends), the acting principal, and every append it
 * made, so the read-your-writes interceptor knows what to wait for.
 */
export interface RequestContext {
  requestId: string;
  actor: Actor;
  causationId?: string;
  appended: AppendResult[];
}

const storage = new AsyncLocalStorage<RequestContext>();

export const requestContext = {
  run<T>(ctx: RequestContext, fn: () => T): T {
    return storage.run(ctx, fn);
  },
  current(): RequestContext | undefined {
    return storage.getStore();
  },
  enterWith(ctx: RequestContext): void {
    storage.enterWith(ctx);
  },
  /**
   * Notes appends for read-your-writes. A write of many streams (an import batch) is kept
   * as the last event of each type only: the waiter needs, per projection, the latest
   * position of a type it handles, so this waits for the same positions without holding
   * every appended event (and its data) until the response.
   */
  noteAppended(results: readonly AppendResult[]): void {
    const ctx = storage.getStore();
    if (!ctx) return;
    if (results.length <= 1) {
      ctx.appended.push(...results);
      return;
    }
    const last = new Map<string, StoredEvent>();
    for (const r of results)
      for (const e of r.events) {
        const held = last.get(e.type);
        if (!held || comparePositions(e.position, held.position) > 0) last.set(e.type, e);
      }
    for (const e of last.values())
      ctx.appended.push({ nextExpectedRevision: e.revision, position: e.position, events: [e] });
  },
};

export const SYSTEM_ACTOR: Actor = { kind: 'system', id: 'system' };
