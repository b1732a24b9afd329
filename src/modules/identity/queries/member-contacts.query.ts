import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { queryPrepared } from '../../../core/database/prepared';

/** How other features reach and show a member (messaging's deliveries, records' `member` block). */
export interface MemberContact {
  id: number;
  name: string | null;
  email: string | null;
  phone: string | null;
  externalId: string | null;
  status: 'active' | 'archived';
  notifySms: boolean;
  notifyEmail: boolean;
  notifyVoice: boolean;
  /** IANA time zone, or null. */
  timezone: string | null;
}

/** The contacts of members of one workspace (archived ones with their status); ids of other workspaces or unknown ones are left out. */
export class GetMemberContactsQuery {
  constructor(
    readonly workspaceId: string,
    readonly memberIds: readonly number[],
  ) {}
}

@QueryHandler(GetMemberContactsQuery)
export class GetMemberContactsHandler implements IQueryHandler<GetMemberContactsQuery, MemberContact[]> {
  constructor(private readonly db: DataSource) {}

  /**
   * One prepared statement of the contact's columns (every SMS, mail and web-chat delivery
   * asks it): TypeORM's query builder and entity mapping of the whole row cost more than
   * the query.
   */
  async execute(q: GetMemberContactsQuery): Promise<MemberContact[]> {
    if (!q.memberIds.length) return [];
    const rows = await queryPrepared<{
      id: number;
      name: string | null;
      email: string | null;
      phone: string | null;
      external_id: string | null;
      status: 'active' | 'archived';
      notify_sms: boolean;
      notify_email: boolean;
      notify_voice: boolean;
      timezone: string | null;
    }>(
      this.db,
      `SELECT id, name, email, phone, external_id, status, notify_sms, notify_email, notify_voice, timezone
         FROM members WHERE workspace_id = $1 AND id = ANY($2::int[])`,
      [q.workspaceId, [...new Set(q.memberIds)]],
    );
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      email: r.email,
      phone: r.phone,
      externalId: r.external_id,
      status: r.status,
      notifySms: r.notify_sms,
      notifyEmail: r.notify_email,
      notifyVoice: r.notify_voice,
      timezone: r.timezone,
    }));
  }
}
