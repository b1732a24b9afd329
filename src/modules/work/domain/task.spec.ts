import { ConflictError, NotFoundError, ValidationError } from '../../../core/http/domain-errors';
import { deciderSpec } from '../../../core/testing/decider-spec';
import { TaskCommand, taskDecider } from './task';
import { taskSlugClaims } from './task-slug-claim';
import type { TaskEvent, TaskSnapshot } from './work.events';

const spec = deciderSpec(taskDecider);
const ws = '0190a6c4-0000-7000-8000-000000000001';
const now = '2026-11-23T10:00:00.000Z';
const later = '2026-11-23T11:00:00.000Z';
const refs = { unknownAssignees: [], workflowExists: true };

const create = (over: Partial<Extract<TaskCommand, { type: 'CreateTask' }>> = {}): TaskCommand => ({
  type: 'CreateTask',
  taskId: 30,
  workspaceId: ws,
  name: ' Call back ',
  slug: 'call-back',
  description: 'About the referral',
  workflowId: 4,
  dueAt: '2026-11-24T09:00:00+01:00',
  assignees: [7, 8, 7],
  refs,
  now,
  ...over,
});

const task: TaskSnapshot = {
  id: 30,
  workspaceId: ws,
  name: 'Call back',
  title: 'Call back',
  slug: 'call-back',
  description: 'About the referral',
  workflowId: 4,
  isAdmin: false,
  status: 'open',
  priority: 'normal',
  dueAt: '2026-11-24T08:00:00.000Z',
  assignees: [7, 8],
  createdAt: now,
  updatedAt: now,
};
const created: TaskEvent = {
  type: 'TaskCreated',
  data: { taskId: 30, workspaceId: ws, task, createdAt: now },
};

const update = (over: Partial<Extract<TaskCommand, { type: 'UpdateTask' }>>): TaskCommand => ({
  type: 'UpdateTask',
  taskId: 30,
  workspaceId: ws,
  refs,
  now: later,
  ...over,
});

describe('task decider', () => {
  it('creates an open, normal-priority task titled by its name, with each assignee once and dueAt in UTC', () => {
    spec.given([]).when(create()).then([created]);
  });

  it('refuses bad slugs, priorities, unknown assignees and workflows, naming the field', () => {
    spec
      .given([])
      .when(create({ slug: 'Call Back' }))
      .thenThrows(ValidationError, /^slug:/);
    spec
      .given([])
      .when(create({ priority: 'asap' as never }))
      .thenThrows(ValidationError, /^priority: must be one of low, normal, high, urgent$/);
    spec
      .given([])
      .when(create({ refs: { unknownAssignees: [8], workflowExists: true } }))
      .thenThrows(ValidationError, /^assignees: 8 not an active member of this workspace$/);
    spec
      .given([])
      .when(create({ refs: { unknownAssignees: [], workflowExists: false } }))
      .thenThrows(ValidationError, /^workflowId: workflow 4 does not exist in this workspace$/);
    spec
      .given([])
      .when(create({ dueAt: 'tomorrow' }))
      .thenThrows(ValidationError, /^dueAt:/);
    spec.given([created]).when(create()).thenThrows(ConflictError);
  });

  it('updates what changes and carries the whole task; nothing changes, nothing is recorded', () => {
    spec
      .given([created])
      .when(update({ name: 'Call back', status: 'in_progress', priority: 'urgent', assignees: [8] }))
      .then([
        {
          type: 'TaskUpdated',
          data: {
            taskId: 30,
            workspaceId: ws,
            changes: { status: 'in_progress', priority: 'urgent', assignees: [8] },
            task: { ...task, status: 'in_progress', priority: 'urgent', assignees: [8], updatedAt: later },
            updatedAt: later,
          },
        },
      ]);
    spec
      .given([created])
      .when(update({ name: 'Call back', assignees: [7, 8] }))
      .then([]);
    spec
      .given([created])
      .when(update({ status: 'closed' as never }))
      .thenThrows(ValidationError, /^status:/);
  });

  it('keeps an assignee archived since it was assigned, but assigns no archived member anew', () => {
    // Member 8 was archived after being assigned: sending the list back with a change is fine.
    const archived8 = { unknownAssignees: [8], workflowExists: true };
    spec
      .given([created])
      .when(update({ status: 'done', assignees: [7, 8], refs: archived8 }))
      .then([
        {
          type: 'TaskUpdated',
          data: {
            taskId: 30,
            workspaceId: ws,
            changes: { status: 'done' },
            task: { ...task, status: 'done', updatedAt: later },
            updatedAt: later,
          },
        },
      ]);
    spec
      .given([created])
      .when(update({ assignees: [7, 8, 9], refs: { unknownAssignees: [8, 9], workflowExists: true } }))
      .thenThrows(ValidationError, /^assignees: 9 not an active member of this workspace$/);
  });

  it('deletes a live task, releasing its slug; a deleted or foreign task is not found', () => {
    const deleted: TaskEvent = {
      type: 'TaskDeleted',
      data: { taskId: 30, workspaceId: ws, slug: 'call-back', deletedAt: later },
    };
    spec
      .given([created])
      .when({ type: 'DeleteTask', taskId: 30, workspaceId: ws, now: later })
      .then([deleted]);
    spec
      .given([created, deleted])
      .when(update({ name: 'X' }))
      .thenThrows(NotFoundError);
    spec
      .given([created])
      .when(update({ workspaceId: '0190a6c4-0000-7000-8000-000000000002', name: 'X' }))
      .thenThrows(NotFoundError);
    expect(
      taskSlugClaims([deleted as Extract<TaskEvent, { type: 'TaskDeleted' }>], { status: 'live', task }),
    ).toMatchObject({
      take: [],
      release: [{ scope: ws, value: 'call-back' }],
    });
    expect(taskSlugClaims([created], { status: 'none' })).toMatchObject({
      take: [{ scope: ws, value: 'call-back' }],
      release: [],
    });
    expect(
      taskSlugClaims([{ ...created, data: { ...created.data, task: { ...task, slug: null } } }], {
        status: 'none',
      }),
    ).toEqual({
      take: [],
      release: [],
    });
  });
});
