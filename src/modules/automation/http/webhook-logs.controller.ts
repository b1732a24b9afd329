import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiAcceptedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { RequireScope } from '../../../core/auth/auth.decorators';
import { CurrentPrincipal } from '../../../core/auth/current-principal.decorator';
import type { Principal } from '../../../core/auth/principal';
import { NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { TakesNoBody } from '../../../core/http/input-guard';
import { parseDateTime, toPageRequest } from '../../../core/http/pagination';
import { RecoverDeliveriesCommand, RedeliverCommand } from '../commands/delivery.commands';
import { ACCEPTED_EVENT_TYPES, canonicalEventType } from '../domain/event-types';
import { GetWebhookLogQuery, ListWebhookLogsQuery } from '../queries/automation.queries';
import {
  ListWebhookLogsQueryDto,
  RecoverDeliveriesDto,
  RecoverDeliveriesResponse,
  WebhookDeliveryListResponse,
  WebhookDeliveryResponse,
} from './webhook-log.dto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function deliveryIdOf(raw: string): string {
  if (!UUID.test(raw)) throw new NotFoundError('Delivery not found');
  return raw.toLowerCase();
}

@ApiTags('webhook-logs')
@Controller('w/:wid/webhook-logs')
export class WebhookLogsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Get()
  @RequireScope('webhooks:read')
  @ApiOkResponse({ type: WebhookDeliveryListResponse })
  list(
    @Param('wid') wid: string,
    @Query() query: ListWebhookLogsQueryDto,
    @CurrentPrincipal() p: Principal,
  ): Promise<WebhookDeliveryListResponse> {
    let eventType: string | undefined;
    if (query.eventType !== undefined) {
      eventType = canonicalEventType(query.eventType);
      if (!eventType)
        throw new ValidationError(`eventType: unknown event type; valid: ${ACCEPTED_EVENT_TYPES.join(', ')}`);
    }
    if (query.from !== undefined && query.startTime !== undefined)
      throw new ValidationError('from: give from or startTime, not both');
    if (query.to !== undefined && query.endTime !== undefined)
      throw new ValidationError('to: give to or endTime, not both');
    const page = toPageRequest(query);
    page.startTime ??= parseDateTime(query.from)?.iso;
    page.endTime ??= parseDateTime(query.to)?.iso;
    const start = parseDateTime(page.startTime);
    const end = parseDateTime(page.endTime);
    if (start && end && start.epochNanos > end.epochNanos)
      throw new ValidationError('from: must not be after to');
    return this.queries.execute(
      new ListWebhookLogsQuery(
        wid.toLowerCase(),
        page,
        { ruleId: query.ruleId, eventType, status: query.status },
        p.effectiveScopes,
      ),
    );
  }

  @Post('recover')
  @RequireScope('webhooks:write')
  @HttpCode(202)
  @ApiAcceptedResponse({ type: RecoverDeliveriesResponse })
  async recover(
    @Param('wid') wid: string,
    @Body() body: RecoverDeliveriesDto,
  ): Promise<RecoverDeliveriesResponse> {
    const ids = await this.commands.execute<RecoverDeliveriesCommand, string[]>(
      new RecoverDeliveriesCommand(wid.toLowerCase(), body.ruleId, parseDateTime(body.since)!.iso),
    );
    return { requeued: ids.length, deliveryIds: ids };
  }

  @Get(':deliveryId')
  @RequireScope('webhooks:read')
  @ApiOkResponse({ type: WebhookDeliveryResponse })
  get(
    @Param('wid') wid: string,
    @Param('deliveryId') deliveryId: string,
    @CurrentPrincipal() p: Principal,
  ): Promise<WebhookDeliveryResponse> {
    return this.queries.execute(
      new GetWebhookLogQuery(wid.toLowerCase(), deliveryIdOf(deliveryId), p.effectiveScopes),
    );
  }

  @Post(':deliveryId/redeliver')
  @RequireScope('webhooks:write')
  @HttpCode(202)
  @TakesNoBody()
  @ApiAcceptedResponse({
    type: WebhookDeliveryResponse,
    description: 'queued again, with the same webhook-id',
  })
  async redeliver(
    @Param('wid') wid: string,
    @Param('deliveryId') raw: string,
    @CurrentPrincipal() p: Principal,
  ): Promise<WebhookDeliveryResponse> {
    const workspaceId = wid.toLowerCase();
    const deliveryId = deliveryIdOf(raw);
    await this.commands.execute(new RedeliverCommand(workspaceId, deliveryId));
    return this.queries.execute(new GetWebhookLogQuery(workspaceId, deliveryId, p.effectiveScopes));
  }
}
