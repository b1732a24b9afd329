import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';
import type { MemberRolesMerged } from '../../roles';
import type { InvitationEvent } from '../domain/member.events';

/** Invitations; a role merge moves the unclaimed ones it lists (MemberRolesMerged.invitationIds). */
@Injectable()
@Projection({
  name: 'invitations',
  eventTypes: [
    'InvitationCreated',
    'InvitationRevoked',
    'InvitationAccepted',
    'InvitationDeclined',
    'InvitationExpired',
    'MemberRolesMerged',
  ],
  tables: ['invitations'],
})
export class InvitationsProjection implements ProjectionHandler {
  async handle(stored: StoredEvent, em: EntityManager): Promise<void> {
    const event = { type: stored.type, data: stored.data } as InvitationEvent | MemberRolesMerged;
    switch (event.type) {
      case 'InvitationCreated': {
        const d = event.data;
        await em.query(
          `INSERT INTO invitations (id, workspace_id, email, member_role_id, status, invited_by_member_id, created_at, expires_at, updated_at)
           VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7, $6) ON CONFLICT (id) DO NOTHING`,
          [
            d.invitationId,
            d.workspaceId,
            d.email,
            d.memberRoleId,
            d.invitedByMemberId,
            d.createdAt,
            d.expiresAt,
          ],
        );
        return;
      }
      case 'InvitationRevoked':
        await em.query(
          `UPDATE invitations SET status = 'revoked', revoked_at = $2, updated_at = $2 WHERE id = $1`,
          [event.data.invitationId, event.data.revokedAt],
        );
        return;
      case 'InvitationAccepted': {
        const d = event.data;
        await em.query(
          `UPDATE invitations SET status = 'accepted', accepted_at = $2, member_id = $3, account_uuid = $4, updated_at = $2 WHERE id = $1`,
          [d.invitationId, d.acceptedAt, d.memberId, d.accountUuid],
        );
        return;
      }
      case 'InvitationDeclined':
        await em.query(`UPDATE invitations SET status = 'declined', updated_at = $2 WHERE id = $1`, [
          event.data.invitationId,
          event.data.declinedAt,
        ]);
        return;
      case 'InvitationExpired':
        await em.query(
          `UPDATE invitations SET status = 'expired', expired_at = $2, updated_at = $2 WHERE id = $1 AND status = 'pending'`,
          [event.data.invitationId, event.data.expiredAt],
        );
        return;
      case 'MemberRolesMerged': {
        const d = event.data;
        if (!d.invitationIds.length) return;
        await em.query(
          `UPDATE invitations SET member_role_id = $3 WHERE workspace_id = $1 AND id = ANY($2::uuid[]) AND status = 'pending'`,
          [d.workspaceId, d.invitationIds, d.targetRoleId],
        );
        return;
      }
    }
  }
}
