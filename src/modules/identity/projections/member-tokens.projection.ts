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
  /** Runs of MemberTokenIssued (one per signup) in one multi-row insert; the rest one by one, in order. */
  async handleBatch(events: readonly StoredEvent[], em: EntityManager): Promise<void> {
    let issued: StoredEvent[] = [];
    for (const e of events) {
      if (e.type === 'MemberTokenIssued') {
        issued.push(e);
        continue;
      }
      if (issued.length) await this.issued(issued, em);
      issued = [];
      await this.handle(e, em);
    }
    if (issued.length) await this.issued(issued, em);
  }

  private async issued(events: readonly StoredEvent[], em: EntityManager): Promise<void> {
    const rows = events.map((e) => {
      const d = (
        e as StoredEvent<
          'MemberTokenIssued',
          Extract<MemberTokenEvent, { type: 'MemberTokenIssued' }>['data']
        >
      ).data;
      return {
        id: d.tokenId,
        prefix: d.prefix,
        secretHash: d.secretHash,
        workspaceId: d.workspaceId,
        memberId: d.memberId,
        accountUuid: d.accountUuid,
        issuedAt: d.issuedAt,
        expiresAt: d.expiresAt,
      };
    });
    await em.query(
      `INSERT INTO member_tokens (id, prefix, secret_hash, workspace_id, member_id, account_uuid, created_at, expires_at)
       SELECT r.id, r.prefix, r."secretHash", r."workspaceId", r."memberId", r."accountUuid", r."issuedAt", r."expiresAt"
       FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, prefix text, "secretHash" text, "workspaceId" uuid,
            "memberId" integer, "accountUuid" uuid, "issuedAt" timestamptz, "expiresAt" timestamptz)
       ON CONFLICT (id) DO NOTHING`,
      [JSON.stringify(rows)],
    );
  }

  async handle(stored: StoredEvent, em: EntityManager): Promise<void> {
    const event = { type: stored.type, data: stored.data } as MemberTokenEvent;
    switch (event.type) {
      case 'MemberTokenIssued':
        return this.issued([stored], em);
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
