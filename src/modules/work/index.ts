/**
 * The work feature's public surface: what other features may use (event types, stream
 * names, the public events). Everything else under modules/work is internal
 * (src/app.features.spec.ts enforces it).
 */
export { assignmentStream, taskStream, workflowStream } from './domain/work.events';
export type {
  AssignmentEvent,
  AssignmentSnapshot,
  RoleGate,
  TaskEvent,
  TaskSnapshot,
  WorkflowEvent,
} from './domain/work.events';
export { TASK_CREATED, TASK_UPDATED, WORKFLOW_COMPLETED, WORKFLOW_FAILED } from './domain/work.public-events';
export type { TaskPayload, WorkflowRunPayload } from './domain/work.public-events';
export { StartAssignmentCommand } from './commands/start-assignment.command';
export type { StartAssignmentCaller } from './commands/start-assignment.command';
/** For the MCP endpoint's tools (tasks.*): what the task routes run. */
export { CreateTaskCommand, UpdateTaskCommand } from './commands/task.commands';
export { GetTaskQuery, ListTasksQuery } from './queries/work.queries';
export { CreateTaskDto, ListTasksQueryDto, UpdateTaskDto } from './http/task.dto';
export { callerOf as workCallerOf } from './http/caller';
export { pathIdOf as workPathId } from './http/work-validation';
