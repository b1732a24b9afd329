import { Body, Controller, Get, Param, Put, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { RequireScope, SelfAccess } from '../../../core/auth/auth.decorators';
import { CurrentPrincipal } from '../../../core/auth/current-principal.decorator';
import type { Principal } from '../../../core/auth/principal';
import { NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { KeptRead, PeekedVersion } from '../../../core/http/kept-reads';
import { ConditionalWrite, IfMatch, pinnedRevision } from '../../../core/http/preconditions';
import { PageQueryDto, toPageRequest } from '../../../core/http/pagination';
import { UpdateWorkspaceCommand } from '../commands/update-workspace.command';
import { assertCanReadWorkspace, listedWorkspaceOf } from '../domain/workspace-access';
import { KEPT_WORKSPACE } from '../projections/workspaces.projection';
import { GetWorkspaceQuery, ListWorkspacesQuery } from '../queries/workspace.queries';
import {
  UpdateWorkspaceDto,
  validateFeatures,
  WorkspaceListResponse,
  WorkspaceResponse,
} from './workspace.dto';

@ApiTags('workspaces')
@Controller('w')
export class WorkspacesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly db: DataSource,
  ) {}

  @Get()
  @SelfAccess()
  @ApiOkResponse({ type: WorkspaceListResponse })
  list(
    @CurrentPrincipal() principal: Principal,
    @Query() query: PageQueryDto,
  ): Promise<WorkspaceListResponse> {
    return this.queries.execute(
      new ListWorkspacesQuery(principal.accountUuid, toPageRequest(query), listedWorkspaceOf(principal)),
    );
  }

  /**
   * workspace:read, or a member token bound to this workspace (see workspace-access.ts).
   * The answer is kept per process (GetWorkspaceHandler); the version it is checked
   * against comes with the rate limiter's admission (@KeptRead).
   */
  @Get(':wid')
  @RequireScope('workspace:read')
  @SelfAccess()
  @KeptRead(KEPT_WORKSPACE, 'wid')
  @ApiOkResponse({ type: WorkspaceResponse })
  get(
    @Param('wid') wid: string,
    @CurrentPrincipal() principal: Principal,
    @PeekedVersion() peeked: string | null | undefined,
  ): Promise<WorkspaceResponse> {
    const workspaceId = wid.toLowerCase();
    assertCanReadWorkspace(principal, workspaceId);
    return this.queries.execute(new GetWorkspaceQuery(workspaceId, peeked));
  }

  @Put(':wid')
  @RequireScope('workspace:admin')
  @ApiOkResponse({ type: WorkspaceResponse })
  @ConditionalWrite()
  async update(
    @Param('wid') wid: string,
    @Body() body: UpdateWorkspaceDto,
    @IfMatch() ifMatch: number[] | undefined,
    @CurrentPrincipal() principal: Principal,
  ): Promise<WorkspaceResponse> {
    const bad = validateFeatures(body.settings?.features);
    if (bad) throw new ValidationError(bad);
    const workspaceId = wid.toLowerCase();
    const expectedRevision = await pinnedRevision(this.db, ifMatch, {
      table: 'workspaces',
      id: workspaceId,
      notFound: () => new NotFoundError('Workspace not found'),
    });
    await this.commands.execute(
      new UpdateWorkspaceCommand(
        workspaceId,
        { name: body.name, settings: body.settings },
        principal.effectiveScopes,
        expectedRevision,
      ),
    );
    return this.queries.execute(new GetWorkspaceQuery(workspaceId));
  }
}
