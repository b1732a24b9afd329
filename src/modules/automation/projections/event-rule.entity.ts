import { Column, Entity, PrimaryColumn } from 'typeorm';
import type {
  DisableReason,
  PayloadFormat,
  RotatedOutSecret,
  RuleAuthor,
  RuleFilters,
} from '../domain/event-rule.events';
import type { RuleEventType } from '../domain/event-types';

@Entity({ name: 'event_rules' })
export class EventRuleEntity {
  @PrimaryColumn('integer') id: number;
  @Column('uuid') uuid: string;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  @Column('text') name: string;
  @Column('text', { name: 'event_type' }) eventType: RuleEventType;
  @Column('text', { name: 'action_type' }) actionType: string;
  @Column('text', { name: 'webhook_url' }) webhookUrl: string;
  @Column('text', { name: 'payload_format' }) payloadFormat: PayloadFormat;
  @Column('jsonb') filters: RuleFilters;
  @Column('integer', { name: 'max_per_second', nullable: true }) maxPerSecond: number | null;
  /** Sealed (core/crypto/secret-box.ts); never leaves the service. */
  @Column('text', { nullable: true }) secret: string | null;
  @Column('text', { name: 'previous_secret', nullable: true }) previousSecret: string | null;
  @Column('timestamptz', { name: 'previous_secret_until', nullable: true }) previousSecretUntil: Date | null;
  /** Secrets rotated out before the previous one, still in their overlap (sealed; newest first). */
  @Column('jsonb', { name: 'earlier_secrets' }) earlierSecrets: RotatedOutSecret[];
  /** Whose reach bounds what the rule delivers (null: saved before authors were kept). */
  @Column('jsonb', { nullable: true }) author: RuleAuthor | null;
  @Column('boolean') enabled: boolean;
  /** Events from this instant on are matched (creation, or the last re-enable). */
  @Column('timestamptz', { name: 'enabled_since' }) enabledSince: Date;
  @Column('text', { name: 'disabled_reason', nullable: true }) disabledReason:
    DisableReason | 'manual' | null;
  @Column('timestamptz', { name: 'disabled_at', nullable: true }) disabledAt: Date | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
  @Column('integer') version: number;
  @Column('bigint', { name: 'stream_revision' }) streamRevision: string;
}
