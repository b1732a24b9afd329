import { definePublicEvent } from '../../../core/events/public-events';
import type {
  AssignmentCompleted,
  AssignmentFailed,
  AssignmentSnapshot,
  TaskCreated,
  TaskSnapshot,
  TaskUpdated,
} from './work.events';

/** The `task` block of task.created / task.updated: the task as it now stands. */
export interface TaskBlock {
  id: number;
  name: string;
  title: string;
  slug: string | null;
  description: string | null;
  workflowId: number | null;
  isAdmin: boolean;
  status: TaskSnapshot['status'];
  priority: TaskSnapshot['priority'];
  dueAt: string | null;
  assignees: number[];
  createdAt: string;
  updatedAt: string;
}

export interface TaskPayload {
  task: TaskBlock;
}

/** The `assignment` and `workflow` blocks of workflow.completed / workflow.failed. */
export interface AssignmentBlock {
  id: number;
  workflowId: number;
  workflowUuid: string;
  memberId: number;
  status: AssignmentSnapshot['status'];
  startedAt: string;
  completedAt: string | null;
}

export interface WorkflowRunPayload {
  assignment: AssignmentBlock;
  workflow: { id: number; uuid: string; name: string };
}

export function taskBlock(t: TaskSnapshot): TaskBlock {
  return {
    id: t.id,
    name: t.name,
    title: t.title,
    slug: t.slug,
    description: t.description,
    workflowId: t.workflowId,
    isAdmin: t.isAdmin,
    status: t.status,
    priority: t.priority,
    dueAt: t.dueAt,
    assignees: [...t.assignees],
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
  };
}

function workflowRun(a: AssignmentSnapshot): WorkflowRunPayload {
  return {
    assignment: {
      id: a.id,
      workflowId: a.workflowId,
      workflowUuid: a.workflowUuid,
      memberId: a.memberId,
      status: a.status,
      startedAt: a.startedAt,
      completedAt: a.completedAt,
    },
    workflow: { id: a.workflowId, uuid: a.workflowUuid, name: a.workflowName },
  };
}

export const TASK_CREATED = definePublicEvent<'task.created', TaskPayload, TaskCreated>({
  name: 'task.created',
  description: 'new task created',
  feature: 'work',
  sources: ['TaskCreated'],
  payloadFields: ['task'],
  payload: (event) => ({ task: taskBlock(event.data.task) }),
});

export const TASK_UPDATED = definePublicEvent<'task.updated', TaskPayload, TaskUpdated>({
  name: 'task.updated',
  description: 'task updated (name, description, status, priority, due date or assignees)',
  feature: 'work',
  sources: ['TaskUpdated'],
  payloadFields: ['task'],
  payload: (event) => ({ task: taskBlock(event.data.task) }),
});

export const WORKFLOW_COMPLETED = definePublicEvent<
  'workflow.completed',
  WorkflowRunPayload,
  AssignmentCompleted
>({
  name: 'workflow.completed',
  description: "a workflow's assignment for a member completed",
  feature: 'work',
  sources: ['AssignmentCompleted'],
  payloadFields: ['assignment', 'workflow'],
  payload: (event) => workflowRun(event.data.assignment),
});

export const WORKFLOW_FAILED = definePublicEvent<'workflow.failed', WorkflowRunPayload, AssignmentFailed>({
  name: 'workflow.failed',
  description: "a workflow's assignment for a member failed",
  feature: 'work',
  sources: ['AssignmentFailed'],
  payloadFields: ['assignment', 'workflow'],
  payload: (event) => workflowRun(event.data.assignment),
});

/** The public events of this feature, for its @Feature descriptor. */
export const WORK_PUBLIC_EVENTS = [TASK_CREATED, TASK_UPDATED, WORKFLOW_COMPLETED, WORKFLOW_FAILED];
