/**
 * The event types a rule may subscribe to: the spec's fixed list ("Events"), not whatever
 * this build happens to emit, so a rule for `task.created` can be saved before the tasks
 * feature lands and starts delivering the moment its public event is in the catalogue.
 * Dotted names of the quick reference that mean the same as a canonical one are aliases
 * of it; the other dotted names are types of their own.
 */
export const CANONICAL_EVENT_TYPES = [
  'data_record:created',
  'data_record:updated',
  'data_record:changed',
  'member:updated',
  'chat:created',
  'chat:summary',
  'call:started',
  'call:completed',
  'call:summary',
  // The quick reference's names with no canonical twin.
  'email.received',
  'chat.message.created',
  'task.created',
  'task.updated',
  'record.deleted',
  'workflow.completed',
  'workflow.failed',
  // Inbound SMS: the spec names no type; this follows the canonical `<resource>:<verb>` style.
  'message:received',
] as const;
export type RuleEventType = (typeof CANONICAL_EVENT_TYPES)[number];

/** Dotted names that mean the same as a canonical type. */
export const EVENT_TYPE_ALIASES: Readonly<Record<string, RuleEventType>> = {
  'record.created': 'data_record:created',
  'record.updated': 'data_record:updated',
};

/** Every name a rule accepts, canonical first, for the 400 that lists them. */
export const ACCEPTED_EVENT_TYPES: readonly string[] = [
  ...CANONICAL_EVENT_TYPES,
  ...Object.keys(EVENT_TYPE_ALIASES),
];

/**
 * The canonical type of an accepted name; undefined for an unknown one. The alias table is
 * read for its own keys only: "constructor" or "toString" are no aliases of anything (read
 * through the prototype, they gave a function that the stored event then lost, and the
 * rules' read model stalled on a rule without a type).
 */
export function canonicalEventType(name: string): RuleEventType | undefined {
  if ((CANONICAL_EVENT_TYPES as readonly string[]).includes(name)) return name as RuleEventType;
  return Object.hasOwn(EVENT_TYPE_ALIASES, name) ? EVENT_TYPE_ALIASES[name] : undefined;
}

export const isRuleEventType = (value: unknown): value is RuleEventType =>
  (CANONICAL_EVENT_TYPES as readonly unknown[]).includes(value);

/** Types that take the `channel` and `workflowUuid` filters (SPEC "Event rule"). */
export const FILTERABLE_EVENT_TYPES: readonly RuleEventType[] = ['chat:summary'];
