import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DataSource, In } from 'typeorm';
import { MemberEntity } from '../projections/identity.entities';

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

  async execute(q: GetMemberContactsQuery): Promise<MemberContact[]> {
    if (!q.memberIds.length) return [];
    const rows = await this.db
      .getRepository(MemberEntity)
      .findBy({ workspaceId: q.workspaceId, id: In([...new Set(q.memberIds)]) });
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      email: r.email,
      phone: r.phone,
      externalId: r.externalId,
      status: r.status,
      notifySms: r.notifySms,
      notifyEmail: r.notifyEmail,
      notifyVoice: r.notifyVoice,
      timezone: r.timezone,
    }));
  }
}
