import { Controller, Get, Param, Query } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { RequireScope } from '../../../core/auth/auth.decorators';
import { CurrentPrincipal } from '../../../core/auth/current-principal.decorator';
import type { Principal } from '../../../core/auth/principal';
import { PageQueryDto, toPageRequest } from '../../../core/http/pagination';
import { ListWorkspaceEventsQuery, ReadWorkspaceStreamQuery } from '../queries/event-history.queries';
import { EventHistoryQueryDto, EventHistoryResponse } from './audit.dto';

/**
 * The auditors' view of history: stored events with their metadata. Keys the emitting
 * feature guards with a scope (record field values: records:admin) are left out of the
 * data for a caller without it (core/events/guarded-event-data.ts).
 */
@ApiTags('events')
@Controller('w/:wid/events')
export class AuditController {
  constructor(private readonly queries: QueryBus) {}

  @Get()
  @RequireScope('workspace:admin')
  @ApiOkResponse({ type: EventHistoryResponse })
  list(
    @Param('wid') wid: string,
    @Query() q: EventHistoryQueryDto,
    @CurrentPrincipal() p: Principal,
  ): Promise<EventHistoryResponse> {
    return this.queries.execute(
      new ListWorkspaceEventsQuery(
        wid.toLowerCase(),
        { type: q.type, stream: q.stream, after: q.after },
        toPageRequest(q),
        p.effectiveScopes,
      ),
    );
  }

  @Get('streams/:streamName')
  @RequireScope('workspace:admin')
  @ApiOkResponse({ type: EventHistoryResponse })
  stream(
    @Param('wid') wid: string,
    @Param('streamName') streamName: string,
    @Query() q: PageQueryDto,
    @CurrentPrincipal() p: Principal,
  ): Promise<EventHistoryResponse> {
    return this.queries.execute(
      new ReadWorkspaceStreamQuery(wid.toLowerCase(), streamName, toPageRequest(q), p.effectiveScopes),
    );
  }
}
