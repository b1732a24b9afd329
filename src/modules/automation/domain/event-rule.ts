import type { Decider } from '../../../core/cqrs/decider';
import { ConflictError, NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import {
  DisableReason,
  EventRuleEvent,
  RotatedOutSecret,
  RuleAuthor,
  RuleDefinition,
  RuleFilterChanges,
  RuleFilters,
  WEBHOOK_SEND,
} from './event-rule.events';
import { FILTERABLE_EVENT_TYPES, isRuleEventType } from './event-types';

export const RULE_NAME_MAX = 200;
export const MAX_PER_SECOND_MAX = 10_000;
/**
 * Rotated-out secrets kept signing beside the previous one: rotations in quick succession
 * (a retried request, a second thought) leave each secret its overlap, up to this many
 * more signatures per delivery.
 */
export const EARLIER_SECRETS_MAX = 2;

export interface EventRuleState {
  status: 'none' | 'live' | 'deleted';
  workspaceId?: string;
  eventType?: RuleDefinition['eventType'];
  filters: RuleFilters;
  enabled: boolean;
  secret: string | null;
  /** Secrets rotated out and still signing until their validUntil, newest first. */
  rotatedOut: RotatedOutSecret[];
  webhookUrl?: string;
  /**
   * Since when the rule sends to its receiver as it is: created, moved to another URL, or
   * switched back on. A verdict on the receiver from an attempt made before (a 410, a
   * failing streak) is about a receiver or a decision that is no longer the rule's.
   */
  receiverSince?: string;
}

export type EventRuleCommand =
  | {
      type: 'CreateEventRule';
      ruleId: number;
      uuid: string;
      workspaceId: string;
      definition: RuleDefinition;
      secret: string | null;
      author?: RuleAuthor;
      /** false: the rule is created stopped, in its one event. */
      enabled?: boolean;
      now: string;
    }
  | {
      type: 'UpdateEventRule';
      ruleId: number;
      workspaceId: string;
      changes: Partial<Omit<RuleDefinition, 'filters'>> & { enabled?: boolean; filters?: RuleFilterChanges };
      secret?: string;
      author?: RuleAuthor;
      now: string;
    }
  | {
      type: 'RotateEventRuleSecret';
      ruleId: number;
      workspaceId: string;
      secret: string;
      overlapMs: number;
      now: string;
    }
  | {
      type: 'DisableEventRule';
      ruleId: number;
      reason: DisableReason;
      detail: string;
      /** When the attempt that gave the verdict was made (it started then). */
      asOf: string;
      now: string;
    }
  | { type: 'DeleteEventRule'; ruleId: number; workspaceId: string; now: string };

/** A rule's type is one of the fixed list, canonical: anything else would be stored as no type at all. */
function checkEventType(eventType: unknown): void {
  if (eventType !== undefined && !isRuleEventType(eventType))
    throw new ValidationError('eventType: unknown event type');
}

function checkName(name: string | undefined): void {
  if (name === undefined) return;
  if (!name.trim()) throw new ValidationError('name: must not be empty');
  if (name.length > RULE_NAME_MAX) throw new ValidationError(`name: at most ${RULE_NAME_MAX} characters`);
}

/** The channels a chat has (SPEC "Chat"): the values `chat.channel` takes in `chat:summary`. */
export const CHAT_CHANNELS = ['phone-sms', 'phone-voice', 'web-chat', 'email'] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function checkFilters(eventType: RuleDefinition['eventType'] | undefined, filters: RuleFilters): void {
  const given = Object.values(filters).some((v) => v !== undefined);
  if (given && !(eventType && FILTERABLE_EVENT_TYPES.includes(eventType)))
    throw new ValidationError(
      `channel, workflowUuid: filter only ${FILTERABLE_EVENT_TYPES.join(', ')} rules`,
    );
  // A filter no summary can match would silently deliver nothing.
  if (filters.channel !== undefined && !(CHAT_CHANNELS as readonly unknown[]).includes(filters.channel))
    throw new ValidationError(`channel: must be one of ${CHAT_CHANNELS.join(', ')}`);
  if (
    filters.workflowUuid !== undefined &&
    (typeof filters.workflowUuid !== 'string' || !UUID.test(filters.workflowUuid))
  )
    throw new ValidationError("workflowUuid: must be a UUID (a workflow's uuid)");
}

/** The filters after a change: each given value set, each null removed, the others kept. */
export function applyFilterChanges(filters: RuleFilters, changes: RuleFilterChanges): RuleFilters {
  const out: RuleFilters = { ...filters };
  for (const key of ['channel', 'workflowUuid'] as const) {
    const value = changes[key];
    if (value === null) delete out[key];
    else if (value !== undefined) out[key] = value;
  }
  return out;
}

function checkMaxPerSecond(value: number | null | undefined): void {
  if (value === undefined || value === null) return;
  if (!Number.isInteger(value) || value < 1 || value > MAX_PER_SECOND_MAX)
    throw new ValidationError(`actionParams.maxPerSecond: an integer from 1 to ${MAX_PER_SECOND_MAX}`);
}

function live(state: EventRuleState, workspaceId?: string): void {
  if (state.status !== 'live' || (workspaceId !== undefined && state.workspaceId !== workspaceId))
    throw new NotFoundError('Event rule not found');
}

/**
 * An event rule: one event type, one webhook. Its secret only ever appears sealed.
 * A disabled rule stays (with its logs); PUT `enabled: true` resumes it for new events.
 */
export const eventRuleDecider: Decider<EventRuleState, EventRuleCommand, EventRuleEvent> = {
  initialState: () => ({ status: 'none', filters: {}, enabled: false, secret: null, rotatedOut: [] }),

  evolve(state, event) {
    switch (event.type) {
      case 'EventRuleCreated':
        return {
          status: 'live',
          workspaceId: event.data.workspaceId,
          eventType: event.data.eventType,
          filters: event.data.filters,
          enabled: event.data.enabled !== false,
          secret: event.data.secret,
          rotatedOut: [],
          webhookUrl: event.data.webhookUrl,
          receiverSince: event.data.createdAt,
        };
      case 'EventRuleUpdated': {
        const d = event.data;
        const moved = d.webhookUrl !== undefined && d.webhookUrl !== state.webhookUrl;
        const switchedOn = d.enabled === true && !state.enabled;
        return {
          ...state,
          eventType: d.eventType ?? state.eventType,
          filters: d.filters ?? state.filters,
          enabled: d.enabled ?? state.enabled,
          secret: d.secret ?? state.secret,
          webhookUrl: d.webhookUrl ?? state.webhookUrl,
          receiverSince: moved || switchedOn ? d.updatedAt : state.receiverSince,
        };
      }
      case 'EventRuleSecretRotated': {
        const d = event.data;
        return {
          ...state,
          secret: d.secret,
          rotatedOut: [
            ...(d.previousSecret && d.previousValidUntil
              ? [{ secret: d.previousSecret, validUntil: d.previousValidUntil }]
              : []),
            ...(d.earlierSecrets ?? []),
          ],
        };
      }
      case 'EventRuleDisabled':
        return { ...state, enabled: false };
      case 'EventRuleDeleted':
        return { ...state, status: 'deleted', enabled: false };
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreateEventRule': {
        if (state.status !== 'none') throw new ConflictError('Event rule already exists');
        const d = command.definition;
        checkName(d.name);
        checkEventType(d.eventType ?? null);
        checkFilters(d.eventType, d.filters);
        checkMaxPerSecond(d.maxPerSecond);
        return [
          {
            type: 'EventRuleCreated',
            data: {
              ruleId: command.ruleId,
              uuid: command.uuid,
              workspaceId: command.workspaceId,
              ...d,
              actionType: WEBHOOK_SEND,
              secret: command.secret,
              ...(command.author ? { author: command.author } : {}),
              ...(command.enabled === false ? { enabled: false as const } : {}),
              createdAt: command.now,
            },
          },
        ];
      }
      case 'UpdateEventRule': {
        live(state, command.workspaceId);
        const { filters: filterChanges, ...rest } = command.changes;
        checkName(rest.name);
        checkEventType(rest.eventType);
        checkMaxPerSecond(rest.maxPerSecond);
        // A change to a type without filters drops those the rule had (they filtered chat:summary).
        const typeLosesFilters = !!rest.eventType && !FILTERABLE_EVENT_TYPES.includes(rest.eventType);
        const base = typeLosesFilters ? {} : state.filters;
        // A PUT naming one filter changes that one: the other stays (null removes one).
        let filters = filterChanges === undefined ? undefined : applyFilterChanges(base, filterChanges);
        if (filters === undefined && typeLosesFilters && Object.keys(state.filters).length) filters = {};
        checkFilters(rest.eventType ?? state.eventType, filters ?? state.filters);
        const c = { ...rest, ...(filters !== undefined ? { filters } : {}) };
        return [
          {
            type: 'EventRuleUpdated',
            data: {
              ruleId: command.ruleId,
              workspaceId: command.workspaceId,
              ...c,
              ...(command.secret !== undefined ? { secret: command.secret } : {}),
              ...(command.author ? { author: command.author } : {}),
              updatedAt: command.now,
            },
          },
        ];
      }
      case 'RotateEventRuleSecret': {
        live(state, command.workspaceId);
        const now = Date.parse(command.now);
        const earlier = state.rotatedOut
          .filter((s) => Date.parse(s.validUntil) > now)
          .slice(0, EARLIER_SECRETS_MAX);
        return [
          {
            type: 'EventRuleSecretRotated',
            data: {
              ruleId: command.ruleId,
              workspaceId: command.workspaceId,
              secret: command.secret,
              previousSecret: state.secret,
              previousValidUntil: state.secret ? new Date(now + command.overlapMs).toISOString() : null,
              ...(earlier.length ? { earlierSecrets: earlier } : {}),
              rotatedAt: command.now,
            },
          },
        ];
      }
      case 'DisableEventRule':
        // Only a live, enabled rule is disabled: a second 410 or a late check changes nothing.
        if (state.status !== 'live' || !state.enabled) return [];
        // Nor one moved to another receiver or switched back on after the attempt was made:
        // the old URL's 410 is not the new one's, and the owner's re-enable came after it.
        if (state.receiverSince && Date.parse(command.asOf) < Date.parse(state.receiverSince)) return [];
        return [
          {
            type: 'EventRuleDisabled',
            data: {
              ruleId: command.ruleId,
              workspaceId: state.workspaceId!,
              reason: command.reason,
              detail: command.detail,
              disabledAt: command.now,
            },
          },
        ];
      case 'DeleteEventRule':
        live(state, command.workspaceId);
        return [
          {
            type: 'EventRuleDeleted',
            data: { ruleId: command.ruleId, workspaceId: command.workspaceId, deletedAt: command.now },
          },
        ];
    }
  },
};
