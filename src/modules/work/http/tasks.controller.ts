import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { RequireScope } from '../../../core/auth/auth.decorators';
import { CurrentPrincipal } from '../../../core/auth/current-principal.decorator';
import type { Principal } from '../../../core/auth/principal';
import { NotFoundError } from '../../../core/http/domain-errors';
import { CreatedLocation, seg } from '../../../core/http/location';
import { toPageRequest } from '../../../core/http/pagination';
import { ConditionalWrite, IfMatch, pinnedRevision } from '../../../core/http/preconditions';
import { CreateTaskCommand, DeleteTaskCommand, UpdateTaskCommand } from '../commands/task.commands';
import { GetTaskQuery, ListTasksQuery } from '../queries/work.queries';
import { callerOf } from './caller';
import { CreateTaskDto, ListTasksQueryDto, TaskListResponse, TaskResponse, UpdateTaskDto } from './task.dto';
import { pathIdOf } from './work-validation';

@ApiTags('tasks')
@Controller('w/:wid/tasks')
export class TasksController {
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
      table: 'tasks',
      id,
      workspaceId,
      notFound: () => new NotFoundError('Task not found'),
    });
  }

  @Get()
  @RequireScope('assignments:read')
  @ApiOkResponse({ type: TaskListResponse })
  list(
    @Param('wid') wid: string,
    @Query() query: ListTasksQueryDto,
    @CurrentPrincipal() principal: Principal,
  ): Promise<TaskListResponse> {
    const { status, assignee, workflowId, priority } = query;
    return this.queries.execute(
      new ListTasksQuery(
        wid.toLowerCase(),
        { status, assignee, workflowId, priority },
        toPageRequest(query),
        callerOf(principal),
      ),
    );
  }

  @Post()
  @RequireScope('assignments:write')
  @CreatedLocation<TaskResponse>((r, p) => `/w/${seg(p.wid.toLowerCase())}/tasks/${seg(r.id)}`)
  @ApiCreatedResponse({ type: TaskResponse })
  async create(
    @Param('wid') wid: string,
    @Body() body: CreateTaskDto,
    @CurrentPrincipal() principal: Principal,
  ): Promise<TaskResponse> {
    const workspaceId = wid.toLowerCase();
    const caller = callerOf(principal);
    const id = await this.commands.execute<CreateTaskCommand, number>(
      new CreateTaskCommand(workspaceId, body, caller),
    );
    return this.queries.execute(new GetTaskQuery(workspaceId, id, caller));
  }

  @Get(':taskId')
  @RequireScope('assignments:read')
  @ApiOkResponse({ type: TaskResponse })
  get(
    @Param('wid') wid: string,
    @Param('taskId') taskId: string,
    @CurrentPrincipal() principal: Principal,
  ): Promise<TaskResponse> {
    return this.queries.execute(
      new GetTaskQuery(wid.toLowerCase(), pathIdOf(taskId, 'Task'), callerOf(principal)),
    );
  }

  @Put(':taskId')
  @RequireScope('assignments:write')
  @ApiOkResponse({ type: TaskResponse })
  @ConditionalWrite()
  async update(
    @Param('wid') wid: string,
    @Param('taskId') rawId: string,
    @Body() body: UpdateTaskDto,
    @IfMatch() ifMatch: number[] | undefined,
    @CurrentPrincipal() principal: Principal,
  ): Promise<TaskResponse> {
    const workspaceId = wid.toLowerCase();
    const id = pathIdOf(rawId, 'Task');
    const caller = callerOf(principal);
    // Whether the caller may see the task at all comes first: a hidden one is a 404, never a 412.
    await this.queries.execute(new GetTaskQuery(workspaceId, id, caller));
    const expected = await this.pinned(workspaceId, id, ifMatch);
    await this.commands.execute(new UpdateTaskCommand(workspaceId, id, body, caller, expected));
    return this.queries.execute(new GetTaskQuery(workspaceId, id, caller));
  }

  @Delete(':taskId')
  @RequireScope('assignments:admin')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'deleted; its slug is free again' })
  @ConditionalWrite()
  async remove(
    @Param('wid') wid: string,
    @Param('taskId') rawId: string,
    @IfMatch() ifMatch: number[] | undefined,
    @CurrentPrincipal() principal: Principal,
  ): Promise<void> {
    const workspaceId = wid.toLowerCase();
    const id = pathIdOf(rawId, 'Task');
    const expected = await this.pinned(workspaceId, id, ifMatch);
    await this.commands.execute(new DeleteTaskCommand(workspaceId, id, callerOf(principal), expected));
  }
}
