import { IQueryHandler, QueryHandler } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { NotFoundError } from '../../../core/http/domain-errors';
import { applyListFilters, PageRequest, Paginated, paginated } from '../../../core/http/pagination';
import { withVersion } from '../../../core/http/preconditions';
import { CallerRef, WorkFacts } from '../commands/work-facts';
import { assertMaySeeTask, assignmentVisibility, seesAdminTasks } from '../domain/work-access.policy';
import type { AssignmentStatus, TaskPriority, TaskStatus } from '../domain/work.events';
import { AssignmentResponse } from '../http/assignment.dto';
import { TaskResponse } from '../http/task.dto';
import { WorkflowResponse } from '../http/workflow.dto';
import { AssignmentEntity, TaskEntity, WorkflowEntity } from '../projections/work.entities';

export class ListWorkflowsQuery {
  constructor(
    readonly workspaceId: string,
    readonly page: PageRequest,
  ) {}
}

export class GetWorkflowQuery {
  constructor(
    readonly workspaceId: string,
    readonly workflowId: number,
  ) {}
}

export interface AssignmentFilters {
  memberId?: number;
  workflowId?: number;
  status?: AssignmentStatus;
}

export class ListAssignmentsQuery {
  constructor(
    readonly workspaceId: string,
    readonly filters: AssignmentFilters,
    readonly page: PageRequest,
    readonly caller: CallerRef,
  ) {}
}

export class GetAssignmentQuery {
  constructor(
    readonly workspaceId: string,
    readonly assignmentId: number,
    readonly caller: CallerRef,
  ) {}
}

export interface TaskFilters {
  status?: TaskStatus;
  assignee?: number;
  workflowId?: number;
  priority?: TaskPriority;
}

export class ListTasksQuery {
  constructor(
    readonly workspaceId: string,
    readonly filters: TaskFilters,
    readonly page: PageRequest,
    readonly caller: CallerRef,
  ) {}
}

export class GetTaskQuery {
  constructor(
    readonly workspaceId: string,
    readonly taskId: number,
    readonly caller: CallerRef,
  ) {}
}

@QueryHandler(ListWorkflowsQuery)
export class ListWorkflowsHandler implements IQueryHandler<ListWorkflowsQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: ListWorkflowsQuery): Promise<Paginated<WorkflowResponse>> {
    const [rows, total] = await applyListFilters(
      this.db
        .getRepository(WorkflowEntity)
        .createQueryBuilder('w')
        .where('w.workspace_id = :workspaceId', { workspaceId: q.workspaceId }),
      q.page,
      { search: ['w.name'], time: 'w.created_at' },
    )
      .orderBy('w.id', 'ASC')
      .skip(q.page.offset)
      .take(q.page.pageSize)
      .getManyAndCount();
    return paginated(rows.map(WorkflowResponse.of), total, q.page);
  }
}

@QueryHandler(GetWorkflowQuery)
export class GetWorkflowHandler implements IQueryHandler<GetWorkflowQuery> {
  constructor(private readonly db: DataSource) {}

  async execute(q: GetWorkflowQuery): Promise<WorkflowResponse> {
    const row = await this.db
      .getRepository(WorkflowEntity)
      .findOneBy({ id: q.workflowId, workspaceId: q.workspaceId });
    if (!row) throw new NotFoundError('Workflow not found');
    return withVersion(WorkflowResponse.of(row), row.version);
  }
}

/** A workspace's assignments; an External member or a caller without assignments:read sees its own. */
@QueryHandler(ListAssignmentsQuery)
export class ListAssignmentsHandler implements IQueryHandler<ListAssignmentsQuery> {
  constructor(
    private readonly db: DataSource,
    private readonly facts: WorkFacts,
  ) {}

