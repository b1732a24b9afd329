import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { StoredEvent } from '../../../core/event-store/event-store.port';
import { Projection, ProjectionHandler } from '../../../core/projections/projection';
import type { InboxEvent } from '../domain/inbox';
import type { PhoneNumberEvent } from '../domain/phone-number';

/** phone_numbers and inboxes: the addresses chats send from and inbound messages are routed by. */
@Injectable()
@Projection({
  name: 'messaging-addresses',
  eventTypes: ['PhoneNumberCreated', 'PhoneNumberUpdated', 'PhoneNumberDeleted', 'InboxCreated'],
  tables: ['phone_numbers', 'inboxes'],
})
export class PhoneNumbersInboxesProjection implements ProjectionHandler {
  async handle(stored: StoredEvent, em: EntityManager): Promise<void> {
    const event = { type: stored.type, data: stored.data } as PhoneNumberEvent | InboxEvent;
    const revision = stored.revision.toString();
    switch (event.type) {
      case 'PhoneNumberCreated': {
        const d = event.data;
        await em.query(
          `INSERT INTO phone_numbers (id, workspace_id, number, name, signup_role_id, created_at, updated_at, version, stream_revision)
           VALUES ($1, $2, $3, $4, $5, $6, $6, 1, $7) ON CONFLICT (id) DO NOTHING`,
          [d.phoneNumberId, d.workspaceId, d.number, d.name, d.signupRoleId, d.createdAt, revision],
        );
        return;
      }
      case 'PhoneNumberUpdated': {
        const d = event.data;
        const sets: string[] = [];
        const values: unknown[] = [d.phoneNumberId, d.updatedAt, revision];
        const columns = { number: 'number', name: 'name', signupRoleId: 'signup_role_id' } as const;
        for (const [field, column] of Object.entries(columns) as [keyof typeof columns, string][]) {
          if (d.changes[field] === undefined) continue;
          values.push(d.changes[field]);
          sets.push(`${column} = $${values.length}`);
        }
        await em.query(
          `UPDATE phone_numbers SET ${[...sets, 'updated_at = $2', 'version = version + 1', 'stream_revision = $3'].join(', ')}
           WHERE id = $1`,
          values,
        );
        return;
      }
      case 'PhoneNumberDeleted':
        await em.query(`DELETE FROM phone_numbers WHERE id = $1`, [event.data.phoneNumberId]);
        return;
      case 'InboxCreated': {
        const d = event.data;
        await em.query(
          `INSERT INTO inboxes (id, workspace_id, email, name, owner_member_id, granted_member_ids, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING`,
          [d.inboxId, d.workspaceId, d.email, d.name, d.ownerMemberId, d.grantedMemberIds, d.createdAt],
        );
        return;
      }
    }
  }
}
