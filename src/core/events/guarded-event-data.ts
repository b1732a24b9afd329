import { grants } from '../auth/scopes';

/**
 * Keys of some event types' data that hold what a scope guards, declared by the feature
 * that emits the events (its @Feature descriptor, `guardedEventData`). The event history
 * (`GET /w/{wid}/events`, workspace:admin) shows them only to a caller holding that scope:
 * record field values are PHI, read with records:admin, and workspace:admin alone must
 * not read them through the events that carry them.
 */
export interface GuardedEventData {
  readonly eventTypes: readonly string[];
  readonly fields: readonly string[];
  /** The scope that reads them, e.g. `records:admin`. */
  readonly scope: string;
}

/** Every feature's guards, by event type (injectable; built with the public events' catalogue). */
export class GuardedEventDataCatalogue {
  private readonly byType = new Map<string, { fields: readonly string[]; scope: string }[]>();

  constructor(guards: readonly GuardedEventData[]) {
    for (const g of guards)
      for (const type of g.eventTypes)
        this.byType.set(type, [...(this.byType.get(type) ?? []), { fields: g.fields, scope: g.scope }]);
  }

  /** The data of an event as a caller with `scopes` may see it: the guarded keys it lacks the scope for left out. */
  visibleData(
    type: string,
    data: Record<string, unknown>,
    scopes: readonly string[],
  ): Record<string, unknown> {
    const guards = this.byType.get(type);
    if (!guards || data === null || typeof data !== 'object') return data;
    const hidden = guards.filter((g) => !grants(scopes, g.scope)).flatMap((g) => g.fields);
    if (!hidden.length) return data;
    return Object.fromEntries(Object.entries(data).filter(([k]) => !hidden.includes(k)));
  }
}
