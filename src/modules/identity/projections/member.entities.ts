import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { InvitationStatus } from '../domain/member.events';

/** Read model of member tokens: what the `wsm_` resolver checks (hash, expiry, revocation). */
@Entity({ name: 'member_tokens' })
export class MemberTokenEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('text') prefix: string;
  @Column('text', { name: 'secret_hash' }) secretHash: string;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  @Column('integer', { name: 'member_id' }) memberId: number;
  @Column('uuid', { name: 'account_uuid' }) accountUuid: string;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'expires_at' }) expiresAt: Date;
  @Column('timestamptz', { name: 'revoked_at', nullable: true }) revokedAt: Date | null;
  /** When the expiry worker recorded the lapse; the token is refused from expiresAt on regardless. */
  @Column('timestamptz', { name: 'expired_at', nullable: true }) expiredAt: Date | null;
}

@Entity({ name: 'invitations' })
export class InvitationEntity {
  @PrimaryColumn('uuid') id: string;
  @Column('uuid', { name: 'workspace_id' }) workspaceId: string;
  @Column('text') email: string;
  @Column('integer', { name: 'member_role_id' }) memberRoleId: number;
  @Column('text') status: InvitationStatus;
  @Column('integer', { name: 'invited_by_member_id', nullable: true }) invitedByMemberId: number | null;
  @Column('integer', { name: 'member_id', nullable: true }) memberId: number | null;
  @Column('uuid', { name: 'account_uuid', nullable: true }) accountUuid: string | null;
  @Column('timestamptz', { name: 'created_at' }) createdAt: Date;
  @Column('timestamptz', { name: 'expires_at' }) expiresAt: Date;
  @Column('timestamptz', { name: 'accepted_at', nullable: true }) acceptedAt: Date | null;
  @Column('timestamptz', { name: 'revoked_at', nullable: true }) revokedAt: Date | null;
  /** When the expiry worker recorded the lapse (status 'expired'). */
  @Column('timestamptz', { name: 'expired_at', nullable: true }) expiredAt: Date | null;
  @Column('timestamptz', { name: 'updated_at' }) updatedAt: Date;
}
