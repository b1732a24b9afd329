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

export type EventRuleCreated = {
  type: 'EventRuleCreated';
  data: RuleDefinition & {
    ruleId: number;
    uuid: string;
    workspaceId: string;
    actionType: typeof WEBHOOK_SEND;
    /** Sealed with SECRETS_ENCRYPTION_KEY; null without a secret. */
    secret: string | null;
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
    updatedAt: string;
  };
};

export type EventRuleSecretRotated = {
  type: 'EventRuleSecretRotated';
  data: {
    ruleId: number;
    workspaceId: string;
    secret: string;
    /** The secret rotated out, still signing until previousValidUntil; null when there was none. */
    previousSecret: string | null;
    previousValidUntil: string | null;
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
