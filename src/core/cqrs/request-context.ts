import { AsyncLocalStorage } from 'node:async_hooks';
import type { Actor, AppendResult } from '../event-store/event-store.port';

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
};

export const SYSTEM_ACTOR: Actor = { kind: 'system', id: 'system' };
