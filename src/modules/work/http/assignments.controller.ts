import { Body, Controller, Get, Param, Post, Put, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { RequireScope, SelfAccess } from '../../../core/auth/auth.decorators';
import { CurrentPrincipal } from '../../../core/auth/current-principal.decorator';
import type { Principal } from '../../../core/auth/principal';
import { NotFoundError } from '../../../core/http/domain-errors';
import { CreatedLocation, seg } from '../../../core/http/location';
import { toPageRequest } from '../../../core/http/pagination';
import { ConditionalWrite, IfMatch, pinnedRevision } from '../../../core/http/preconditions';
import { SetAssignmentStatusCommand, StartAssignmentCommand } from '../commands/assignment.commands';
import { GetAssignmentQuery, ListAssignmentsQuery } from '../queries/work.queries';
import {
  AssignmentListResponse,
  AssignmentResponse,
  CreateAssignmentDto,
  ListAssignmentsQueryDto,
  UpdateAssignmentDto,
} from './assignment.dto';
import { callerOf } from './caller';
import { pathIdOf } from './work-validation';

@ApiTags('assignments')
@Controller('w/:wid/assignments')
export class AssignmentsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly db: DataSource,
  ) {}

  @Get()
  @SelfAccess()
  @ApiOperation({
    summary: 'List assignments',
    description:
      'assignments:read lists every assignment of the workspace; without it, and for External members, your own',
  })
  @ApiOkResponse({ type: AssignmentListResponse })
  list(
    @Param('wid') wid: string,
    @Query() query: ListAssignmentsQueryDto,
    @CurrentPrincipal() principal: Principal,
  ): Promise<AssignmentListResponse> {
    const { memberId, workflowId, status } = query;
    return this.queries.execute(
      new ListAssignmentsQuery(
        wid.toLowerCase(),
        { memberId, workflowId, status },
        toPageRequest(query),
        callerOf(principal),
      ),
    );
  }

  @Post()
  @SelfAccess()
  @ApiOperation({
    summary: 'Start a workflow for a member',
    description:
      "any member may start a workflow for itself; for another member, assignments:write. The workflow's Member Role Gate is checked for the member it runs for (403 with the gate's message)",
  })
  @CreatedLocation<AssignmentResponse>((r, p) => `/w/${seg(p.wid.toLowerCase())}/assignments/${seg(r.id)}`)
  @ApiCreatedResponse({ type: AssignmentResponse })
  async create(
    @Param('wid') wid: string,
    @Body() body: CreateAssignmentDto,
    @CurrentPrincipal() principal: Principal,
  ): Promise<AssignmentResponse> {
    const workspaceId = wid.toLowerCase();
    const caller = callerOf(principal);
    const id = await this.commands.execute<StartAssignmentCommand, number>(
      new StartAssignmentCommand(workspaceId, body.workflowId, body.memberId, caller),
    );
    return this.queries.execute(new GetAssignmentQuery(workspaceId, id, caller));
  }

  @Get(':assignmentId')
  @SelfAccess()
  @ApiOperation({ summary: 'Get an assignment', description: 'assignments:read, or your own assignment' })
  @ApiOkResponse({ type: AssignmentResponse })
  get(
    @Param('wid') wid: string,
    @Param('assignmentId') assignmentId: string,
    @CurrentPrincipal() principal: Principal,
  ): Promise<AssignmentResponse> {
    return this.queries.execute(
      new GetAssignmentQuery(wid.toLowerCase(), pathIdOf(assignmentId, 'Assignment'), callerOf(principal)),
    );
  }

  @Put(':assignmentId')
  @RequireScope('assignments:write')
  @ApiOkResponse({ type: AssignmentResponse })
  @ConditionalWrite()
  async update(
    @Param('wid') wid: string,
    @Param('assignmentId') rawId: string,
    @Body() body: UpdateAssignmentDto,
    @IfMatch() ifMatch: number[] | undefined,
    @CurrentPrincipal() principal: Principal,
  ): Promise<AssignmentResponse> {
    const workspaceId = wid.toLowerCase();
    const id = pathIdOf(rawId, 'Assignment');
    const expected = await pinnedRevision(this.db, ifMatch, {
      table: 'assignments',
      id,
      workspaceId,
      notFound: () => new NotFoundError('Assignment not found'),
    });
    await this.commands.execute(
      new SetAssignmentStatusCommand(workspaceId, id, body.status, body.completedAt, expected),
    );
    return this.queries.execute(new GetAssignmentQuery(workspaceId, id, callerOf(principal)));
  }
}
