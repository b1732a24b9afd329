import type { PayloadFormat, RuleFilters } from './event-rule.events';

/** What a delivery says about the rule and workspace it comes from. */
export interface DeliveryContext {
  eventId: string;
  /** The public event's name (SPEC "Events"), e.g. member:updated. */
  event: string;
  /** When the event happened (ISO 8601). */
  timestamp: string;
  workspace: { uuid: string; name: string | null };
  eventRule: { id: number; uuid: string; name: string };
}

/**
 * The body of a delivery (DESIGN.md): flat by default (`event` at the top level, then
 * `eventId`, `timestamp`, `workspace`, `eventRule` and the public event's resource blocks,
 * no data wrapper), or with `payloadFormat: "envelope"` the quick reference's
 * `{eventType, timestamp, workspaceId, data}` where data has `id` (the event's) and the
 * same resource blocks. The resource blocks come only from the catalogue's definition.
 */
export function buildPayload(format: PayloadFormat, ctx: DeliveryContext, blocks: object): object {
  switch (format) {
    case 'flat':
      return {
        event: ctx.event,
        eventId: ctx.eventId,
        timestamp: ctx.timestamp,
        workspace: ctx.workspace,
        eventRule: ctx.eventRule,
        ...blocks,
      };
    case 'envelope':
      return {
        eventType: ctx.event,
        timestamp: ctx.timestamp,
        workspaceId: ctx.workspace.uuid,
        data: { id: ctx.eventId, ...blocks },
      };
  }
}

function field(blocks: object, top: string, nested: [string, string]): unknown {
  const b = blocks as Record<string, unknown>;
  if (b[top] !== undefined) return b[top];
  const inner = b[nested[0]];
  return inner && typeof inner === 'object' ? (inner as Record<string, unknown>)[nested[1]] : undefined;
}

/**
 * chat:summary filters (SPEC "Event rule"): a filter set on the rule must equal the
 * payload's value (`channel` or `chat.channel`; `workflowUuid` or `workflow.uuid`).
 */
export function matchesFilters(filters: RuleFilters, blocks: object): boolean {
  if (filters.channel !== undefined && field(blocks, 'channel', ['chat', 'channel']) !== filters.channel)
    return false;
  if (
    filters.workflowUuid !== undefined &&
    field(blocks, 'workflowUuid', ['workflow', 'uuid']) !== filters.workflowUuid
  )
    return false;
  return true;
}
