import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DataSource, SelectQueryBuilder } from 'typeorm';
import { NotFoundError } from '../../../core/http/domain-errors';
import { applyListFilters, PageRequest, Paginated, paginated } from '../../../core/http/pagination';
import { InvitationResponse, INVITATION_STATUS_FILTERS } from '../http/dto/invitation.dto';
import { InvitationEntity } from '../projections/member.entities';

export class ListInvitationsQuery {
  constructor(
    readonly workspaceId: string,
    readonly status: (typeof INVITATION_STATUS_FILTERS)[number],
    readonly page: PageRequest,
  ) {}
}

export class GetInvitationQuery {
  constructor(
    readonly workspaceId: string,
    readonly invitationId: string,
  ) {}
}

@QueryHandler(ListInvitationsQuery)
export class ListInvitationsHandler implements IQueryHandler<ListInvitationsQuery> {
  constructor(private readonly db: DataSource) {}

  async execute({ workspaceId, status, page }: ListInvitationsQuery): Promise<Paginated<InvitationResponse>> {
    const qb = this.db
      .getRepository(InvitationEntity)
      .createQueryBuilder('i')
      .where('i.workspace_id = :workspaceId', { workspaceId });
    // "expired": recorded by the expiry worker, or pending past its expiry and not recorded yet.
    if (status === 'expired')
      qb.andWhere(`(i.status = 'expired' OR (i.status = 'pending' AND i.expires_at <= now()))`);
    else if (status === 'pending') qb.andWhere(`i.status = 'pending' AND i.expires_at > now()`);
    else if (status !== 'all') qb.andWhere('i.status = :status', { status });
    return pageOf(qb, page);
  }
}

@QueryHandler(GetInvitationQuery)
export class GetInvitationHandler implements IQueryHandler<GetInvitationQuery> {
  constructor(private readonly db: DataSource) {}

  async execute({ workspaceId, invitationId }: GetInvitationQuery): Promise<InvitationResponse> {
    const row = await this.db.getRepository(InvitationEntity).findOneBy({ id: invitationId, workspaceId });
    if (!row) throw new NotFoundError('Invitation not found');
    return InvitationResponse.of(row);
  }
}

export class ListMyInvitationsQuery {
  constructor(
    readonly accountUuid: string,
    readonly page: PageRequest,
  ) {}
}

/** Pending, unexpired invitations sent to the account's email, in any workspace. */
@QueryHandler(ListMyInvitationsQuery)
export class ListMyInvitationsHandler implements IQueryHandler<ListMyInvitationsQuery> {
  constructor(private readonly db: DataSource) {}

  async execute({ accountUuid, page }: ListMyInvitationsQuery): Promise<Paginated<InvitationResponse>> {
    const qb = this.db
      .getRepository(InvitationEntity)
      .createQueryBuilder('i')
      .where(`i.email = (SELECT a.email FROM accounts a WHERE a.uuid = :accountUuid AND a.email_verified)`, {
        accountUuid,
      })
      .andWhere(`i.status = 'pending' AND i.expires_at > now()`);
    return pageOf(qb, page);
  }
}

/** One page of invitations, oldest first, with the list filters every list takes. */
async function pageOf(
  qb: SelectQueryBuilder<InvitationEntity>,
  page: PageRequest,
): Promise<Paginated<InvitationResponse>> {
  applyListFilters(qb, page, { search: ['i.email'], time: 'i.created_at' });
  const [rows, total] = await qb
    .orderBy('i.created_at', 'ASC')
    .addOrderBy('i.id', 'ASC')
    .skip(page.offset)
    .take(page.pageSize)
    .getManyAndCount();
  return paginated(
    rows.map((r) => InvitationResponse.of(r)),
    total,
    page,
  );
}
