import { FEATURES } from '../../../app.module';
import { PublicEventCatalogue } from '../../../core/events/public-events';
import { featureOf } from '../../../core/features/feature';
import type { AssignmentEvent, AssignmentSnapshot, TaskEvent, TaskSnapshot } from './work.events';

const catalogue = new PublicEventCatalogue(FEATURES.flatMap((f) => featureOf(f).publicEvents ?? []));
const ws = '0190a6c4-0000-7000-8000-000000000001';

const task: TaskSnapshot = {
  id: 30,
  workspaceId: ws,
  name: 'Call back',
  title: 'Call back',
  slug: 'call-back',
  description: null,
  workflowId: 4,
  isAdmin: false,
  status: 'open',
  priority: 'high',
  dueAt: null,
  assignees: [7],
  createdAt: '2026-11-23T10:00:00.000Z',
  updatedAt: '2026-11-23T10:00:00.000Z',
};

const assignment: AssignmentSnapshot = {
  id: 20,
  workspaceId: ws,
  workflowId: 4,
  workflowUuid: '0190a6c4-0000-7000-8000-0000000000f4',
  workflowName: 'Intake',
  memberId: 7,
  status: 'completed',
  startedAt: '2026-11-23T10:00:00.000Z',
  completedAt: '2026-11-23T10:30:00.000Z',
};

describe('public events of work', () => {
  it('makes task.created and task.updated from TaskCreated and TaskUpdated, with the task block', () => {
    const { workspaceId: _ws, ...block } = task;
    const created: TaskEvent = {
      type: 'TaskCreated',
      data: { taskId: 30, workspaceId: ws, task, createdAt: task.createdAt },
    };
    expect(catalogue.fromSource('TaskCreated').map((d) => d.name)).toEqual(['task.created']);
    expect(catalogue.get('task.created')!.payload(created)).toEqual({ task: block });
    const updated: TaskEvent = {
      type: 'TaskUpdated',
      data: {
        taskId: 30,
        workspaceId: ws,
        changes: { status: 'done' },
        task: { ...task, status: 'done' },
        updatedAt: task.updatedAt,
      },
    };
    expect(catalogue.fromSource('TaskUpdated').map((d) => d.name)).toEqual(['task.updated']);
    expect(catalogue.get('task.updated')!.payload(updated)).toEqual({ task: { ...block, status: 'done' } });
  });

  it('makes workflow.completed and workflow.failed from the end of an assignment, with assignment and workflow blocks', () => {
    const completed: AssignmentEvent = {
      type: 'AssignmentCompleted',
      data: { assignmentId: 20, workspaceId: ws, assignment, completedAt: assignment.completedAt! },
    };
    expect(catalogue.fromSource('AssignmentCompleted').map((d) => d.name)).toEqual(['workflow.completed']);
    expect(catalogue.get('workflow.completed')!.payload(completed)).toEqual({
      assignment: {
        id: 20,
        workflowId: 4,
        workflowUuid: assignment.workflowUuid,
        memberId: 7,
        status: 'completed',
        startedAt: assignment.startedAt,
        completedAt: assignment.completedAt,
      },
      workflow: { id: 4, uuid: assignment.workflowUuid, name: 'Intake' },
    });
    expect(catalogue.fromSource('AssignmentFailed').map((d) => d.name)).toEqual(['workflow.failed']);
    expect(catalogue.get('workflow.failed')).toMatchObject({
      feature: 'work',
      payloadFields: ['assignment', 'workflow'],
    });
    expect(catalogue.fromSource('AssignmentCancelled')).toEqual([]);
  });
});
