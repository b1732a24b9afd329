import { Module } from '@nestjs/common';
import { Feature } from '../../core/features/feature';
import { SetAssignmentStatusHandler, StartAssignmentHandler } from './commands/assignment.commands';
import { CreateTaskHandler, DeleteTaskHandler, UpdateTaskHandler } from './commands/task.commands';
import { WorkFacts } from './commands/work-facts';
import {
  CreateWorkflowHandler,
  DeleteWorkflowHandler,
  UpdateWorkflowHandler,
} from './commands/workflow.commands';
import { WORK_PUBLIC_EVENTS } from './domain/work.public-events';
import { AssignmentsController } from './http/assignments.controller';
import { TasksController } from './http/tasks.controller';
import { WorkflowsController } from './http/workflows.controller';
import { AssignmentsProjection } from './projections/assignments.projection';
import { TasksProjection } from './projections/tasks.projection';
import { AssignmentEntity, TaskEntity, WorkflowEntity } from './projections/work.entities';
import { WorkflowsProjection } from './projections/workflows.projection';
import {
  GetAssignmentHandler,
  GetTaskHandler,
  GetWorkflowHandler,
  ListAssignmentsHandler,
  ListTasksHandler,
  ListWorkflowsHandler,
} from './queries/work.queries';
import { WorkTables1764000007100 } from './work.migration';

/**
 * Work: workflows (with their Member Role Gate), the assignments that run a workflow for a
 * member, and tasks. One room, because starting an assignment decides on the workflow's
 * own stream (its gate) and tasks refer to workflows: all three are one part of the spec.
 */
@Feature({
  name: 'work',
  entities: [WorkflowEntity, AssignmentEntity, TaskEntity],
  migrations: [WorkTables1764000007100],
  versionedResources: ['workflows', 'assignments', 'tasks'],
  publicEvents: WORK_PUBLIC_EVENTS,
})
@Module({
  controllers: [WorkflowsController, AssignmentsController, TasksController],
  providers: [
    WorkFacts,
    WorkflowsProjection,
    AssignmentsProjection,
    TasksProjection,
    CreateWorkflowHandler,
    UpdateWorkflowHandler,
    DeleteWorkflowHandler,
    StartAssignmentHandler,
    SetAssignmentStatusHandler,
    CreateTaskHandler,
    UpdateTaskHandler,
    DeleteTaskHandler,
    ListWorkflowsHandler,
    GetWorkflowHandler,
    ListAssignmentsHandler,
    GetAssignmentHandler,
    ListTasksHandler,
    GetTaskHandler,
  ],
})
export class WorkModule {}

declare module '../../core/features/feature' {
  interface VersionedTables {
    workflows: true;
    assignments: true;
    tasks: true;
  }
}
