import { ClaimPlan, ClaimRef, ClaimTakenError, defineClaimKind } from '../../../core/claims/claims';
import { fold } from '../../../core/cqrs/decider';
import { ConflictError } from '../../../core/http/domain-errors';
import { taskDecider, TaskState } from './task';
import type { TaskEvent } from './work.events';

/**
 * A task's slug is unique per workspace (issue 10 item 4): the task holds a core claim
 * (scope: the workspace, value: the slug) taken with TaskCreated and released with
 * TaskDeleted, so two racing creates with one slug make one task.
 */
export const TASK_SLUG_CLAIM = defineClaimKind({
  name: 'task_slug',
  holds(events, value, scope) {
    const state = fold(taskDecider, events as TaskEvent[]);
    return state.status === 'live' && state.task.workspaceId === scope && state.task.slug === value;
  },
});

const claimOf = (workspaceId: string, slug: string): ClaimRef => ({
  scope: workspaceId,
  kind: TASK_SLUG_CLAIM,
  value: slug,
});

/** The claims the decided events take and give up. */
export function taskSlugClaims(events: readonly TaskEvent[], _before: TaskState): ClaimPlan {
  const take: ClaimRef[] = [];
  const release: ClaimRef[] = [];
  for (const e of events) {
    if (e.type === 'TaskCreated' && e.data.task.slug !== null)
      take.push(claimOf(e.data.workspaceId, e.data.task.slug));
    if (e.type === 'TaskDeleted' && e.data.slug !== null)
      release.push(claimOf(e.data.workspaceId, e.data.slug));
  }
  return { take, release };
}

/**
 * The 409 of a slug another task of the workspace holds. It names no holder: the holder may
 * be an admin-only task, whose id a caller without assignments:admin must not learn.
 */
export function taskSlugConflict(_error: ClaimTakenError, slug: string): ConflictError {
  return new ConflictError(`slug: another task of this workspace already has the slug "${slug}"`);
}
