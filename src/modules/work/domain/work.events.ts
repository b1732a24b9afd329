/**
 * The events of the work feature: workflows, the assignments that run them for a member,
 * and tasks. Plain typed objects, one union per aggregate; message files like this one
 * load nothing of the feature's internals, so index.ts can export them.
 */

export const workflowStream = (id: number): string => `workflow-${id}`;
export const assignmentStream = (id: number): string => `assignment-${id}`;
export const taskStream = (id: number): string => `task-${id}`;

/** Member Role Gate: only holders of these roles may start the workflow; others read `message`. */
export interface RoleGate {
  roleIds: number[];
  message: string;
}

export interface WorkflowCreated {
  type: 'WorkflowCreated';
  data: {
    workflowId: number;
    uuid: string;
    workspaceId: string;
    name: string;
    agentId: number;
    defaultPhoneNumberId: number | null;
    roleGate: RoleGate | null;
    createdAt: string;
  };
}

export interface WorkflowChanges {
  name?: string;
  agentId?: number;
  defaultPhoneNumberId?: number | null;
  roleGate?: RoleGate | null;
}

export interface WorkflowUpdated {
  type: 'WorkflowUpdated';
  data: { workflowId: number; workspaceId: string; changes: WorkflowChanges; updatedAt: string };
}

export interface WorkflowDeleted {
  type: 'WorkflowDeleted';
  data: { workflowId: number; workspaceId: string; deletedAt: string };
}

export type WorkflowEvent = WorkflowCreated | WorkflowUpdated | WorkflowDeleted;

export const ASSIGNMENT_STATUSES = ['active', 'completed', 'failed', 'cancelled'] as const;
export type AssignmentStatus = (typeof ASSIGNMENT_STATUSES)[number];

/** The assignment as it stands after an event: what workflow.completed / workflow.failed carry. */
export interface AssignmentSnapshot {
  id: number;
  workspaceId: string;
  workflowId: number;
  workflowUuid: string;
  /** The workflow's name when the assignment started. */
  workflowName: string;
  memberId: number;
  status: AssignmentStatus;
  startedAt: string;
  completedAt: string | null;
}

export interface AssignmentStarted {
  type: 'AssignmentStarted';
  data: { assignmentId: number; workspaceId: string; assignment: AssignmentSnapshot; startedAt: string };
}

interface AssignmentEnded<T extends string> {
  type: T;
  data: { assignmentId: number; workspaceId: string; assignment: AssignmentSnapshot; completedAt: string };
}

export type AssignmentCompleted = AssignmentEnded<'AssignmentCompleted'>;
export type AssignmentFailed = AssignmentEnded<'AssignmentFailed'>;
export type AssignmentCancelled = AssignmentEnded<'AssignmentCancelled'>;

export type AssignmentEvent =
  AssignmentStarted | AssignmentCompleted | AssignmentFailed | AssignmentCancelled;

export const TASK_STATUSES = ['open', 'in_progress', 'done', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export const TASK_PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
export type TaskPriority = (typeof TASK_PRIORITIES)[number];

/** The task as it stands after an event: what task.created / task.updated carry. */
export interface TaskSnapshot {
  id: number;
  workspaceId: string;
  name: string;
  title: string;
  slug: string | null;
  description: string | null;
  workflowId: number | null;
  isAdmin: boolean;
  status: TaskStatus;
  priority: TaskPriority;
  dueAt: string | null;
  assignees: number[];
  createdAt: string;
  updatedAt: string;
}

export interface TaskChanges {
  name?: string;
  title?: string;
  description?: string | null;
  status?: TaskStatus;
  priority?: TaskPriority;
  dueAt?: string | null;
  assignees?: number[];
}

export interface TaskCreated {
  type: 'TaskCreated';
  data: { taskId: number; workspaceId: string; task: TaskSnapshot; createdAt: string };
}

export interface TaskUpdated {
  type: 'TaskUpdated';
  data: { taskId: number; workspaceId: string; changes: TaskChanges; task: TaskSnapshot; updatedAt: string };
}

export interface TaskDeleted {
  type: 'TaskDeleted';
  data: { taskId: number; workspaceId: string; slug: string | null; deletedAt: string };
}

export type TaskEvent = TaskCreated | TaskUpdated | TaskDeleted;
