import { Column, Entity, PrimaryColumn } from 'typeorm';

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** One attempt as the logs show it: what was sent (headers, never the secret) and what came back. */
export interface DeliveryAttempt {
  attempt: number;
  at: string;
  requestHeaders: Record<string, string>;
  responseStatus: number | null;
  /** The first RESPONSE_EXCERPT_MAX characters of the response body. */
  responseBodyExcerpt: string | null;
  error: string | null;
  durationMs: number;
  /** When the next attempt is due; null after the last one. */
  nextRetryAt: string | null;
}

/**
 * The delivery log: one row per (event, rule), with the exact body every attempt sends,
 * written by the delivery worker (pending before the first attempt, then each attempt and
 * the outcome) and by the test endpoint. Its id is the
 * delivery's `webhook-id`, the same on every retry and redelivery.
 */
@Entity({ name: 'webhook_deliveries' })
export class WebhookDeliveryEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  @Column('integer', { name: 'rule_id' }) ruleId: number;
  @Column('uuid', { name: 'event_id', nullable: true }) eventId: string | null;
  @Column('text', { name: 'event_type' }) eventType: string;
  @Column('text') status: DeliveryStatus;
  @Column('boolean', { name: 'is_test' }) isTest: boolean;
  @Column('text') body: string;
  @Column('jsonb') attempts: DeliveryAttempt[];
  @Column('integer', { name: 'attempt_count' }) attemptCount: number;
  @Column('integer', { name: 'last_status', nullable: true }) lastStatus: number | null;
  @Column('timestamptz', { name: 'next_attempt_at', nullable: true }) nextAttemptAt: Date | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'completed_at', nullable: true }) completedAt: Date | null;
  @Column('integer') redeliveries: number;
}
