import { Decider } from '../../../core/cqrs/decider';
import { requiredText } from '../../../core/cqrs/fields';
import { ConflictError, NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { parseDateTime } from '../../../core/http/pagination';
import {
  TASK_PRIORITIES,
  TASK_STATUSES,
  TaskChanges,
  TaskEvent,
  TaskPriority,
  TaskSnapshot,
  TaskStatus,
} from './work.events';

export const TASK_NAME_MAX = 200;
export const TASK_DESCRIPTION_MAX = 10_000;
export const TASK_SLUG_MAX = 100;
export const TASK_MAX_ASSIGNEES = 100;
/** Lower-case letters, digits, `-` and `_`, starting with a letter or digit. */
export const TASK_SLUG_PATTERN = /^[a-z0-9][a-z0-9_-]*$/;

export interface TaskInput {
  name: string;
  title?: string;
  slug?: string | null;
  description?: string | null;
  workflowId?: number | null;
  isAdmin?: boolean;
  priority?: TaskPriority;
  dueAt?: string | null;
  assignees?: number[];
}

/**
 * Facts the handler found: assignee ids that are no active member of the workspace, and
 * whether the workflow named exists there.
 */
export interface TaskReferences {
  unknownAssignees: number[];
  workflowExists: boolean;
}

export type TaskCommand =
  | ({ type: 'CreateTask'; taskId: number; workspaceId: string; now: string } & TaskInput & {
        refs: TaskReferences;
      })
  | ({ type: 'UpdateTask'; taskId: number; workspaceId: string; now: string } & TaskChanges & {
        refs: TaskReferences;
      })
  | { type: 'DeleteTask'; taskId: number; workspaceId: string; now: string };

export type TaskState = { status: 'none' } | { status: 'live'; task: TaskSnapshot } | { status: 'deleted' };

function description(raw: string | null | undefined): string | null {
  if (raw === undefined || raw === null) return null;
  if (raw.length > TASK_DESCRIPTION_MAX)
    throw new ValidationError(`description: must be at most ${TASK_DESCRIPTION_MAX} characters`);
  return raw;
}

function slugOf(raw: string | null | undefined): string | null {
  if (raw === undefined || raw === null) return null;
  if (raw.length > TASK_SLUG_MAX || !TASK_SLUG_PATTERN.test(raw))
    throw new ValidationError(
      `slug: must be 1-${TASK_SLUG_MAX} lower-case letters, digits, "-" or "_", starting with a letter or digit`,
    );
  return raw;
}

function oneOf<T extends string>(field: string, value: T, allowed: readonly T[]): T {
  if (!allowed.includes(value)) throw new ValidationError(`${field}: must be one of ${allowed.join(', ')}`);
  return value;
}

function dueAtOf(raw: string | null | undefined): string | null {
  if (raw === undefined || raw === null) return null;
  const parsed = parseDateTime(raw);
  if (!parsed) throw new ValidationError('dueAt: must be an ISO 8601 date-time with an offset');
  return new Date(Number(parsed.epochNanos / 1_000_000n)).toISOString();
}

/**
 * Assignees in the caller's order, repeats dropped. A member newly assigned must be an
 * active member of the workspace; one already assigned stays even if archived since, so a
 * client that sends back the list it read (plus a change) is not refused for it.
 */
function assigneesOf(
  ids: readonly number[],
  refs: TaskReferences,
  alreadyAssigned: readonly number[] = [],
): number[] {
  const unique = [...new Set(ids)];
  if (unique.length > TASK_MAX_ASSIGNEES)
    throw new ValidationError(`assignees: at most ${TASK_MAX_ASSIGNEES} members`);
  const unknown = unique.filter((id) => refs.unknownAssignees.includes(id) && !alreadyAssigned.includes(id));
  if (unknown.length)
    throw new ValidationError(`assignees: ${unknown.join(', ')} not an active member of this workspace`);
  return unique;
}

const sameList = (a: readonly number[], b: readonly number[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

function liveTask(state: TaskState, workspaceId: string): TaskSnapshot {
  if (state.status !== 'live' || state.task.workspaceId !== workspaceId)
    throw new NotFoundError('Task not found');
  return state.task;
}

export const taskDecider: Decider<TaskState, TaskCommand, TaskEvent> = {
  initialState: () => ({ status: 'none' }),

  evolve(_state, event) {
    switch (event.type) {
      case 'TaskCreated':
      case 'TaskUpdated':
        return { status: 'live', task: event.data.task };
      case 'TaskDeleted':
        return { status: 'deleted' };
    }
  },

  decide(command, state) {
    switch (command.type) {
      case 'CreateTask': {
        if (state.status !== 'none') throw new ConflictError('A task with this id already exists');
        const name = requiredText('name', command.name, TASK_NAME_MAX);
        const workflowId = command.workflowId ?? null;
        if (workflowId !== null && !command.refs.workflowExists)
          throw new ValidationError(`workflowId: workflow ${workflowId} does not exist in this workspace`);
        const task: TaskSnapshot = {
          id: command.taskId,
          workspaceId: command.workspaceId,
          name,
          // A task is "a work item with title" (SPEC "Task"): the name unless a title is given.
          title: command.title === undefined ? name : requiredText('title', command.title, TASK_NAME_MAX),
          slug: slugOf(command.slug),
          description: description(command.description),
          workflowId,
          isAdmin: command.isAdmin ?? false,
          status: 'open',
          priority: oneOf('priority', command.priority ?? 'normal', TASK_PRIORITIES),
          dueAt: dueAtOf(command.dueAt),
          assignees: assigneesOf(command.assignees ?? [], command.refs),
          createdAt: command.now,
          updatedAt: command.now,
        };
        return [
          {
            type: 'TaskCreated',
            data: { taskId: command.taskId, workspaceId: command.workspaceId, task, createdAt: command.now },
          },
        ];
      }
      case 'UpdateTask': {
        const task = liveTask(state, command.workspaceId);
        const changes: TaskChanges = {};
        if (command.name !== undefined) {
          const name = requiredText('name', command.name, TASK_NAME_MAX);
          if (name !== task.name) changes.name = name;
        }
        if (command.title !== undefined) {
          const title = requiredText('title', command.title, TASK_NAME_MAX);
          if (title !== task.title) changes.title = title;
        }
        if (command.description !== undefined) {
          const d = description(command.description);
          if (d !== task.description) changes.description = d;
        }
        if (command.status !== undefined) {
          const status: TaskStatus = oneOf('status', command.status, TASK_STATUSES);
          if (status !== task.status) changes.status = status;
        }
        if (command.priority !== undefined) {
          const priority = oneOf('priority', command.priority, TASK_PRIORITIES);
          if (priority !== task.priority) changes.priority = priority;
        }
        if (command.dueAt !== undefined) {
          const dueAt = dueAtOf(command.dueAt);
          if (dueAt !== task.dueAt) changes.dueAt = dueAt;
        }
        if (command.assignees !== undefined) {
          const assignees = assigneesOf(command.assignees, command.refs, task.assignees);
          if (!sameList(assignees, task.assignees)) changes.assignees = assignees;
        }
        if (!Object.keys(changes).length) return [];
        return [
          {
            type: 'TaskUpdated',
            data: {
              taskId: command.taskId,
              workspaceId: command.workspaceId,
              changes,
              task: { ...task, ...changes, updatedAt: command.now },
              updatedAt: command.now,
            },
          },
        ];
      }
      case 'DeleteTask': {
        const task = liveTask(state, command.workspaceId);
        return [
          {
            type: 'TaskDeleted',
            data: {
              taskId: command.taskId,
              workspaceId: command.workspaceId,
              slug: task.slug,
              deletedAt: command.now,
            },
          },
        ];
      }
    }
  },
};
