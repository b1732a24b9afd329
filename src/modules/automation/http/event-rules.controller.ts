import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { RequireScope } from '../../../core/auth/auth.decorators';
import { CurrentPrincipal } from '../../../core/auth/current-principal.decorator';
import type { Principal } from '../../../core/auth/principal';
import { NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { TakesNoBody } from '../../../core/http/input-guard';
import { CreatedLocation, seg } from '../../../core/http/location';
import { toPageRequest } from '../../../core/http/pagination';
import { ConditionalWrite, IfMatch, pinnedRevision } from '../../../core/http/preconditions';
import { TestEventRuleCommand, TestOutcome } from '../commands/delivery.commands';
import {
  CreateEventRuleCommand,
  DeleteEventRuleCommand,
  RotateEventRuleSecretCommand,
  UpdateEventRuleCommand,
} from '../commands/event-rule.commands';
import type { RuleAuthor } from '../domain/event-rule.events';
import { ACCEPTED_EVENT_TYPES, canonicalEventType } from '../domain/event-types';
import { GetEventRuleQuery, ListEventRulesQuery } from '../queries/automation.queries';
import {
  CreateEventRuleDto,
  EventRuleListResponse,
  EventRuleResponse,
  ListEventRulesQueryDto,
  RotatedSecretResponse,
  UpdateEventRuleDto,
} from './event-rule.dto';
import { ruleInputOf } from './rule-input';
import { TestDeliveryResponse } from './webhook-log.dto';

/** A path rule id that is not a positive integer names no rule: 404. */
export function ruleIdOf(raw: string): number {
  if (!/^[1-9]\d{0,9}$/.test(raw) || Number(raw) > 2_147_483_647)
    throw new NotFoundError('Event rule not found');
  return Number(raw);
}

/** The caller as a rule's author: the member, and the scopes its credential carries. */
function authorOf(p: Principal): RuleAuthor | undefined {
  if (!p.membership) return undefined;
  return {
    accountUuid: p.accountUuid,
    memberId: p.membership.memberId,
    credentialKind: p.credential.kind,
    credentialScopes: [...p.credential.scopes],
  };
}

@ApiTags('event-rules')
@Controller('w/:wid/event-rules')
export class EventRulesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly db: DataSource,
  ) {}

  private pinned(
    workspaceId: string,
    ruleId: number,
    ifMatch: number[] | undefined,
  ): Promise<bigint | undefined> {
    return pinnedRevision(this.db, ifMatch, {
      table: 'event_rules',
      id: ruleId,
      workspaceId,
      notFound: () => new NotFoundError('Event rule not found'),
    });
  }

  @Get()
  @RequireScope('automations:read')
  @ApiOkResponse({ type: EventRuleListResponse })
  list(@Param('wid') wid: string, @Query() query: ListEventRulesQueryDto): Promise<EventRuleListResponse> {
    let eventType: string | undefined;
    if (query.eventType !== undefined) {
      eventType = canonicalEventType(query.eventType);
      if (!eventType)
        throw new ValidationError(`eventType: unknown event type; valid: ${ACCEPTED_EVENT_TYPES.join(', ')}`);
    }
    return this.queries.execute(
      new ListEventRulesQuery(wid.toLowerCase(), toPageRequest(query), { eventType, enabled: query.enabled }),
    );
  }

  @Post()
  @RequireScope('automations:write')
  @CreatedLocation<EventRuleResponse>((r, p) => `/w/${seg(p.wid.toLowerCase())}/event-rules/${seg(r.id)}`)
  @ApiCreatedResponse({ type: EventRuleResponse })
  async create(
    @Param('wid') wid: string,
    @Body() body: CreateEventRuleDto,
    @CurrentPrincipal() p: Principal,
  ): Promise<EventRuleResponse> {
    const workspaceId = wid.toLowerCase();
    const ruleId = await this.commands.execute<CreateEventRuleCommand, number>(
      new CreateEventRuleCommand(workspaceId, ruleInputOf(body, 'create'), p.effectiveScopes, authorOf(p)),
    );
    return this.queries.execute(new GetEventRuleQuery(workspaceId, ruleId));
  }

  @Get(':ruleId')
  @RequireScope('automations:read')
  @ApiOkResponse({ type: EventRuleResponse })
  get(@Param('wid') wid: string, @Param('ruleId') ruleId: string): Promise<EventRuleResponse> {
    return this.queries.execute(new GetEventRuleQuery(wid.toLowerCase(), ruleIdOf(ruleId)));
  }

  @Put(':ruleId')
  @RequireScope('automations:write')
  @ApiOkResponse({ type: EventRuleResponse })
  @ConditionalWrite()
  async update(
    @Param('wid') wid: string,
    @Param('ruleId') rawRuleId: string,
    @Body() body: UpdateEventRuleDto,
    @IfMatch() ifMatch: number[] | undefined,
    @CurrentPrincipal() p: Principal,
  ): Promise<EventRuleResponse> {
    const workspaceId = wid.toLowerCase();
    const ruleId = ruleIdOf(rawRuleId);
    const input = ruleInputOf(body, 'update');
    const expectedRevision = await this.pinned(workspaceId, ruleId, ifMatch);
    await this.commands.execute(
      new UpdateEventRuleCommand(
        workspaceId,
        ruleId,
        input,
        p.effectiveScopes,
        expectedRevision,
        authorOf(p),
      ),
    );
    return this.queries.execute(new GetEventRuleQuery(workspaceId, ruleId));
  }

  @Delete(':ruleId')
  @RequireScope('automations:admin')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'deleted; its delivery logs are kept' })
  @ConditionalWrite()
  async remove(
    @Param('wid') wid: string,
    @Param('ruleId') rawRuleId: string,
    @IfMatch() ifMatch: number[] | undefined,
  ): Promise<void> {
    const workspaceId = wid.toLowerCase();
    const ruleId = ruleIdOf(rawRuleId);
    const expectedRevision = await this.pinned(workspaceId, ruleId, ifMatch);
    await this.commands.execute(new DeleteEventRuleCommand(workspaceId, ruleId, expectedRevision));
  }

  @Post(':ruleId/test')
  @RequireScope('automations:write')
  @HttpCode(200)
  @TakesNoBody()
  @ApiOkResponse({
    type: TestDeliveryResponse,
    description: 'a sample event of the rule type, sent now once',
  })
  test(@Param('wid') wid: string, @Param('ruleId') ruleId: string): Promise<TestOutcome> {
    return this.commands.execute(new TestEventRuleCommand(wid.toLowerCase(), ruleIdOf(ruleId)));
  }

  @Post(':ruleId/rotate-secret')
  @RequireScope('automations:write')
  @HttpCode(200)
  @TakesNoBody()
  @ApiOkResponse({ type: RotatedSecretResponse, description: 'the new secret, shown this once' })
  async rotateSecret(
    @Param('wid') wid: string,
    @Param('ruleId') rawRuleId: string,
    @CurrentPrincipal() p: Principal,
  ): Promise<RotatedSecretResponse> {
    const workspaceId = wid.toLowerCase();
    const ruleId = ruleIdOf(rawRuleId);
    const rotated = await this.commands.execute<
      RotateEventRuleSecretCommand,
      { secret: string; previousValidUntil: string | null }
    >(new RotateEventRuleSecretCommand(workspaceId, ruleId, p.effectiveScopes));
    const rule = await this.queries.execute<GetEventRuleQuery, EventRuleResponse>(
      new GetEventRuleQuery(workspaceId, ruleId),
    );
    return {
      signingSecret: rotated.secret,
      previousSecretValidUntil: rotated.previousValidUntil,
      rule: { ...rule },
    };
  }
}
