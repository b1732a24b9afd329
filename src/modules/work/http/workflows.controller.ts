import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { RequireScope } from '../../../core/auth/auth.decorators';
import { NotFoundError } from '../../../core/http/domain-errors';
import { CreatedLocation, seg } from '../../../core/http/location';
import { PageQueryDto, toPageRequest } from '../../../core/http/pagination';
import { ConditionalWrite, IfMatch, pinnedRevision } from '../../../core/http/preconditions';
import {
  CreateWorkflowCommand,
  DeleteWorkflowCommand,
  UpdateWorkflowCommand,
} from '../commands/workflow.commands';
import { GetWorkflowQuery, ListWorkflowsQuery } from '../queries/work.queries';
import { pathIdOf } from './work-validation';
import { CreateWorkflowDto, UpdateWorkflowDto, WorkflowListResponse, WorkflowResponse } from './workflow.dto';

@ApiTags('workflows')
@Controller('w/:wid/workflows')
export class WorkflowsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    private readonly db: DataSource,
  ) {}

  private pinned(
    workspaceId: string,
    id: number,
    ifMatch: number[] | undefined,
  ): Promise<bigint | undefined> {
    return pinnedRevision(this.db, ifMatch, {
      table: 'workflows',
      id,
      workspaceId,
      notFound: () => new NotFoundError('Workflow not found'),
    });
  }

  @Get()
  @RequireScope('workflows:read')
  @ApiOkResponse({ type: WorkflowListResponse })
  list(@Param('wid') wid: string, @Query() query: PageQueryDto): Promise<WorkflowListResponse> {
    return this.queries.execute(new ListWorkflowsQuery(wid.toLowerCase(), toPageRequest(query)));
  }

  @Post()
  @RequireScope('workflows:write')
  @CreatedLocation<WorkflowResponse>((r, p) => `/w/${seg(p.wid.toLowerCase())}/workflows/${seg(r.id)}`)
  @ApiCreatedResponse({ type: WorkflowResponse })
  async create(@Param('wid') wid: string, @Body() body: CreateWorkflowDto): Promise<WorkflowResponse> {
    const workspaceId = wid.toLowerCase();
    const id = await this.commands.execute<CreateWorkflowCommand, number>(
      new CreateWorkflowCommand(workspaceId, body),
    );
    return this.queries.execute(new GetWorkflowQuery(workspaceId, id));
  }

  @Get(':workflowId')
  @RequireScope('workflows:read')
  @ApiOkResponse({ type: WorkflowResponse })
  get(@Param('wid') wid: string, @Param('workflowId') workflowId: string): Promise<WorkflowResponse> {
    return this.queries.execute(new GetWorkflowQuery(wid.toLowerCase(), pathIdOf(workflowId, 'Workflow')));
  }

  @Put(':workflowId')
  @RequireScope('workflows:write')
  @ApiOkResponse({ type: WorkflowResponse })
  @ConditionalWrite()
  async update(
    @Param('wid') wid: string,
    @Param('workflowId') rawId: string,
    @Body() body: UpdateWorkflowDto,
    @IfMatch() ifMatch: number[] | undefined,
  ): Promise<WorkflowResponse> {
    const workspaceId = wid.toLowerCase();
    const id = pathIdOf(rawId, 'Workflow');
    const expected = await this.pinned(workspaceId, id, ifMatch);
    await this.commands.execute(new UpdateWorkflowCommand(workspaceId, id, body, expected));
    return this.queries.execute(new GetWorkflowQuery(workspaceId, id));
  }

  @Delete(':workflowId')
  @RequireScope('workflows:admin')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'deleted; assignments already started keep running' })
  @ConditionalWrite()
  async remove(
    @Param('wid') wid: string,
    @Param('workflowId') rawId: string,
    @IfMatch() ifMatch: number[] | undefined,
  ): Promise<void> {
    const workspaceId = wid.toLowerCase();
    const id = pathIdOf(rawId, 'Workflow');
    const expected = await this.pinned(workspaceId, id, ifMatch);
    await this.commands.execute(new DeleteWorkflowCommand(workspaceId, id, expected));
  }
}
