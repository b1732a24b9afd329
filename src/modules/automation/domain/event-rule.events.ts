import type { RuleEventType } from './event-types';

/** The one action the spec shows. */
export const WEBHOOK_SEND = 'webhook:send';
export const PAYLOAD_FORMATS = ['flat', 'envelope'] as const;
export type PayloadFormat = (typeof PAYLOAD_FORMATS)[number];

/** Optional filters of chat:summary rules. */
export interface RuleFilters {
  channel?: string;
  workflowUuid?: string;
}

/** Filters as a request changes them: a value sets one, null removes it, absent leaves it. */
export type RuleFilterChanges = { [K in keyof RuleFilters]?: RuleFilters[K] | null };

/** What a rule is, as the events carry it. The signing secret is sealed (core/crypto/secret-box.ts), never plain. */
export interface RuleDefinition {
  name: string;
  eventType: RuleEventType;
  webhookUrl: string;
  payloadFormat: PayloadFormat;
  filters: RuleFilters;
  /** Deliveries per second to this receiver at most; null: as fast as the workers go. */
  maxPerSecond: number | null;
}

/**
 * Who saved the rule, whose reach bounds what it delivers (rule-access.policy.ts): the
 * member, and the scopes of the credential it used (an API key's or OAuth token's). At
 * each delivery the member's current role is intersected with these scopes.
 */
export interface RuleAuthor {
  accountUuid: string;
  memberId: number;
  credentialKind: string;
  credentialScopes: string[];
}

export type EventRuleCreated = {
  type: 'EventRuleCreated';
  data: RuleDefinition & {
    ruleId: number;
    uuid: string;
    workspaceId: string;
    actionType: typeof WEBHOOK_SEND;
    /** Sealed with SECRETS_ENCRYPTION_KEY; null without a secret. */
    secret: string | null;
    /** Absent on rules saved before authors were recorded. */
    author?: RuleAuthor;
    /**
     * false: created stopped (disabled from this first event on, reason `manual`); absent:
     * enabled. Rules created stopped before this was carried have an EventRuleUpdated
     * `{enabled: false}` right after.
     */
    enabled?: false;
    createdAt: string;
  };
};

export type EventRuleUpdated = {
  type: 'EventRuleUpdated';
  data: Partial<RuleDefinition> & {
    ruleId: number;
    workspaceId: string;
    secret?: string;
    enabled?: boolean;
    /** Whoever changed the rule answers for it from then on. */
    author?: RuleAuthor;
    updatedAt: string;
  };
};

/** A sealed secret rotated out of a rule, still signing until `validUntil`. */
export interface RotatedOutSecret {
  secret: string;
  validUntil: string;
}

export type EventRuleSecretRotated = {
  type: 'EventRuleSecretRotated';
  data: {
    ruleId: number;
    workspaceId: string;
    secret: string;
    /** The secret rotated out, still signing until previousValidUntil; null when there was none. */
    previousSecret: string | null;
    previousValidUntil: string | null;
    /**
     * Secrets rotated out before it and still in their own overlap (newest first, at most
     * EARLIER_SECRETS_MAX): a second rotation must not cut short the first one's overlap.
     * Absent on rotations recorded before they were kept.
     */
    earlierSecrets?: RotatedOutSecret[];
    rotatedAt: string;
  };
};

export const DISABLE_REASONS = ['receiver_gone', 'sustained_failure'] as const;
export type DisableReason = (typeof DISABLE_REASONS)[number];

export type EventRuleDisabled = {
  type: 'EventRuleDisabled';
  data: { ruleId: number; workspaceId: string; reason: DisableReason; detail: string; disabledAt: string };
};

export type EventRuleDeleted = {
  type: 'EventRuleDeleted';
  data: { ruleId: number; workspaceId: string; deletedAt: string };
};

export type EventRuleEvent =
  EventRuleCreated | EventRuleUpdated | EventRuleSecretRotated | EventRuleDisabled | EventRuleDeleted;

export const EVENT_RULE_EVENT_TYPES: readonly EventRuleEvent['type'][] = [
  'EventRuleCreated',
  'EventRuleUpdated',
  'EventRuleSecretRotated',
  'EventRuleDisabled',
  'EventRuleDeleted',
];

export const eventRuleStream = (ruleId: number): string => `eventrule-${ruleId}`;
