/**
 * Translation between the port's shapes and @eventstore/db-client's. Like every file
 * that imports the client, it stays in this folder.
 */
import { eventTypeFilter, excludeSystemEvents, streamNameFilter } from '@eventstore/db-client';
import type { Filter, Position as ClientPosition, RecordedEvent, ResolvedEvent } from '@eventstore/db-client';
import { EventFilter, EventMetadata, Position, StoredEvent, comparePositions } from '../event-store.port';

/** What servers before 22.6 report as the position of an event read from a stream. */
export const NO_POSITION = 2n ** 64n - 1n;

/**
 * Events EventStoreDB writes for itself ($statsCollected, $metadata, projection and
 * persistent-subscription bookkeeping, $> links): a `$` event type or a `$` stream. Our
 * streams are `<aggregate>-<id>` and our types PascalCase, so neither ever starts with `$`.
 */
export function isSystemEvent(event: { type: string; streamId: string }): boolean {
  return event.type.startsWith('$') || event.streamId.startsWith('$');
}

export function toStoredEvent(recorded: RecordedEvent): StoredEvent {
  return {
    id: recorded.id,
    type: recorded.type,
    data: recorded.data,
    metadata: recorded.metadata as unknown as EventMetadata,
    streamName: recorded.streamId,
    revision: recorded.revision,
    position: toPosition(recorded.position),
  };
}

/** Our events from a read or subscription: system events and unresolved links dropped. */
export function ourEvent(resolved: ResolvedEvent | { event?: RecordedEvent }): StoredEvent | undefined {
  const recorded = resolved.event;
  if (!recorded || isSystemEvent(recorded)) return undefined;
  return toStoredEvent(recorded);
}

function toPosition(position: ClientPosition | undefined): Position {
  return position
    ? { commit: position.commit, prepare: position.prepare }
    : { commit: NO_POSITION, prepare: NO_POSITION };
}

export function isStrictlyAfter(position: Position, after: Position | undefined): boolean {
  return after === undefined || comparePositions(position, after) > 0;
}

export function isStrictlyBefore(position: Position, before: Position | undefined): boolean {
  return before === undefined || comparePositions(position, before) < 0;
}

/**
 * The server-side half of a subscription filter. EventStoreDB filters on one thing,
 * event type or stream name, so with both asked for the types go to the server (they
 * are the narrower cut for a projection) and the prefixes are checked here; the caller
 * re-applies the whole filter anyway. Event types become an anchored regex because the
 * server's regex is a search and its prefix filter a prefix match, while the port
 * promises exact type names. Without a filter the server still drops `$` event types.
 */
export function serverFilter(filter: EventFilter | undefined): Filter {
  if (filter?.eventTypes) {
    if (filter.eventTypes.length === 0) return eventTypeFilter({ regex: NEVER_MATCHES });
    return eventTypeFilter({ regex: `^(?:${filter.eventTypes.map(escapeRegex).join('|')})$` });
  }
  if (filter?.streamPrefixes) {
    if (filter.streamPrefixes.length === 0) return streamNameFilter({ regex: NEVER_MATCHES });
    return streamNameFilter({ prefixes: [...filter.streamPrefixes] });
  }
  return excludeSystemEvents();
}

/** A pattern that matches nothing, in both .NET's and JavaScript's regex dialects. */
const NEVER_MATCHES = '(?!)';

/** Escapes the characters that are special in .NET (the server's) and JavaScript regular expressions. */
export function escapeRegex(text: string): string {
  return text.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
}
