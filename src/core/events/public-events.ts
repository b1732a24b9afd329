import type { DomainEvent } from '../cqrs/decider';

/**
 * The event types that leave the service, as the spec names them ("Events"): what event
 * rules let a workspace subscribe to and webhooks deliver. Everything else the event
 * store holds is internal and may change shape; only these have a promised payload.
 * Dotted names of the quick reference that name one of these (`record.created`) are
 * aliases event rules will accept for it, not further types; those with no counterpart
 * here (`task.created`, `workflow.completed`) are types of their own, listed below.
 */
export const PUBLIC_EVENT_NAMES = [
  'data_record:created',
  'data_record:updated',
  'data_record:changed',
  'member:updated',
  'chat:created',
  'chat.message.created',
  'message:received',
  'email.received',
  'chat:summary',
  'call:started',
  'call:completed',
  'call:summary',
  'task.created',
  'task.updated',
  'record.deleted',
  'workflow.completed',
  'workflow.failed',
] as const;
export type PublicEventName = (typeof PUBLIC_EVENT_NAMES)[number];

/**
 * One public event type, declared by the feature that emits it (in its own folder, listed
 * in its @Feature descriptor). `payload` builds the resource blocks a delivery carries
 * beside `event`, `eventId`, `timestamp` and `workspace` (SPEC: flat, no data wrapper).
 */
export interface PublicEventDefinition<
  Name extends PublicEventName = PublicEventName,
  Payload extends object = object,
  Source extends DomainEvent = DomainEvent,
> {
  readonly name: Name;
  readonly description: string;
  /** The feature that emits it (its folder under src/modules). */
  readonly feature: string;
  /** The internal event types it is made from. */
  readonly sources: readonly Source['type'][];
  /** The top-level fields of the payload, for the published list. */
  readonly payloadFields: readonly string[];
  /** The payload of one source event (method syntax: the catalogue holds every definition as the base type). */
  payload(event: Source): Payload;
  /**
   * Whether this source event gives rise to it, when only some do (an inbound message
   * is `email.received` only when it came by mail); absent, every source event does.
   */
  appliesTo?(event: Source): boolean;
}

export function definePublicEvent<
  Name extends PublicEventName,
  Payload extends object,
  Source extends DomainEvent,
>(
  definition: PublicEventDefinition<Name, Payload, Source> & {
    /** Checked against the payload type: every listed field exists on it. */
    payloadFields: readonly (keyof Payload & string)[];
  },
): PublicEventDefinition<Name, Payload, Source> {
  if (!definition.sources.length)
    throw new Error(`Public event ${definition.name} needs a source event type`);
  return Object.freeze({ ...definition, sources: [...definition.sources] });
}

/** The read-only list of the public events the features of this build emit. */
export class PublicEventCatalogue {
  private readonly byName = new Map<string, PublicEventDefinition>();

  constructor(definitions: readonly PublicEventDefinition[]) {
    for (const d of definitions) {
      const other = this.byName.get(d.name);
      if (other)
        throw new Error(`Public event ${d.name} is declared by both ${other.feature} and ${d.feature}`);
      this.byName.set(d.name, d);
    }
  }

  /** In the spec's order. */
  list(): readonly PublicEventDefinition[] {
    return PUBLIC_EVENT_NAMES.flatMap((n) => this.byName.get(n) ?? []);
  }

  get(name: string): PublicEventDefinition | undefined {
    return this.byName.get(name);
  }

  /** The public events one stored event gives rise to, each definition's `appliesTo` considered. */
  fromEvent(event: DomainEvent): readonly PublicEventDefinition[] {
    return this.fromSource(event.type).filter((d) => d.appliesTo?.(event) ?? true);
  }

  /**
   * The public events an internal event type may give rise to (none for internal-only
   * ones); for a stored event, `fromEvent` also applies each definition's `appliesTo`.
   */
  fromSource(type: string): readonly PublicEventDefinition[] {
    return this.list().filter((d) => (d.sources as readonly string[]).includes(type));
  }
}
