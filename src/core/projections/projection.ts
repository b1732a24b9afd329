import { SetMetadata } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { StoredEvent } from '../event-store/event-store.port';

export interface ProjectionDefinition {
  /** Stable name; the checkpoint row and the leadership lock are keyed by it. */
  name: string;
  /** Event types the projection handles: it is fed only these ('all': every event, e.g. the audit log). */
  eventTypes: readonly string[] | 'all';
  /** Read-model tables it owns (public schema): `projections rebuild` rebuilds exactly these. */
  tables: readonly string[];
}

/**
 * A read-model projection: `handle` writes through the given EntityManager, inside
 * the transaction that also moves the checkpoint. Table names must stay unqualified
 * (no schema): a rebuild runs the same code against a fresh schema via search_path.
 */
export interface ProjectionHandler {
  handle(event: StoredEvent, em: EntityManager): Promise<void>;
  /**
   * Optional: applies a batch (in global order) at once, e.g. as multi-row inserts. It
   * must leave the same tables as `handle` called on each event in turn.
   */
  handleBatch?(events: readonly StoredEvent[], em: EntityManager): Promise<void>;
}

/** Applies events through `handleBatch` where the projection has it, else one by one. */
export async function applyEvents(
  handler: ProjectionHandler,
  events: readonly StoredEvent[],
  em: EntityManager,
): Promise<void> {
  if (handler.handleBatch) return handler.handleBatch(events, em);
  for (const event of events) await handler.handle(event, em);
}

export const PROJECTION_METADATA = 'spine:projection';

export const Projection = (definition: ProjectionDefinition): ClassDecorator =>
  SetMetadata(PROJECTION_METADATA, definition);

export interface RegisteredProjection {
  definition: ProjectionDefinition;
  handler: ProjectionHandler;
}
