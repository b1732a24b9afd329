import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';
import type { MemberTokenEvent } from '../domain/member.events';

@Injectable()
@Projection({
  name: 'member-tokens',
  eventTypes: ['MemberTokenIssued', 'MemberTokenRevoked', 'MemberTokenExpired'],
  tables: ['member_tokens'],
})
export class MemberTokensProjection implements ProjectionHandler {
  async handle(stored: StoredEvent, em: EntityManager): Promise<void> {
    const event = { type: stored.type, data: stored.data } as MemberTokenEvent;
    switch (event.type) {
      case 'MemberTokenIssued': {
        const d = event.data;
        await em.query(
          `INSERT INTO member_tokens (id, prefix, secret_hash, workspace_id, member_id, account_uuid, created_at, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING`,
          [
            d.tokenId,
            d.prefix,
            d.secretHash,
            d.workspaceId,
            d.memberId,
            d.accountUuid,
            d.issuedAt,
            d.expiresAt,
          ],
        );
        return;
      }
      case 'MemberTokenRevoked':
        await em.query(`UPDATE member_tokens SET revoked_at = $2 WHERE id = $1`, [
          event.data.tokenId,
          event.data.revokedAt,
        ]);
        return;
      case 'MemberTokenExpired':
        await em.query(`UPDATE member_tokens SET expired_at = $2 WHERE id = $1`, [
          event.data.tokenId,
          event.data.expiredAt,
        ]);
        return;
    }
  }
}
