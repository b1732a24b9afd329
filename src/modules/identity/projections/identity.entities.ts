import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'accounts' })
export class AccountEntity {
  @PrimaryColumn('uuid') uuid: string;
  @Column('text', { nullable: true }) email: string | null;
  @Column('text', { nullable: true }) phone: string | null;
  @Column('text', { nullable: true }) name: string | null;
  /** The email the account was registered with; only that one finds invitations. */
  @Column('text', { name: 'registered_email', nullable: true }) registeredEmail: string | null;
  /** Whether `email` is still the registered one (see AccountState.emailVerified). */
  @Column('boolean', { name: 'email_verified', default: true }) emailVerified: boolean;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
}

@Entity({ name: 'members' })
export class MemberEntity {
  @PrimaryColumn('integer') id: number;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  /** null: a contact without a login identity yet (imported). */
  @Column('uuid', { name: 'account_uuid', nullable: true }) accountUuid: string | null;
  @Column('text', { nullable: true }) email: string | null;
  @Column('text', { nullable: true }) phone: string | null;
  @Column('text', { nullable: true }) name: string | null;
  @Column('text', { name: 'external_id', nullable: true }) externalId: string | null;
  @Column('integer', { name: 'member_role_id' }) memberRoleId: number;
  @Column('text') kind: 'person' | 'agent';
  @Column('text') status: 'active' | 'archived';
  @Column('boolean', { name: 'notify_sms' }) notifySms: boolean;
  @Column('boolean', { name: 'notify_email' }) notifyEmail: boolean;
  @Column('boolean', { name: 'notify_voice' }) notifyVoice: boolean;
  /** IANA time zone, or null (the workspace's applies). */
  @Column('text', { nullable: true }) timezone: string | null;
  /** An agent's assistant settings (null for persons); left out of plain reads: the instructions are long. */
  @Column('text', { name: 'agent_model', nullable: true, select: false }) agentModel: string | null;
  @Column('text', { name: 'agent_instructions', nullable: true, select: false })
  agentInstructions: string | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
  @Column('timestamptz', { name: 'archived_at', nullable: true }) archivedAt: Date | null;
  /** Member tokens issued at or before this instant no longer work. */
  @Column('timestamptz', { name: 'tokens_revoked_before', nullable: true }) tokensRevokedBefore: Date | null;
  /** Changes shown so far (the ETag); see core/http/preconditions.ts. */
  @Column('integer') version: number;
  /** Revision of the member stream this row reflects (bigint as text). */
  @Column('bigint', { name: 'stream_revision' }) streamRevision: string;
}
