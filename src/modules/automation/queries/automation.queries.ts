import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { NotFoundError } from '../../../core/http/domain-errors';
import { applyListFilters, PageRequest, Paginated, paginated } from '../../../core/http/pagination';
import { withVersion } from '../../../core/http/preconditions';
import { WebhookDeliveryEntity, DeliveryStatus } from '../delivery/webhook-delivery.entity';
import { EventRuleResponse } from '../http/event-rule.dto';
import { WebhookDeliveryResponse } from '../http/webhook-log.dto';
import { EventRuleEntity } from '../projections/event-rule.entity';
import { mayReadDeliveryBody } from '../domain/rule-access.policy';

export class ListEventRulesQuery {
  constructor(
    readonly workspaceId: string,
    readonly page: PageRequest,
    readonly filters: { eventType?: string; enabled?: boolean },
  ) {}
}

export class GetEventRuleQuery {
  constructor(
    readonly workspaceId: string,
    readonly ruleId: number,
  ) {}
}

export class ListWebhookLogsQuery {
  constructor(
    readonly workspaceId: string,
    readonly page: PageRequest,
    readonly filters: { ruleId?: number; eventType?: string; status?: DeliveryStatus },
    /** The caller's effective scopes: what a receiver answered may echo the body. */
    readonly scopes: readonly string[],
  ) {}
}

export class GetWebhookLogQuery {
  constructor(
    readonly workspaceId: string,
    readonly deliveryId: string,
    /** The caller's effective scopes: a record delivery's body needs records:admin. */
    readonly scopes: readonly string[],
  ) {}
}

@QueryHandler(ListEventRulesQuery)
export class ListEventRulesHandler implements IQueryHandler<ListEventRulesQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: ListEventRulesQuery): Promise<Paginated<EventRuleResponse>> {
    const qb = this.db
      .getRepository(EventRuleEntity)
      .createQueryBuilder('r')
      .where('r.workspace_id = :workspaceId', { workspaceId: q.workspaceId });
    if (q.filters.eventType !== undefined)
      qb.andWhere('r.event_type = :eventType', { eventType: q.filters.eventType });
    if (q.filters.enabled !== undefined) qb.andWhere('r.enabled = :enabled', { enabled: q.filters.enabled });
    const [rows, total] = await applyListFilters(qb, q.page, { search: ['r.name'], time: 'r.created_at' })
      .orderBy('r.id', 'ASC')
      .skip(q.page.offset)
      .take(q.page.pageSize)
      .getManyAndCount();
    return paginated(rows.map(EventRuleResponse.of), total, q.page);
  }
}

@QueryHandler(GetEventRuleQuery)
export class GetEventRuleHandler implements IQueryHandler<GetEventRuleQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: GetEventRuleQuery): Promise<EventRuleResponse> {
    const row = await this.db
      .getRepository(EventRuleEntity)
      .findOneBy({ id: q.ruleId, workspaceId: q.workspaceId });
    if (!row) throw new NotFoundError('Event rule not found');
    return withVersion(EventRuleResponse.of(row), row.version);
  }
}

/** Newest first; `search` looks in the event type. */
@QueryHandler(ListWebhookLogsQuery)
export class ListWebhookLogsHandler implements IQueryHandler<ListWebhookLogsQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: ListWebhookLogsQuery): Promise<Paginated<WebhookDeliveryResponse>> {
    const qb = this.db
      .getRepository(WebhookDeliveryEntity)
      .createQueryBuilder('d')
      .where('d.workspace_id = :workspaceId', { workspaceId: q.workspaceId });
    const f = q.filters;
    if (f.ruleId !== undefined) qb.andWhere('d.rule_id = :ruleId', { ruleId: f.ruleId });
    if (f.eventType !== undefined) qb.andWhere('d.event_type = :eventType', { eventType: f.eventType });
    if (f.status !== undefined) qb.andWhere('d.status = :status', { status: f.status });
    const [rows, total] = await applyListFilters(qb, q.page, {
      search: ['d.event_type'],
      time: 'd.created_at',
    })
      .orderBy('d.created_at', 'DESC')
      .addOrderBy('d.id', 'DESC')
      .skip(q.page.offset)
      .take(q.page.pageSize)
      .getManyAndCount();
    return paginated(
      rows.map((r) => WebhookDeliveryResponse.of(r, false, mayReadDeliveryBody(q.scopes, r.eventType))),
      total,
      q.page,
    );
  }
}

@QueryHandler(GetWebhookLogQuery)
export class GetWebhookLogHandler implements IQueryHandler<GetWebhookLogQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: GetWebhookLogQuery): Promise<WebhookDeliveryResponse> {
    const row = await this.db
      .getRepository(WebhookDeliveryEntity)
      .findOneBy({ id: q.deliveryId, workspaceId: q.workspaceId });
    if (!row) throw new NotFoundError('Delivery not found');
    const mayRead = mayReadDeliveryBody(q.scopes, row.eventType);
    return WebhookDeliveryResponse.of(row, mayRead, mayRead);
  }
}
