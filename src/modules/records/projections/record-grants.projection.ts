import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';
import type { RecordGrantEvent } from '../domain/record-grant';

/** Live record grants, for the access policy and GET /record-grants. */
@Injectable()
@Projection({
  name: 'record-grants',
  eventTypes: ['RecordGrantCreated', 'RecordGrantRevoked'],
  tables: ['record_grants'],
})
export class RecordGrantsProjection implements ProjectionHandler {
  async handle(stored: StoredEvent, em: EntityManager): Promise<void> {
    const event = { type: stored.type, data: stored.data } as RecordGrantEvent;
    switch (event.type) {
      case 'RecordGrantCreated': {
        const d = event.data;
        await em.query(
          `INSERT INTO record_grants (id, workspace_id, grantee_member_id, owner_member_id, access, data_type_id,
                                      granted_by, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING`,
          [
            d.grantId,
            d.workspaceId,
            d.granteeMemberId,
            d.ownerMemberId,
            d.access,
            d.dataTypeId,
            d.grantedBy,
            d.createdAt,
          ],
        );
        return;
      }
      case 'RecordGrantRevoked':
        await em.query(`DELETE FROM record_grants WHERE id = $1`, [event.data.grantId]);
        return;
    }
  }
}