  async execute(q: ListAssignmentsQuery): Promise<Paginated<AssignmentResponse>> {
    const visibility = assignmentVisibility(await this.facts.caller(q.workspaceId, q.caller));
    const qb = this.db
      .getRepository(AssignmentEntity)
      .createQueryBuilder('a')
      .where('a.workspace_id = :workspaceId', { workspaceId: q.workspaceId });
    if (!visibility.all) qb.andWhere('a.member_id = :self', { self: visibility.memberId });
    const { memberId, workflowId, status } = q.filters;
    if (memberId !== undefined) qb.andWhere('a.member_id = :memberId', { memberId });
    if (workflowId !== undefined) qb.andWhere('a.workflow_id = :workflowId', { workflowId });
    if (status !== undefined) qb.andWhere('a.status = :status', { status });
    const [rows, total] = await applyListFilters(qb, q.page, {
      search: ['a.workflow_name'],
      time: 'a.started_at',
    })
      .orderBy('a.id', 'ASC')
      .skip(q.page.offset)
      .take(q.page.pageSize)
      .getManyAndCount();
    return paginated(rows.map(AssignmentResponse.of), total, q.page);
  }
}

@QueryHandler(GetAssignmentQuery)
export class GetAssignmentHandler implements IQueryHandler<GetAssignmentQuery> {
  constructor(
    private readonly db: DataSource,
    private readonly facts: WorkFacts,
  ) {}

  async execute(q: GetAssignmentQuery): Promise<AssignmentResponse> {
    const row = await this.db
      .getRepository(AssignmentEntity)
      .findOneBy({ id: q.assignmentId, workspaceId: q.workspaceId });
    const visibility = assignmentVisibility(await this.facts.caller(q.workspaceId, q.caller));
    // Someone else's assignment is as absent as one that does not exist.
    if (!row || (!visibility.all && row.memberId !== visibility.memberId))
      throw new NotFoundError('Assignment not found');
    return withVersion(AssignmentResponse.of(row), row.version);
  }
}

/** A workspace's tasks; admin-only ones only for holders of assignments:admin. */
@QueryHandler(ListTasksQuery)
export class ListTasksHandler implements IQueryHandler<ListTasksQuery> {
  constructor(
    private readonly db: DataSource,
    private readonly facts: WorkFacts,
  ) {}

  async execute(q: ListTasksQuery): Promise<Paginated<TaskResponse>> {
    const caller = await this.facts.caller(q.workspaceId, q.caller);
    const qb = this.db
      .getRepository(TaskEntity)
      .createQueryBuilder('t')
      .where('t.workspace_id = :workspaceId', { workspaceId: q.workspaceId });
    if (!seesAdminTasks(caller)) qb.andWhere('t.is_admin = false');
    const { status, assignee, workflowId, priority } = q.filters;
    if (status !== undefined) qb.andWhere('t.status = :status', { status });
    if (priority !== undefined) qb.andWhere('t.priority = :priority', { priority });
    if (workflowId !== undefined) qb.andWhere('t.workflow_id = :workflowId', { workflowId });
    if (assignee !== undefined) qb.andWhere(':assignee = ANY(t.assignees)', { assignee });
    const [rows, total] = await applyListFilters(qb, q.page, {
      search: ['t.name', 't.title'],
      time: 't.created_at',
    })
      .orderBy('t.id', 'ASC')
      .skip(q.page.offset)
      .take(q.page.pageSize)
      .getManyAndCount();
    return paginated(rows.map(TaskResponse.of), total, q.page);
  }
}

@QueryHandler(GetTaskQuery)
export class GetTaskHandler implements IQueryHandler<GetTaskQuery> {
  constructor(
    private readonly db: DataSource,
    private readonly facts: WorkFacts,
  ) {}

  async execute(q: GetTaskQuery): Promise<TaskResponse> {
    const row = await this.db
      .getRepository(TaskEntity)
      .findOneBy({ id: q.taskId, workspaceId: q.workspaceId });
    if (!row) throw new NotFoundError('Task not found');
    assertMaySeeTask(await this.facts.caller(q.workspaceId, q.caller), row);
    return withVersion(TaskResponse.of(row), row.version);
  }
}
